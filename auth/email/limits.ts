// Limits over a sliding hour that hold across reissued codes: each code has its own five tries, but
// a new code can be asked for at will, so without these a guesser would get five tries per resend.
// Counted per user and purpose from email_code_event rows ('issued', 'wrong').
import type { Knex } from 'knex';
import { HttpError } from '../../engine/errors.js';
import type { AuthModels } from '../models.js';

export type CodeEventKind = 'issued' | 'wrong';

export const LIMIT_WINDOW_SECONDS = 60 * 60;
/** Codes that may be mailed per user and purpose within the window. */
export const MAX_CODES_PER_WINDOW = 5;
/** Wrong codes that may be entered per user and purpose within the window, whatever code they were tried against. */
export const MAX_WRONG_PER_WINDOW = 10;

export const TOO_MANY_CODES = 'Too many codes were asked for: try again later';
export const TOO_MANY_WRONG = 'Too many wrong codes were entered: try again later';

const TABLE = 'email_code_event';

const windowStart = () => new Date(Date.now() - LIMIT_WINDOW_SECONDS * 1000);

/**
 * Serialises every code operation of one user (issue, try) until the transaction ends, so that
 * concurrent requests cannot both see a count below a limit and both pass it.
 */
export async function lockUser(models: AuthModels, trx: Knex.Transaction, userId: string): Promise<void> {
  await models.user.query(trx).select('id').where({ id: userId }).forUpdate().first();
}

export async function recordEvent(trx: Knex.Transaction, userId: string, purpose: string, kind: CodeEventKind): Promise<void> {
  await trx(TABLE).insert({ userId, purpose, kind, createdAt: new Date() });
}

/**
 * Seconds until fewer than `limit` events of the kind remain in the window, or 0 when there are
 * fewer already. Events that left the window are deleted on the way: they never count again.
 */
export async function secondsUntilBelow(trx: Knex.Transaction, userId: string, purpose: string, kind: CodeEventKind, limit: number): Promise<number> {
  const start = windowStart();
  await trx(TABLE).where({ userId, purpose, kind }).andWhere('createdAt', '<=', start).del();
  const times: Array<{ createdAt: Date | string }> = await trx(TABLE).where({ userId, purpose, kind }).orderBy('createdAt', 'asc').select('createdAt');
  if (times.length < limit) return 0;
  // The window drops events oldest first; when this one leaves, one fewer than the limit remain.
  const leaving = new Date(times[times.length - limit].createdAt).getTime();
  return Math.max(1, Math.ceil((leaving + LIMIT_WINDOW_SECONDS * 1000 - Date.now()) / 1000));
}

/** 429 with Retry-After in whole seconds (RFC 9110 §10.2.3). */
export const tooMany = (message: string, seconds: number) => new HttpError(429, message, { 'Retry-After': String(seconds) });
