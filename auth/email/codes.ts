// Six-digit codes that prove a person reads a mailbox: one live code per user and purpose, stored
// as a keyed hash, valid for CODE_TTL_SECONDS and for at most MAX_ATTEMPTS tries.
import { createHmac, randomInt, timingSafeEqual } from 'node:crypto';
import type { Knex } from 'knex';

export type CodePurpose = 'verify-email' | 'change-email';

export const CODE_TTL_SECONDS = 10 * 60;
/** Tries a code survives; after that even the right code fails, so six digits cannot be guessed. */
export const MAX_ATTEMPTS = 5;
export const CODE_MIN = 100_000;
export const CODE_MAX = 999_999;

const TABLE = 'email_code';

/**
 * Keyed, because a plain hash of one of 900,000 codes is reversed instantly by anyone who reads the
 * table. The key is derived from the access-token secret, so there is no further secret to manage.
 */
function codeHash(secret: string, userId: string, purpose: CodePurpose, code: string): string {
  const key = createHmac('sha256', secret).update('email-code').digest();
  return createHmac('sha256', key).update(`${purpose}:${userId}:${code}`).digest('hex');
}

/** A new code for the user and purpose, replacing any earlier one; the code itself is returned to be mailed. */
export async function issueCode(db: Knex, secret: string, userId: string, purpose: CodePurpose, email: string | null = null): Promise<string> {
  const code = String(randomInt(CODE_MIN, CODE_MAX + 1));
  const row = {
    userId,
    purpose,
    email,
    codeHash: codeHash(secret, userId, purpose, code),
    expiresAt: new Date(Date.now() + CODE_TTL_SECONDS * 1000),
    attempts: 0,
    createdAt: new Date(),
  };
  await db(TABLE).insert(row).onConflict(['userId', 'purpose']).merge();
  return code;
}

/**
 * Spends one try of the user's live code for the purpose. The try is counted in the same statement
 * that checks the limit and expiry, so concurrent guesses cannot get past MAX_ATTEMPTS. The right
 * code is deleted (single use) and its row returned; anything else returns undefined.
 */
export async function consumeCode(db: Knex, secret: string, userId: string, purpose: CodePurpose, code: string): Promise<{ email: string | null } | undefined> {
  const [row] = await db(TABLE)
    .where({ userId, purpose })
    .andWhere('attempts', '<', MAX_ATTEMPTS)
    .andWhere('expiresAt', '>', new Date())
    .increment('attempts', 1)
    .returning(['id', 'codeHash', 'email']);
  if (!row) return undefined;
  const expected = Buffer.from(row.codeHash, 'hex');
  const given = Buffer.from(codeHash(secret, userId, purpose, code), 'hex');
  if (!timingSafeEqual(expected, given)) return undefined;
  // Two right tries at once: only the one that deletes the row succeeds.
  const deleted = await db(TABLE).where({ id: row.id }).del().returning('id');
  return deleted.length ? { email: row.email } : undefined;
}

/** Every pending code of the user (its address changed, so codes mailed before are moot). */
export async function dropCodes(db: Knex, userId: string): Promise<void> {
  await db(TABLE).where({ userId }).del();
}

/** A code as the client sends it, a number or a string of six digits; undefined when it cannot be one. */
export function normalizeCode(value: number | string): string | undefined {
  const text = typeof value === 'number' ? String(value) : value.trim();
  if (!/^\d{6}$/.test(text)) return undefined;
  const n = Number(text);
  return n >= CODE_MIN && n <= CODE_MAX ? text : undefined;
}
