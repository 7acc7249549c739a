// A worker's side of starting: it tells its primary whether it serves. The primary decides what a
// failure means (stop the cluster on a first start, retry later on a replacement) and prints it,
// so that N workers failing alike do not say it N times.
import { exitWithStartupFailure } from './startup-failure.js';
import { isPortClosed, type Serving, type StartupFailed, type StoppedAccepting } from './messages.js';

/** If the channel is gone, the message would never arrive: exit anyway after this long. */
const SEND_LIMIT_MS = 2000;

export function reportStartupFailure(message: string): void {
  const exit = () => process.exit(1);
  if (!process.send || !process.connected) exitWithStartupFailure(message);
  setTimeout(exit, SEND_LIMIT_MS).unref();
  process.send({ startupFailed: message } satisfies StartupFailed, exit);
}

export function reportServing(port: number): void {
  if (process.connected) process.send!({ serving: { port } } satisfies Serving);
}

/** How long a stopping worker waits for its primary to say the port is closed before going on without it. */
const PORT_CLOSED_WAIT_MS = 1000;

/**
 * A stopping worker has closed its listener: tells the primary, and resolves when the primary says
 * no worker accepts connections any more (at once if the primary is gone, after a while if it
 * does not answer). Until then the worker's answers keep their connections alive (http/stoppable-server.ts).
 */
export function portClosed(): Promise<void> {
  if (!process.send || !process.connected) return Promise.resolve();
  return new Promise((resolve) => {
    const done = () => {
      clearTimeout(timer);
      process.off('message', onMessage);
      process.off('disconnect', done);
      resolve();
    };
    const onMessage = (message: unknown) => {
      if (isPortClosed(message)) done();
    };
    const timer = setTimeout(done, PORT_CLOSED_WAIT_MS);
    process.on('message', onMessage);
    process.once('disconnect', done);
    process.send!({ stoppedAccepting: true } satisfies StoppedAccepting, (err: Error | null) => err && done());
  });
}
