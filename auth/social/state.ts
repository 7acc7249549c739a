// The `state` of a social login: a short HS256 JWT (provider, nonce, expiry) signed with a key
// derived from JWT_SECRET, so any instance can check it without shared storage. The PKCE code
// verifier is derived from the nonce with the same key: it never travels through the browser or
// the provider, so whoever intercepts the callback (code + state) still cannot redeem the code.
// Spent nonces are recorded in social_login_state, which makes a state single-use everywhere.
import { createHmac, createSecretKey, randomBytes, type KeyObject } from 'node:crypto';
import jwt from 'jsonwebtoken';
import type { Knex } from 'knex';
import { badRequest } from '../../engine/errors.js';
import type { SocialProvider } from './config.js';

/** Long enough to sign in at the provider, short enough that a leaked state is soon useless. */
export const STATE_SECONDS = 600;

const ALGORITHM = 'HS256';
const STATE_TYPE = 'social-state';

export interface StateKey {
  key: KeyObject;
  secret: Buffer;
}

/** A key of its own (not the access token key), so a state can never pass as a token or the reverse. */
export function stateKey(jwtSecret: string): StateKey {
  const secret = createHmac('sha256', jwtSecret).update('social-login-state').digest();
  return { key: createSecretKey(secret), secret };
}

/** RFC 7636 verifier: 43 characters of base64url, recomputed at the callback from the nonce. */
export function codeVerifier(key: StateKey, nonce: string): string {
  return createHmac('sha256', key.secret).update(`pkce:${nonce}`).digest('base64url');
}

export function newState(key: StateKey, provider: SocialProvider): { state: string; nonce: string } {
  const nonce = randomBytes(24).toString('base64url');
  const state = jwt.sign({ typ: STATE_TYPE, provider }, key.key, { algorithm: ALGORITHM, jwtid: nonce, expiresIn: STATE_SECONDS });
  return { state, nonce };
}

const invalidState = () => badRequest('state is invalid, expired or already used: start the sign-in again');

/** The nonce of a state this server signed for this provider and that has not expired; else 400. */
export function checkState(key: StateKey, provider: SocialProvider, state: unknown): { nonce: string; expiresAt: Date } {
  if (Array.isArray(state)) throw badRequest('state must be given once');
  if (typeof state !== 'string' || !state) throw badRequest('state should not be empty');
  let claims: jwt.JwtPayload;
  try {
    claims = jwt.verify(state, key.key, { algorithms: [ALGORITHM] }) as jwt.JwtPayload;
  } catch {
    throw invalidState();
  }
  if (claims.typ !== STATE_TYPE || claims.provider !== provider || typeof claims.jti !== 'string' || typeof claims.exp !== 'number') {
    throw invalidState();
  }
  return { nonce: claims.jti, expiresAt: new Date(claims.exp * 1000) };
}

/** Marks the nonce spent; a second use (a replay, or two racing callbacks) is a 400. */
export async function spendState(db: Knex, provider: SocialProvider, nonce: string, expiresAt: Date): Promise<void> {
  // Spent nonces are only needed until their state expires; sweeping here keeps the table small.
  await db('social_login_state').where('expiresAt', '<', new Date()).delete();
  const inserted = await db('social_login_state').insert({ nonce, provider, expiresAt }).onConflict('nonce').ignore().returning('nonce');
  if (inserted.length === 0) throw invalidState();
}
