// Passwords: at least 8 characters with an upper- and a lowercase letter, a digit and a special
// character; argon2id hashing (memory-hard, off the main thread in @node-rs/argon2).
import { hash, verify, Algorithm } from '@node-rs/argon2';

export const MIN_PASSWORD_LENGTH = 8;
export const MAX_PASSWORD_LENGTH = 128;

/** The character classes a password must contain, each with its message. */
const CLASS_RULES: Array<[RegExp, string]> = [
  [/[A-Z]/, 'must contain at least one uppercase letter'],
  [/[a-z]/, 'must contain at least one lowercase letter'],
  [/[0-9]/, 'must contain at least one number'],
  [/[^A-Za-z0-9]/, 'must contain at least one special character'],
];

export const PASSWORD_RULES_IN_WORDS = `at least ${MIN_PASSWORD_LENGTH} characters with an upper-case letter, a lower-case letter, a digit and a special character`;

/**
 * One message per broken rule, e.g. "password must contain at least one number". Lengths count
 * characters (code points), as JSON Schema's minLength and maxLength do.
 */
export function passwordProblems(password: string, label = 'password'): string[] {
  const length = [...password].length;
  const problems = length < MIN_PASSWORD_LENGTH ? [`${label} must be at least ${MIN_PASSWORD_LENGTH} characters long`] : [];
  problems.push(...CLASS_RULES.filter(([rule]) => !rule.test(password)).map(([, message]) => `${label} ${message}`));
  if (length > MAX_PASSWORD_LENGTH) problems.push(`${label} must be shorter than or equal to ${MAX_PASSWORD_LENGTH} characters`);
  return problems;
}

/**
 * The same rules as the OpenAPI document states them for a new password: the lengths, and the
 * classes as one pattern of lookaheads built from CLASS_RULES (test/openapi-agreement.test.ts
 * holds the two to the same answers).
 */
export const newPasswordSchema = {
  type: 'string',
  minLength: MIN_PASSWORD_LENGTH,
  maxLength: MAX_PASSWORD_LENGTH,
  pattern: `^${CLASS_RULES.map(([rule]) => `(?=[\\s\\S]*${rule.source})`).join('')}`,
  description: `A new password: ${PASSWORD_RULES_IN_WORDS}`,
};

export function hashPassword(password: string): Promise<string> {
  return hash(password, { algorithm: Algorithm.Argon2id });
}

// Compared against when the account does not exist, so a login takes as long either way.
const DUMMY_HASH = hashPassword('dummy-password-for-timing-A1!');

export async function verifyPassword(storedHash: string | undefined, password: string): Promise<boolean> {
  if (!storedHash) {
    await verify(await DUMMY_HASH, password).catch(() => false);
    return false;
  }
  return verify(storedHash, password).catch(() => false);
}
