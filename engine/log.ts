// One JSON line per event on stdout: what the server and the parts it starts have to say.
export type LogLevel = 'info' | 'warn' | 'error';
export type LogEvent = (level: LogLevel, msg: string, extra?: Record<string, unknown>) => void;

export const logEvent: LogEvent = (level, msg, extra = {}) =>
  console.log(JSON.stringify({ level, time: new Date().toISOString(), msg, ...extra }));
