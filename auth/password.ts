// Passwords: SPEC's rules, argon2id hashing (memory-hard, off the main thread in @node-rs/argon2).
import { hash, verify, Algorithm } from '@node-rs/argon2';

export const PASSWORD_RULES: Array<[RegExp, string]> = [
  [/^.{8,}$/s, 'must be at least 8 characters long'],
  [/[A-Z]/, 'must contain at least one uppercase letter'],
  [/[a-z]/, 'must contain at least one lowercase letter'],
  [/\d/, 'must contain at least one number'],
  [/[^A-Za-z0-9]/, 'must contain at least one special character'],
];

export const MAX_PASSWORD_LENGTH = 128;

/** One message per broken rule, e.g. "password must contain at least one number". */
export function passwordProblems(password: string, label = 'password'): string[] {
  const problems = PASSWORD_RULES.filter(([rule]) => !rule.test(password)).map(([, message]) => `${label} ${message}`);
  if (password.length > MAX_PASSWORD_LENGTH) problems.push(`${label} must be shorter than or equal to ${MAX_PASSWORD_LENGTH} characters`);
  return problems;
}

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
