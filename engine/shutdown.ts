// How long stopping may take, shared by a serving process and a cluster's primary.

/** How long open requests may take to finish after SIGTERM before their connections are cut. */
export const SHUTDOWN_GRACE_MS = 10_000;
/** How long a cluster's primary waits beyond that grace for its workers to close their databases and exit. */
export const STOP_MARGIN_MS = 5_000;
