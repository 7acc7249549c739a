// A worker's side of starting: it tells its primary whether it serves. The primary decides what a
// failure means (stop the cluster on a first start, retry later on a replacement) and prints it,
// so that N workers failing alike do not say it N times.
import type { Serving, StartupFailed } from './messages.js';

/** If the channel is gone, the message would never arrive: exit anyway after this long. */
const SEND_LIMIT_MS = 2000;

export function reportStartupFailure(message: string): void {
  const exit = () => process.exit(1);
  if (!process.send || !process.connected) {
    console.error(message);
    return exit();
  }
  setTimeout(exit, SEND_LIMIT_MS).unref();
  process.send({ startupFailed: message } satisfies StartupFailed, exit);
}

export function reportServing(port: number): void {
  if (process.connected) process.send!({ serving: { port } } satisfies Serving);
}
