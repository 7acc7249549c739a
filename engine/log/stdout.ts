// stdout for the log, written once per turn of the event loop rather than once per line: a busy
// server answers several requests in one turn, and their lines go out in one system call (a write
// a line cost about 3 µs of a small request's 120 µs of CPU). A line waits at most until the end
// of the turn it was written in. What would be needed to explain a failure is never held: a line
// at error level or above is written at once (with what was held before it), a flush empties the
// hold, and so does the process's exit (process.exit and an uncaught exception included). Lost are
// only the held lines of a process that ends without exiting: killed outright (SIGKILL, a signal
// it does not handle) or aborted (out of memory).
//
// Cluster workers share one stdout: a write of at most PIPE_BUF bytes to a pipe is never mixed
// with another process's, so a batch is kept within that, and a longer line goes out alone, as
// every line did before.
import pino from 'pino';

/** POSIX's PIPE_BUF on Linux: the largest write to a pipe that no other writer can split. */
const ATOMIC_WRITE_BYTES = 4096;
/** A line whose level is error or above starts with this (log.ts writes the level by name). */
const URGENT = /^\{"level":"(error|fatal)"/;

export interface HeldStdout extends pino.DestinationStream {
  /** Writes what is held now. */
  flushSync(): void;
  /** pino's flush (logger.flush()): writes what is held, then calls back. */
  flush(callback?: (err?: Error) => void): void;
}

export function stdoutByTurn(): HeldStdout {
  // sonic-boom writes (and retries a full pipe); its own buffering is not used: its flushSync
  // also fsyncs, a disk flush on every turn when stdout is a file.
  const out = pino.destination({ dest: 1, sync: true });
  let held = '';
  let heldBytes = 0;
  let exiting = false;
  const flushSync = () => {
    if (!held) return;
    const lines = held;
    held = '';
    heldBytes = 0;
    out.write(lines);
  };
  process.once('exit', () => {
    exiting = true;
    flushSync();
  });
  return {
    write(line: string) {
      const bytes = Buffer.byteLength(line);
      if (heldBytes + bytes > ATOMIC_WRITE_BYTES) flushSync();
      if (!held) setImmediate(flushSync);
      held += line;
      heldBytes += bytes;
      // Once exiting, no later turn comes: what exit listeners log goes out at once.
      if (exiting || bytes >= ATOMIC_WRITE_BYTES || URGENT.test(line)) flushSync();
    },
    flushSync,
    flush(callback) {
      flushSync();
      callback?.();
    },
  };
}
