// The user a provider account signs in as: the one already linked to it, else the one with the
// same verified email (the identity is linked to it), else a new user with a new tenant, as its
// SUPER_ADMIN, exactly as an anonymous registration makes one.
import type { Knex } from 'knex';
import { nativeError } from '../../engine/db/errors.js';
import type { SocialProvider } from './config.js';
import { createTenant, fullName } from '../accounts.js';
import type { AuthModels } from '../models.js';
import { clearPendingCodes } from '../email/codes.js';
import { spendOutstanding } from '../password/reset-tokens.js';
import { revokeUserSessions } from '../session/revoke.js';
import type { Broadcast } from '../../engine/db/broadcast.js';
import { ProviderFailure } from './oauth.js';
import type { Profile } from './providers.js';
import { transactionOnceMoreIfUndone } from '../../engine/db/undone.js';

interface Found {
  id: string;
  tenantId: string;
  isActive: boolean;
}

/** The columns' lengths: a provider's long name is cut, not a failed sign-in. */
const clip = (value: string | undefined, max: number) => (value ? value.slice(0, max) : null);

const USER = ['user.id', 'user.tenantId', 'user.isActive', 'user.isEmailVerified'];

/** What the callers keep of a user row: a plain object rather than the model's instance. */
const found = (user: Record<string, any>): Found => ({ id: user.id, tenantId: user.tenantId, isActive: user.isActive });

// Nobody is signed in yet: every read and write of user here goes by the model's query() with
// its explicit conditions, never a caller's scope.

async function byIdentity(models: AuthModels, trx: Knex.Transaction, provider: SocialProvider, subject: string): Promise<Found | undefined> {
  const user = await models.user.query(trx).select(USER).join('user_identity', 'user_identity.userId', 'user.id')
    .where({ 'user_identity.provider': provider, 'user_identity.subject': subject }).first();
  return user && found(user);
}

/**
 * The provider proved the address belongs to this person. If the account had not verified it, its
 * password was set by someone who never proved owning the address (a squatter pre-registering the
 * victim's email): it stops working, and its sessions end, before the identity is linked.
 */
async function linkByEmail(broadcast: Broadcast, models: AuthModels, trx: Knex.Transaction, provider: SocialProvider, profile: Profile, email: string): Promise<Found | undefined> {
  const user = await models.user.query(trx).select(USER).where('user.email', email).forUpdate().first();
  if (!user) return undefined;
  if (!user.isEmailVerified) {
    await models.user.query(trx).where('id', user.id).patch({ isEmailVerified: true, hash: null, updatedAt: trx.fn.now() });
    // Nothing the squatter started may finish later: its sessions, a password reset it asked for,
    // an email change or verification code it holds.
    await revokeUserSessions(broadcast, trx, user.id);
    await spendOutstanding(trx, user.id);
    await clearPendingCodes(trx, user.id);
  }
  await trx('user_identity').insert({ tenantId: user.tenantId, userId: user.id, provider, subject: profile.subject, email });
  return found(user);
}

async function createUser(models: AuthModels, trx: Knex.Transaction, provider: SocialProvider, profile: Profile, email: string): Promise<Found> {
  const name = fullName(clip(profile.firstName, 255), clip(profile.lastName, 255));
  const tenant = await createTenant(models, trx, name ?? email);
  const user = await models.user.query(trx)
    .insert({
      tenantId: tenant.id,
      roleId: tenant.roles.get('SUPER_ADMIN'),
      email,
      firstName: clip(profile.firstName, 255),
      lastName: clip(profile.lastName, 255),
      name,
      // A URL cut short is a broken URL: too long, none at all.
      imageUrl: profile.imageUrl && profile.imageUrl.length <= 2048 ? profile.imageUrl : null,
      // No password: this user signs in through the provider (password login answers 401) until
      // they set one with a password reset.
      hash: null,
      isEmailVerified: true,
    })
    .returning(['id', 'tenantId', 'isActive']);
  await trx('user_identity').insert({ tenantId: user.tenantId, userId: user.id, provider, subject: profile.subject, email });
  return found(user);
}

// A duplicate user comes from the model (Objection wraps the driver's error), a duplicate identity from knex.
const isUniqueViolation = (err: unknown) => nativeError(err)?.code === '23505';

/** The user this provider account signs in as; ProviderFailure when it cannot be told. */
export async function userForProfile(db: Knex, broadcast: Broadcast, models: AuthModels, provider: SocialProvider, profile: Profile): Promise<Found> {
  let user: Found;
  try {
    user = await findOrCreate(db, broadcast, models, provider, profile);
  } catch (err) {
    // Two first sign-ins of one account at once: the other one linked or created it; use that.
    if (!isUniqueViolation(err)) throw err;
    user = await findOrCreate(db, broadcast, models, provider, profile);
  }
  if (!user.isActive) throw new ProviderFailure('account_inactive');
  return user;
}

function findOrCreate(db: Knex, broadcast: Broadcast, models: AuthModels, provider: SocialProvider, profile: Profile): Promise<Found> {
  return transactionOnceMoreIfUndone(db, async (trx) => {
    const linked = await byIdentity(models, trx, provider, profile.subject);
    if (linked) return linked;
    // Without a verified email nothing else can tell who this is: matching or creating by an
    // address the provider does not vouch for would hand an account to whoever typed it.
    const email = profile.email?.toLowerCase();
    if (!email || !profile.emailVerified || email.length > 254) throw new ProviderFailure('email_not_verified');
    return (await linkByEmail(broadcast, models, trx, provider, profile, email)) ?? createUser(models, trx, provider, profile, email);
  });
}
