// A time limit on something the process waits for (a health probe's query, closing connections at
// shutdown): the promise, or an error saying what did not finish in time. The work itself is not
// cancelled; the caller just stops waiting for it.

/** `promise`, or an error saying that `what` did not finish within `ms`. */
export function within<T>(promise: Promise<T>, ms: number, what: string): Promise<T> {
  let timer: NodeJS.Timeout;
  const late = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`${what} did not finish within ${ms} ms`)), ms);
  });
  return Promise.race([promise, late]).finally(() => clearTimeout(timer));
}
