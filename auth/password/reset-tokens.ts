// Password reset tokens in the database: 32 random bytes handed out once (in an email), kept only
// as a SHA-256 (the token is high-entropy, so a fast hash suffices and lookups stay indexable),
// valid one hour, spent by one conditional UPDATE so that two concurrent uses cannot both succeed.
import { createHash, randomBytes } from 'node:crypto';
import type { Knex } from 'knex';
import type { AuthModels } from '../models.js';
import { transactionOnceMoreIfUndone } from '../../engine/db/undone.js';

const TABLE = 'password_reset';

/** How long an emailed reset token stays valid: the database's clock decides, the same for every instance. */
export const RESET_TOKEN_HOURS = 1;

export const hashResetToken = (token: string) => createHash('sha256').update(token).digest('hex');

/**
 * A new token for the active account with this email, replacing any it still has, or undefined
 * when there is no such account. The same two statements run either way (each is filtered on the
 * email inside the database), so the answer costs the same whether the account exists or not.
 */
export async function createResetToken(models: AuthModels, db: Knex, email: string): Promise<string | undefined> {
  const token = randomBytes(32).toString('base64url');
  const inserted = await transactionOnceMoreIfUndone(db, async (trx) => {
    // Subqueries of the two statements: the user model's query, as knex builders (nobody is signed in).
    const account = () => models.user.query(trx).where({ email, isActive: true });
    await spendOutstanding(trx, account().select('id').toKnexQuery());
    const rows: Array<{ userId: string }> = await trx
      .insert(account().select('id', 'tenantId', trx.raw('?', [hashResetToken(token)]), trx.raw(`now() + interval '${RESET_TOKEN_HOURS} hour'`)).toKnexQuery())
      .into(trx.raw('?? (??, ??, ??, ??)', [TABLE, 'userId', 'tenantId', 'tokenHash', 'expiresAt']))
      .returning('userId');
    return rows;
  });
  return inserted.length ? token : undefined;
}

/** Spends a live token (unused, unexpired, of a user still active): the user it was issued to, or undefined. */
export async function spendResetToken(models: AuthModels, trx: Knex.Transaction, token: string): Promise<string | undefined> {
  const [row] = await trx(TABLE)
    .where({ tokenHash: hashResetToken(token) })
    .whereNull('usedAt')
    .where('expiresAt', '>', trx.fn.now())
    .whereIn('userId', models.user.query(trx).select('id').where({ isActive: true }).toKnexQuery())
    .update({ usedAt: trx.fn.now(), updatedAt: trx.fn.now() })
    .returning('userId');
  return row?.userId;
}

/** Spends every outstanding token of the users selected (one user id, or a subquery of ids). */
export async function spendOutstanding(trx: Knex.Transaction, users: string | Knex.QueryBuilder): Promise<void> {
  const query = trx(TABLE).whereNull('usedAt');
  await (typeof users === 'string' ? query.where({ userId: users }) : query.whereIn('userId', users)).update({ usedAt: trx.fn.now(), updatedAt: trx.fn.now() });
}
