// Settings of the embedded database on its data folder (engine/db/embedded.ts): how durable a
// commit is (EMBEDDED_DURABILITY) and how much room is kept free (EMBEDDED_MIN_FREE_MB).
// Kept apart from db/embedded.ts, so that reading the configuration never loads PGlite (a cluster's
// primary reads it and must stay small).
import { ConfigError, integer, type Env } from './values.js';

export type EmbeddedDurability = 'full' | 'relaxed';
export const EMBEDDED_DURABILITIES: readonly EmbeddedDurability[] = ['full', 'relaxed'];

/** Default room kept free (EMBEDDED_MIN_FREE_MB): a few WAL segments (16 MiB each) beyond what one request writes. */
export const DEFAULT_MIN_FREE_BYTES = 64 * 1024 * 1024;

export interface EmbeddedOptions {
  durability?: EmbeddedDurability;
  /** Writes are refused while the data folder's file system has less free than this (bytes). */
  minFreeBytes?: number;
}

export function embeddedSettings(env: Env): Required<EmbeddedOptions> {
  const raw = env.EMBEDDED_DURABILITY || 'full';
  if (!(EMBEDDED_DURABILITIES as readonly string[]).includes(raw)) {
    throw new ConfigError(`EMBEDDED_DURABILITY must be ${EMBEDDED_DURABILITIES.join(' or ')}, got "${raw}"`);
  }
  return { durability: raw as EmbeddedDurability, minFreeBytes: integer(env, 'EMBEDDED_MIN_FREE_MB', DEFAULT_MIN_FREE_BYTES / (1024 * 1024), 0, 1_048_576) * 1024 * 1024 };
}
