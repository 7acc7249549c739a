// What a cluster's workers tell their primary beyond what node:cluster itself says.

/** A worker could not start; `message` is what a person reads (the primary prints it once). */
export interface StartupFailed {
  startupFailed: string;
}

/** A worker listens, and has said so in the log (so the primary's own line comes after it). */
export interface Serving {
  serving: { port: number };
}

export const isStartupFailed = (message: unknown): message is StartupFailed =>
  typeof (message as StartupFailed | undefined)?.startupFailed === 'string';

export const isServing = (message: unknown): message is Serving => typeof (message as Serving | undefined)?.serving?.port === 'number';

/** A stopping worker has closed its listener (sent after node:cluster's own notice of it, so the primary has seen that first). */
export interface StoppedAccepting {
  stoppedAccepting: true;
}

/** The primary to its stopping workers: no worker accepts connections any more, the port is closed. */
export interface PortClosed {
  portClosed: true;
}

export const isStoppedAccepting = (message: unknown): message is StoppedAccepting => (message as StoppedAccepting | undefined)?.stoppedAccepting === true;

export const isPortClosed = (message: unknown): message is PortClosed => (message as PortClosed | undefined)?.portClosed === true;
