// Settings of the embedded database on its data folder (engine/db-embedded.ts): how durable a
// commit is (EMBEDDED_DURABILITY) and how much room is kept free (EMBEDDED_MIN_FREE_MB).
import { ConfigError, integer, type Env } from './config-values.js';
import { EMBEDDED_DURABILITIES, type EmbeddedDurability, type EmbeddedOptions } from './db-embedded.js';

export function embeddedSettings(env: Env): Required<EmbeddedOptions> {
  const raw = env.EMBEDDED_DURABILITY || 'full';
  if (!(EMBEDDED_DURABILITIES as readonly string[]).includes(raw)) {
    throw new ConfigError(`EMBEDDED_DURABILITY must be ${EMBEDDED_DURABILITIES.join(' or ')}, got "${raw}"`);
  }
  return { durability: raw as EmbeddedDurability, minFreeBytes: integer(env, 'EMBEDDED_MIN_FREE_MB', 64, 0, 1_048_576) * 1024 * 1024 };
}
