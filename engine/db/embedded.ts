// The embedded database on a data folder: PGlite on Node's file system, made durable and kept off
// a full disk.
//
// Durability. PGlite starts PostgreSQL with `-F` (fsync off), and the Emscripten file system it
// runs on ignores fdatasync and has no fsync for Node files: out of the box nothing is ever synced,
// so a commit survives a killed process (it is in the OS page cache) but not an OS crash or a
// power cut. With `full` durability PostgreSQL runs with fsync on and syncs its WAL with fsync()
// at every commit, which reaches the disk here through fs.fsyncSync: a write is acknowledged only
// once it is on disk, as on PostgreSQL. `relaxed` is PGlite's own behaviour, several times faster.
//
// A full disk. PostgreSQL answers "could not extend file" (disk_full) when a table cannot grow,
// but when its WAL cannot grow (a new 16 MiB segment) the embedded instance stops answering for
// good and blocks the process. So writes are refused before that can happen: a statement that may
// write fails with StorageFullError while the folder's file system has less than `minFreeBytes`
// free, and succeeds again by itself once there is room.
import fs from 'node:fs';
import { PGlite } from '@electric-sql/pglite';
import { NodeFS } from '@electric-sql/pglite/nodefs';
import { pg_trgm } from '@electric-sql/pglite/contrib/pg_trgm';
import { DEFAULT_CACHE_MB, DEFAULT_MIN_FREE_BYTES, type EmbeddedDurability, type EmbeddedOptions } from '../config/embedded.js';
import { StorageFullError } from '../storage-full.js';

/**
 * The extensions every embedded database loads: pg_trgm backs substring search with trigram
 * indexes (engine/resource/sql/search.ts), as on PostgreSQL. A database whose migrations created
 * such an index needs the extension loaded to write to its table.
 */
export const EMBEDDED_EXTENSIONS = { pg_trgm };

let syncCalls = 0;
/** How many fsync calls the embedded databases of this process have made (tests read it). */
export const embeddedSyncCalls = () => syncCalls;

interface NodeStream {
  nfd: number;
}
interface NodeFsModule {
  stream_ops: { fsync?: (stream: NodeStream) => number };
  tryFSOperation<T>(operation: () => T): T;
}

/** NodeFS whose files answer fsync() by syncing the real file (Emscripten's NODEFS has none). */
class SyncingNodeFS extends NodeFS {
  override async init(pg: PGlite, opts: Parameters<NodeFS['init']>[1]) {
    const result = await super.init(pg, opts);
    const preRun = result.emscriptenOpts.preRun ?? [];
    result.emscriptenOpts.preRun = [
      ...preRun,
      (mod) => {
        const nodefs = mod.NODEFS as unknown as NodeFsModule;
        // tryFSOperation turns a Node error (EIO, ENOSPC) into the errno PostgreSQL expects.
        nodefs.stream_ops.fsync = (stream) =>
          nodefs.tryFSOperation(() => {
            syncCalls += 1;
            fs.fsyncSync(stream.nfd);
            return 0;
          });
      },
    ];
    return result;
  }
}

/** PostgreSQL's start parameters in PGlite, for a durability and a buffer cache. */
function startParams(durability: EmbeddedDurability, cacheMb: number): string[] {
  // The WAL's buffers stay at the 4 MB PostgreSQL sizes for its default cache (a 32nd of it).
  const cache = ['-c', `shared_buffers=${cacheMb}MB`, '-c', 'wal_buffers=4MB'];
  if (durability === 'relaxed') return [...PGlite.defaultStartParams, ...cache];
  // Without -F (fsync=off); fsync rather than fdatasync, which Emscripten turns into nothing.
  return [...PGlite.defaultStartParams.filter((p) => p !== '-F'), '-c', 'fsync=on', '-c', 'wal_sync_method=fsync', ...cache];
}

/** Statements that only read (or end a transaction): never refused on a full disk. */
const READ_ONLY = /^[\s(]*(select|show|explain|begin|start transaction|commit|end|rollback|release|savepoint|set|reset|deallocate|discard|values|table)\b/i;
/** A `with` statement reads unless one of its parts writes. */
const WITH = /^[\s(]*with\b/i;
const WRITES = /\b(insert|update|delete|merge)\b/i;

const mayWrite = (sql: string) => !READ_ONLY.test(sql) && !(WITH.test(sql) && !WRITES.test(sql));

function freeBytes(dir: string): number {
  const stats = fs.statfsSync(dir);
  return stats.bavail * stats.bsize;
}

/** Refuses statements that may write while `dir` has less than `minFreeBytes` free. */
function guardStorage(pglite: PGlite, dir: string, minFreeBytes: number) {
  if (minFreeBytes <= 0) return;
  const check = (sql: unknown) => {
    if (typeof sql === 'string' && !mayWrite(sql)) return;
    const free = freeBytes(dir);
    if (free < minFreeBytes) throw new StorageFullError(dir, free, minFreeBytes);
  };
  const query = pglite.query.bind(pglite);
  const exec = pglite.exec.bind(pglite);
  const guarded =
    (run: (...args: any[]) => Promise<unknown>) =>
    (sql: unknown, ...rest: unknown[]) => {
      try {
        check(sql);
      } catch (err) {
        return Promise.reject(err);
      }
      return run(sql, ...rest);
    };
  pglite.query = guarded(query) as PGlite['query'];
  pglite.exec = guarded(exec) as PGlite['exec'];
}

/** PGlite on `dir` with the given durability, buffer cache and full-disk guard. */
export function embeddedPGlite(dir: string, options: EmbeddedOptions = {}): PGlite {
  const durability = options.durability ?? 'full';
  const pglite = new PGlite({
    dataDir: dir,
    fs: durability === 'full' ? new SyncingNodeFS(dir) : new NodeFS(dir),
    startParams: startParams(durability, options.cacheMb ?? DEFAULT_CACHE_MB),
    extensions: EMBEDDED_EXTENSIONS,
  });
  guardStorage(pglite, dir, options.minFreeBytes ?? DEFAULT_MIN_FREE_BYTES);
  return pglite;
}
