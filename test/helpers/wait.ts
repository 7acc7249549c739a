// Waiting for an event the test needs (a log line written, a count taken, a client served), by
// asking until it has happened: never a fixed sleep that guesses how long it takes. The limit only
// ends a wait that would otherwise hang; it is not a timing the test asserts.

/** Resolves once `happened()` is true, asked every `everyMs`; throws naming `what` after `limitMs`. */
export async function waitFor(happened: () => boolean | Promise<boolean>, what: string, limitMs = 30_000, everyMs = 20): Promise<void> {
  const deadline = Date.now() + limitMs;
  while (!(await happened())) {
    if (Date.now() > deadline) throw new Error(`${what}: not within ${limitMs} ms`);
    await new Promise((resolve) => setTimeout(resolve, everyMs));
  }
}
