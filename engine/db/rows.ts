// The rows of a raw statement: pg answers { rows }, PGlite's knex client the rows themselves.

/** Rows of a raw select, on PostgreSQL and on the embedded database. */
export const rowsOf = <T = any>(result: unknown): T[] => ((result as { rows?: T[] }).rows ?? (result as T[])) ?? [];
