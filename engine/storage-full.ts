// A full disk (or an exhausted quota) is not a bug: the write is answered 503, reads go on, and
// writes succeed again by themselves once there is room. Recognised wherever it comes from:
// PostgreSQL's disk_full (53100), the embedded database's guard, or a file written by the service.
import { HttpError } from './errors.js';

export const STORAGE_FULL_MESSAGE = 'The server is out of storage space; try again later';

/** The embedded database refused a write before its disk filled (engine/db/embedded.ts). */
export class StorageFullError extends Error {
  /** PostgreSQL's disk_full, so that it is mapped like the database's own. */
  readonly code = '53100';
  /** What an operator reads (knex puts the SQL in front of `message`; this stays as it is). */
  readonly detail: string;
  constructor(dir: string, freeBytes: number, minFreeBytes: number) {
    const mib = (bytes: number) => Math.floor(bytes / (1024 * 1024));
    const detail =
      `The disk of the data folder ${dir} has ${mib(freeBytes)} MiB free, less than EMBEDDED_MIN_FREE_MB (${mib(minFreeBytes)}): ` +
      'writes are refused until there is more room (free some space, or lower EMBEDDED_MIN_FREE_MB).';
    super(detail);
    this.name = 'StorageFullError';
    this.detail = detail;
  }
}

/** ENOSPC: no space left on the device; EDQUOT: the disk quota is used up. 53100: PostgreSQL's disk_full. */
const CODES = new Set(['ENOSPC', 'EDQUOT', '53100']);

export function isStorageFull(err: any): boolean {
  const code = err?.nativeError?.code ?? err?.code;
  return typeof code === 'string' && CODES.has(code);
}

export const storageFull = () => new HttpError(503, STORAGE_FULL_MESSAGE);
