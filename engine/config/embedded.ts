// Settings of the embedded database on its data folder (engine/db/embedded.ts): how durable a
// commit is (EMBEDDED_DURABILITY), how much room is kept free (EMBEDDED_MIN_FREE_MB) and how
// large its buffer cache is (EMBEDDED_CACHE_MB).
// Kept apart from db/embedded.ts, so that reading the configuration never loads PGlite (a cluster's
// primary reads it and must stay small).
import { ConfigError, integer, type Env } from './values.js';

export type EmbeddedDurability = 'full' | 'relaxed';
export const EMBEDDED_DURABILITIES: readonly EmbeddedDurability[] = ['full', 'relaxed'];

/** Default room kept free (EMBEDDED_MIN_FREE_MB): a few WAL segments (16 MiB each) beyond what one request writes. */
export const DEFAULT_MIN_FREE_BYTES = 64 * 1024 * 1024;

/**
 * Default buffer cache (EMBEDDED_CACHE_MB), PostgreSQL's shared_buffers: a quarter of its own
 * 128 MB. The cache lives in the process's memory and is zeroed at every start; pages it does not
 * hold are read from the OS's file cache. 128 MB cost a start about half a second and an idle
 * service about 110 MB of memory, with no gain measured on a database that fits an embedded one.
 */
export const DEFAULT_CACHE_MB = 32;

export interface EmbeddedOptions {
  durability?: EmbeddedDurability;
  /** Writes are refused while the data folder's file system has less free than this (bytes). */
  minFreeBytes?: number;
  /** PostgreSQL's buffer cache (shared_buffers), in MiB. */
  cacheMb?: number;
}

export function embeddedSettings(env: Env): Required<EmbeddedOptions> {
  const raw = env.EMBEDDED_DURABILITY || 'full';
  if (!(EMBEDDED_DURABILITIES as readonly string[]).includes(raw)) {
    throw new ConfigError(`EMBEDDED_DURABILITY must be ${EMBEDDED_DURABILITIES.join(' or ')}, got "${raw}"`);
  }
  return {
    durability: raw as EmbeddedDurability,
    minFreeBytes: integer(env, 'EMBEDDED_MIN_FREE_MB', DEFAULT_MIN_FREE_BYTES / (1024 * 1024), 0, 1_048_576) * 1024 * 1024,
    cacheMb: integer(env, 'EMBEDDED_CACHE_MB', DEFAULT_CACHE_MB, 1, 1024),
  };
}
