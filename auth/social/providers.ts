// What differs between the four providers: the scopes asked for, and how their profile answer
// reads as one Profile. Everything else (authorize, token exchange, PKCE) is the same flow.
import type { SocialProvider } from './config.js';

/** A provider account, as the rest of social login needs it. */
export interface Profile {
  /** The provider's stable id of the account (never the email, which can change hands). */
  subject: string;
  email?: string;
  /** True only when the provider vouches that the account owns the address. */
  emailVerified: boolean;
  firstName?: string;
  lastName?: string;
  imageUrl?: string;
}

/** A GitHub /user/emails entry. */
export interface GithubEmail {
  email: string;
  primary: boolean;
  verified: boolean;
}

export interface ProviderRules {
  /** Email and basic profile, nothing more. */
  scope: string;
  /** GitHub's profile does not say whether its email is verified: the emails endpoint does. */
  readsEmails?: boolean;
  toProfile(raw: Record<string, unknown>, extra: { emails?: GithubEmail[]; idClaims?: Record<string, unknown> }): Profile | undefined;
}

const text = (value: unknown): string | undefined => (typeof value === 'string' && value.trim() ? value.trim() : undefined);
const id = (value: unknown): string | undefined =>
  typeof value === 'number' && Number.isSafeInteger(value) ? String(value) : text(value);

/** First and last name from a display name when the provider gives only that (GitHub). */
function splitName(name: string | undefined): { firstName?: string; lastName?: string } {
  if (!name) return {};
  const [first, ...rest] = name.split(/\s+/);
  return { firstName: first, lastName: rest.join(' ') || undefined };
}

const yes = (value: unknown) => value === true || value === 'true';

/**
 * Whether the email is verified: email_verified (Google), or xms_edov, the optional claim Microsoft
 * documents for it (the address's domain is verified by its owner; Microsoft's userinfo has no
 * email_verified) once the app registration adds it to the ID token. The ID token's word counts
 * only for the same account and the same address.
 */
function openIdEmailVerified(raw: Record<string, unknown>, idClaims: Record<string, unknown> | undefined): boolean {
  if (yes(raw.email_verified) || yes(raw.xms_edov)) return true;
  if (!idClaims || idClaims.sub !== raw.sub || typeof idClaims.email !== 'string' || typeof raw.email !== 'string') return false;
  return idClaims.email.toLowerCase() === raw.email.toLowerCase() && (yes(idClaims.email_verified) || yes(idClaims.xms_edov));
}

/** An OpenID Connect userinfo answer (Google, Microsoft). */
function openIdProfile(raw: Record<string, unknown>, { idClaims }: { idClaims?: Record<string, unknown> }): Profile | undefined {
  const subject = id(raw.sub);
  if (!subject) return undefined;
  return {
    subject,
    email: text(raw.email),
    emailVerified: openIdEmailVerified(raw, idClaims),
    firstName: text(raw.given_name),
    lastName: text(raw.family_name),
    imageUrl: text(raw.picture),
  };
}

export const PROVIDER_RULES: Record<SocialProvider, ProviderRules> = {
  google: { scope: 'openid email profile', toProfile: openIdProfile },
  microsoft: { scope: 'openid email profile', toProfile: openIdProfile },
  github: {
    scope: 'read:user user:email',
    readsEmails: true,
    toProfile(raw, { emails = [] }) {
      const subject = id(raw.id);
      if (!subject) return undefined;
      // Only the primary address, and only when GitHub has verified it.
      const primary = emails.find((e) => e && e.primary === true && typeof e.email === 'string');
      return {
        subject,
        email: primary?.email ?? text(raw.email),
        emailVerified: primary?.verified === true,
        ...splitName(text(raw.name)),
        imageUrl: text(raw.avatar_url),
      };
    },
  },
  facebook: {
    scope: 'email public_profile',
    toProfile(raw) {
      const subject = id(raw.id);
      if (!subject) return undefined;
      const email = text(raw.email);
      return {
        subject,
        email,
        // Facebook returns `email` only for a confirmed address of the account.
        emailVerified: Boolean(email),
        firstName: text(raw.first_name),
        lastName: text(raw.last_name),
        imageUrl: undefined,
      };
    },
  },
};
