// Signing keys with rotation. Each token names the key that signed it in its header (`kid`, a
// digest of the secret that reveals nothing of it); a verifier picks that key. Rotating a secret
// is a restart with the new value in JWT_SECRET and the old one in JWT_SECRET_PREVIOUS: new tokens
// are signed with the new key, tokens the old one signed keep working until they expire, and once
// they have all expired the previous value can be removed. A token naming neither key is refused.
import { createHash, createSecretKey, type KeyObject } from 'node:crypto';
import jwt from 'jsonwebtoken';

export interface SigningKey {
  kid: string;
  key: KeyObject;
}

export interface Keyring {
  /** Signs every new token. */
  current: SigningKey;
  /** The key before the last rotation: verifies, never signs. */
  previous?: SigningKey;
}

/** 16 characters of a SHA-256 of the secret: tells keys apart in a token header without revealing them. */
export const keyId = (secret: string) => createHash('sha256').update('jwt-kid:').update(secret).digest('base64url').slice(0, 16);

const signingKey = (secret: string): SigningKey => ({ kid: keyId(secret), key: createSecretKey(Buffer.from(secret)) });

export function keyring(secret: string, previousSecret?: string): Keyring {
  return { current: signingKey(secret), previous: previousSecret ? signingKey(previousSecret) : undefined };
}

/**
 * The keys that may have signed a token with this header: the one its kid names; for a token
 * without one (signed before key ids were written), the current key, then the previous one.
 */
export function verificationKeys(ring: Keyring, header: { kid?: unknown } | undefined): KeyObject[] {
  const kid = header?.kid;
  if (kid === undefined) return ring.previous ? [ring.current.key, ring.previous.key] : [ring.current.key];
  if (kid === ring.current.kid) return [ring.current.key];
  if (ring.previous && kid === ring.previous.kid) return [ring.previous.key];
  return [];
}

/** The keys for a token's text, read from its header (none for text that is not a JWT). */
export function verificationKeysOf(ring: Keyring, token: string): KeyObject[] {
  const decoded = jwt.decode(token, { complete: true });
  return decoded ? verificationKeys(ring, decoded.header) : [];
}
