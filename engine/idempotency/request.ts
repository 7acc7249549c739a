// What identifies an idempotent request: its key (the Idempotency-Key header, 1–255 visible
// characters), whose it is (tenant and user: one caller's key never meets another's), and a
// fingerprint of what it asks (method, path and body), so a key reused for another request is
// told apart from a retry.
import { createHash } from 'node:crypto';
import { badRequest } from '../errors.js';

export const IDEMPOTENCY_KEY_HEADER = 'Idempotency-Key';
export const REPLAYED_HEADER = 'Idempotent-Replayed';

const KEY_PATTERN = /^[\x21-\x7e]{1,255}$/;

/**
 * The key a request sends, or undefined; a key of the wrong form is a 400. An empty header is
 * no key (the OpenAPI document's pattern allows it: engine/openapi/idempotency-fragments.ts).
 */
export function idempotencyKeyOf(value: string): string | undefined {
  if (value === '') return undefined;
  if (!KEY_PATTERN.test(value)) throw badRequest(`${IDEMPOTENCY_KEY_HEADER} must be 1 to 255 visible ASCII characters (no spaces)`);
  return value;
}

/** JSON with every object's keys in order: the same body sent with its keys reordered is the same request. */
function canonical(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(canonical).join(',')}]`;
  if (value && typeof value === 'object') {
    const record = value as Record<string, unknown>;
    const keys = Object.keys(record)
      .filter((k) => record[k] !== undefined)
      .sort();
    return `{${keys.map((k) => `${JSON.stringify(k)}:${canonical(record[k])}`).join(',')}}`;
  }
  return JSON.stringify(value) ?? 'null';
}

/** The request's fingerprint: method, path (with its query), the values of the headers that change what it does, and body. */
export function fingerprintOf(method: string, url: string, body: unknown, headers: readonly string[] = []): string {
  return createHash('sha256').update(`${method} ${url}\n${canonical(headers)}\n${canonical(body)}`).digest('base64url');
}

/** Whose key it is. */
export interface KeyOwner {
  tenantId: string;
  userId: string;
}
