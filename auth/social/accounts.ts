// The user a provider account signs in as: the one already linked to it, else the one with the
// same verified email (the identity is linked to it), else a new user with a new tenant, as its
// SUPER_ADMIN, exactly as an anonymous registration makes one.
import type { Knex } from 'knex';
import type { SocialProvider } from './config.js';
import { createTenant, fullName } from '../accounts.js';
import { clearPendingCodes } from '../email/codes.js';
import { spendOutstanding } from '../password/reset-tokens.js';
import { revokeUserSessions } from '../session/revoke.js';
import { ProviderFailure } from './oauth.js';
import type { Profile } from './providers.js';

interface Found {
  id: string;
  tenantId: string;
  isActive: boolean;
}

/** The columns' lengths: a provider's long name is cut, not a failed sign-in. */
const clip = (value: string | undefined, max: number) => (value ? value.slice(0, max) : null);

const USER = ['user.id', 'user.tenantId', 'user.isActive', 'user.isEmailVerified'];

async function byIdentity(trx: Knex.Transaction, provider: SocialProvider, subject: string): Promise<Found | undefined> {
  return trx('user_identity').join('user', 'user.id', 'user_identity.userId').select(USER)
    .where({ 'user_identity.provider': provider, 'user_identity.subject': subject }).first();
}

/**
 * The provider proved the address belongs to this person. If the account had not verified it, its
 * password was set by someone who never proved owning the address (a squatter pre-registering the
 * victim's email): it stops working, and its sessions end, before the identity is linked.
 */
async function linkByEmail(trx: Knex.Transaction, provider: SocialProvider, profile: Profile, email: string): Promise<Found | undefined> {
  const user = await trx('user').select(USER).where('user.email', email).forUpdate().first();
  if (!user) return undefined;
  if (!user.isEmailVerified) {
    await trx('user').where('id', user.id).update({ isEmailVerified: true, hash: null, updatedAt: trx.fn.now() });
    // Nothing the squatter started may finish later: its sessions, a password reset it asked for,
    // an email change or verification code it holds.
    await revokeUserSessions(trx, user.id);
    await spendOutstanding(trx, user.id);
    await clearPendingCodes(trx, user.id);
  }
  await trx('user_identity').insert({ tenantId: user.tenantId, userId: user.id, provider, subject: profile.subject, email });
  return user;
}

async function createUser(trx: Knex.Transaction, provider: SocialProvider, profile: Profile, email: string): Promise<Found> {
  const name = fullName(clip(profile.firstName, 255), clip(profile.lastName, 255));
  const tenant = await createTenant(trx, name ?? email);
  const [user] = await trx('user')
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
  return user;
}

const isUniqueViolation = (err: any) => err?.code === '23505';

/** The user this provider account signs in as; ProviderFailure when it cannot be told. */
export async function userForProfile(db: Knex, provider: SocialProvider, profile: Profile): Promise<Found> {
  let found: Found;
  try {
    found = await findOrCreate(db, provider, profile);
  } catch (err) {
    // Two first sign-ins of one account at once: the other one linked or created it; use that.
    if (!isUniqueViolation(err)) throw err;
    found = await findOrCreate(db, provider, profile);
  }
  if (!found.isActive) throw new ProviderFailure('account_inactive');
  return found;
}

function findOrCreate(db: Knex, provider: SocialProvider, profile: Profile): Promise<Found> {
  return db.transaction(async (trx) => {
    const linked = await byIdentity(trx, provider, profile.subject);
    if (linked) return linked;
    // Without a verified email nothing else can tell who this is: matching or creating by an
    // address the provider does not vouch for would hand an account to whoever typed it.
    const email = profile.email?.toLowerCase();
    if (!email || !profile.emailVerified || email.length > 254) throw new ProviderFailure('email_not_verified');
    return (await linkByEmail(trx, provider, profile, email)) ?? createUser(trx, provider, profile, email);
  });
}
