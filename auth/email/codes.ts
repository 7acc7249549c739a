// Six-digit codes that prove a person reads a mailbox: one live code per user and purpose, stored
// as a keyed hash, valid for CODE_TTL_SECONDS and for at most MAX_ATTEMPTS tries; and, across the
// codes of a purpose, the hourly limits of limits.ts.
import { createHmac, randomInt, timingSafeEqual } from 'node:crypto';
import type { Knex } from 'knex';
import type { Engine } from '../../engine/module.js';
import { authModels } from '../models.js';
import { lockUser, MAX_CODES_PER_WINDOW, MAX_WRONG_PER_WINDOW, recordEvent, secondsUntilBelow, TOO_MANY_CODES, TOO_MANY_WRONG, tooMany } from './limits.js';
import { transactionOnceMoreIfUndone } from '../../engine/db/undone.js';

export type CodePurpose = 'verify-email' | 'change-email';

export const CODE_TTL_SECONDS = 10 * 60;
/** Tries a code survives; after that even the right code fails, so six digits cannot be guessed. */
export const MAX_ATTEMPTS = 5;
export const CODE_MIN = 100_000;
export const CODE_MAX = 999_999;

const TABLE = 'email_code';

/** The codes' table is knex's; the user row a code operation locks is the user model's. */
type CodeStore = Pick<Engine, 'db' | 'registry'>;

/**
 * Keyed, because a plain hash of one of 900,000 codes is reversed instantly by anyone who reads the
 * table. The key is derived from the access-token secret, so there is no further secret to manage.
 */
function codeHash(secret: string, userId: string, purpose: CodePurpose, code: string): string {
  const key = createHmac('sha256', secret).update('email-code').digest();
  return createHmac('sha256', key).update(`${purpose}:${userId}:${code}`).digest('hex');
}

/**
 * A new code for the user and purpose, replacing any earlier one; the code itself is returned to be
 * mailed. A 429 (with Retry-After) when the hour's codes are used up, or when its wrong tries are:
 * a new code would be dead on arrival then.
 */
export async function issueCode(engine: CodeStore, secret: string, userId: string, purpose: CodePurpose, email: string | null = null): Promise<string> {
  return transactionOnceMoreIfUndone(engine.db, async (trx) => {
    await lockUser(authModels(engine), trx, userId);
    const lockedFor = await secondsUntilBelow(trx, userId, purpose, 'wrong', MAX_WRONG_PER_WINDOW);
    if (lockedFor) throw tooMany(TOO_MANY_WRONG, lockedFor);
    const waitFor = await secondsUntilBelow(trx, userId, purpose, 'issued', MAX_CODES_PER_WINDOW);
    if (waitFor) throw tooMany(TOO_MANY_CODES, waitFor);
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
    await trx(TABLE).insert(row).onConflict(['userId', 'purpose']).merge();
    await recordEvent(trx, userId, purpose, 'issued');
    return code;
  });
}

/** The secrets a code may have been hashed with: the current access secret, and the previous one during a rotation. */
export const codeSecrets = (jwt: { secret: string; previousSecret?: string }): string[] => (jwt.previousSecret ? [jwt.secret, jwt.previousSecret] : [jwt.secret]);

/**
 * Spends one try of the user's live code for the purpose. Nothing is tried while the hour's wrong
 * tries are used up (every code of the purpose is dead until the window passes). The user's codes
 * are locked while the try is counted, so concurrent guesses cannot get past either limit. The
 * right code is deleted (single use) and its row returned; anything else returns undefined.
 */
export async function consumeCode(engine: CodeStore, secrets: readonly string[], userId: string, purpose: CodePurpose, code: string): Promise<{ email: string | null } | undefined> {
  return transactionOnceMoreIfUndone(engine.db, async (trx) => {
    await lockUser(authModels(engine), trx, userId);
    if (await secondsUntilBelow(trx, userId, purpose, 'wrong', MAX_WRONG_PER_WINDOW)) return undefined;
    const [row] = await trx(TABLE)
      .where({ userId, purpose })
      .andWhere('attempts', '<', MAX_ATTEMPTS)
      .andWhere('expiresAt', '>', new Date())
      .increment('attempts', 1)
      .returning(['id', 'codeHash', 'email']);
    if (!row) return undefined;
    const expected = Buffer.from(row.codeHash, 'hex');
    // Any key of a rotation: a code mailed just before the restart still works.
    const matches = secrets.some((secret) => timingSafeEqual(expected, Buffer.from(codeHash(secret, userId, purpose, code), 'hex')));
    if (!matches) {
      await recordEvent(trx, userId, purpose, 'wrong');
      return undefined;
    }
    await trx(TABLE).where({ id: row.id }).del();
    return { email: row.email };
  });
}

/**
 * Deletes every pending code of the user, of every purpose: when its address changed, its password
 * was reset or an identity was linked, codes mailed before are moot. The hourly counts stay.
 */
export async function clearPendingCodes(db: Knex, userId: string): Promise<void> {
  await db(TABLE).where({ userId }).del();
}

/** A code as the client sends it, a number or a string of six digits; undefined when it cannot be one. */
export function normalizeCode(value: number | string): string | undefined {
  const text = typeof value === 'number' ? String(value) : value.trim();
  if (!/^\d{6}$/.test(text)) return undefined;
  const n = Number(text);
  return n >= CODE_MIN && n <= CODE_MAX ? text : undefined;
}
