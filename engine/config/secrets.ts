// The JWT secrets of the configuration: required in production (and no placeholder there),
// generated per process elsewhere, and the previous ones of a rotation held to the same rules.
import { randomBytes } from 'node:crypto';
import { ConfigError, type Env } from './values.js';

/**
 * Words that mark a secret copied from documentation, an example file or a test instead of made
 * for a deployment ("change-me", "example", …); and too few distinct characters ("aaaa…", "1234…").
 */
// A word counts only standing apart (between separators or at an end): a random secret may hold
// the letters of one among others, and must not be refused for it.
const PLACEHOLDER_WORDS = /(?<![A-Za-z0-9])(secret|change-?me|example|default|sample|test|password|placeholder)(?![A-Za-z0-9])/i;
const MIN_DISTINCT_CHARACTERS = 10;

/** Why a secret cannot protect a production deployment, if it cannot. */
function placeholderReason(value: string): string | undefined {
  const word = PLACEHOLDER_WORDS.exec(value)?.[1];
  if (word) return `contains "${word}", like a placeholder from documentation or tests`;
  if (new Set(value).size < MIN_DISTINCT_CHARACTERS) return `has fewer than ${MIN_DISTINCT_CHARACTERS} different characters`;
  return undefined;
}

/**
 * Secrets: required in production (and not a placeholder there), generated per process (and
 * announced once) elsewhere. The previous ones of a rotation are checked by the same rules.
 */
export function secrets(env: Env, production: boolean) {
  const secret = env.JWT_SECRET;
  const refreshSecret = env.JWT_REFRESH_SECRET;
  if (production && (!secret || !refreshSecret)) {
    throw new ConfigError('JWT_SECRET and JWT_REFRESH_SECRET must be set when NODE_ENV=production');
  }
  const previousSecret = env.JWT_SECRET_PREVIOUS || undefined;
  const previousRefreshSecret = env.JWT_REFRESH_SECRET_PREVIOUS || undefined;
  if ((previousSecret && !secret) || (previousRefreshSecret && !refreshSecret)) {
    throw new ConfigError('JWT_SECRET_PREVIOUS and JWT_REFRESH_SECRET_PREVIOUS need the current JWT_SECRET and JWT_REFRESH_SECRET beside them');
  }
  const named = [
    ['JWT_SECRET', secret],
    ['JWT_REFRESH_SECRET', refreshSecret],
    ['JWT_SECRET_PREVIOUS', previousSecret],
    ['JWT_REFRESH_SECRET_PREVIOUS', previousRefreshSecret],
  ] as const;
  for (const [name, value] of named) {
    if (value === undefined) continue;
    if (value.length < 32) throw new ConfigError(`${name} must be at least 32 characters long`);
    const reason = production ? placeholderReason(value) : undefined;
    if (reason) throw new ConfigError(`${name} ${reason}: make one for this deployment (for example: openssl rand -hex 32)`);
  }
  if (secret && secret === refreshSecret) throw new ConfigError('JWT_SECRET and JWT_REFRESH_SECRET must differ');
  // An access key must never verify a refresh token or the reverse, whichever of a rotation's keys signed it.
  const accessKeys = [secret, previousSecret].filter(Boolean);
  if ([refreshSecret, previousRefreshSecret].some((value) => value && accessKeys.includes(value))) {
    throw new ConfigError('The access secrets (JWT_SECRET, JWT_SECRET_PREVIOUS) and the refresh secrets (JWT_REFRESH_SECRET, JWT_REFRESH_SECRET_PREVIOUS) must all differ');
  }
  if ((secret && secret === previousSecret) || (refreshSecret && refreshSecret === previousRefreshSecret)) {
    throw new ConfigError('A _PREVIOUS secret must differ from the current one: it is the one that was replaced');
  }
  return {
    secret: secret ?? randomBytes(32).toString('hex'),
    refreshSecret: refreshSecret ?? randomBytes(32).toString('hex'),
    generated: !secret || !refreshSecret,
    secretGenerated: !secret,
    refreshSecretGenerated: !refreshSecret,
    previousSecret,
    previousRefreshSecret,
  };
}

