// One JSON line per event on stdout: what the server and the parts it starts have to say.
export type LogLevel = 'info' | 'warn' | 'error';
export type LogEvent = (level: LogLevel, msg: string, extra?: Record<string, unknown>) => void;

export const logEvent: LogEvent = (level, msg, extra = {}) =>
  console.log(JSON.stringify({ level, time: new Date().toISOString(), msg, ...extra }));

/** Resident memory of this process in MiB, for the log lines a reader compares processes by. */
export const rssMiB = () => Math.round(process.memoryUsage.rss() / 104_857.6) / 10;
