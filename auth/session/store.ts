// The refresh_token table: one row per refresh token ever issued, keyed by the token's SHA-256.
// A token is `active` until it is exchanged (`spent`) or its session is ended (`revoked`). Each
// sign-in also has a row in user_session (live.ts), whose revocation ends the session for good.
import { randomUUID } from 'node:crypto';
import type { Knex } from 'knex';
import { SESSION_TABLE } from './live.js';
import { onceMoreIfUndone, transactionOnceMoreIfUndone } from '../../engine/db/undone.js';

export const TABLE = 'refresh_token';

export type TokenStatus = 'active' | 'spent' | 'revoked';

export interface StoredToken {
  id: string;
  userId: string;
  tenantId: string;
  sessionId: string;
  status: TokenStatus;
}

export interface NewToken {
  userId: string;
  tenantId: string;
  tokenHash: string;
  expiresAt: Date;
}

/**
 * The first token of a sign-in: it starts a session whose id is its own. Both rows in one
 * transaction, so the clean-up of token-less sessions (deleteExpiredTokens) never sees the session alone.
 */
export async function storeFirstToken(db: Knex, token: NewToken): Promise<{ sessionId: string }> {
  const id = randomUUID();
  await transactionOnceMoreIfUndone(db, async (trx) => {
    await trx(SESSION_TABLE).insert({ id, tenantId: token.tenantId, userId: token.userId });
    await trx(TABLE).insert({ id, sessionId: id, parentId: null, status: 'active', ...token });
  });
  return { sessionId: id };
}

/**
 * Spends the live token with this hash and stores its successor in ONE statement, so that of two
 * concurrent exchanges of one token exactly one finds it active (the row lock makes the other
 * re-read it as spent), on every instance, and the successor exists as soon as the spend is seen.
 * A token of an inactive user, or of a revoked session, is not spent. Nothing returned: not
 * spendable (see findToken). A revocation that commits while this runs may leave the successor
 * `active`, but in a revoked session: the next exchange or request refuses it.
 */
export async function exchangeToken(db: Knex, presentedHash: string, next: Omit<NewToken, 'userId' | 'tenantId'>): Promise<StoredToken | undefined> {
  const result = await db.raw(
    `with spent as (
       update ?? as t set "status" = 'spent', "updatedAt" = now()
        where t."tokenHash" = ? and t."status" = 'active' and t."expiresAt" > now()
          and exists (select 1 from ?? as u where u."id" = t."userId" and u."isActive")
          and exists (select 1 from ?? as s where s."id" = t."sessionId" and s."revokedAt" is null)
       returning t."id", t."userId", t."tenantId", t."sessionId")
     insert into ?? ("id", "tenantId", "userId", "sessionId", "parentId", "tokenHash", "status", "expiresAt")
     select ?, "tenantId", "userId", "sessionId", "id", ?, 'active', ? from spent
     returning "id", "userId", "tenantId", "sessionId", "status"`,
    [TABLE, presentedHash, 'user', SESSION_TABLE, TABLE, randomUUID(), next.tokenHash, next.expiresAt],
  );
  return result.rows[0];
}

export async function findToken(db: Knex, hash: string): Promise<StoredToken | undefined> {
  return db(TABLE).select('id', 'userId', 'tenantId', 'sessionId', 'status').where({ tokenHash: hash }).first();
}

/**
 * Expired rows are useless (their JWT is refused before the table is read), so each new token of a
 * user clears that user's: the table grows with live sessions, not with every refresh ever made.
 * A session left without tokens goes too: its last refresh token outlived every access token it
 * bought (JWT_REFRESH_EXPIRES_IN is the longer), and a missing session is a dead one anyway.
 */
export async function deleteExpiredTokens(db: Knex, userId: string): Promise<void> {
  await onceMoreIfUndone(() => db(TABLE).where({ userId }).andWhere('expiresAt', '<=', db.fn.now()).delete());
  await onceMoreIfUndone(() =>
    db(SESSION_TABLE).where({ userId })
      .whereNotExists(db(TABLE).select(db.raw('1')).whereRaw('??.?? = ??.??', [TABLE, 'sessionId', SESSION_TABLE, 'id']))
      .delete(),
  );
}
