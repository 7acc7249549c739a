// How long stopping may take, shared by a serving process (serving.ts, whose HTTP server stops as
// http/stoppable-server.ts says) and a cluster's primary (primary.ts). The grace period itself is
// SHUTDOWN_GRACE_MS (config.shutdownGraceMs).

/** How long a serving process may take to close what it opened (database, Redis, mail) once its connections are closed. */
export const CLOSE_LIMIT_MS = 4_000;
/** How long a cluster's primary waits beyond the grace period for its workers to close and exit (then they are killed). */
export const STOP_MARGIN_MS = CLOSE_LIMIT_MS + 1_000;
