// Idempotent requests kept in Redis (REDIS_URL): one hash per caller and key, expiring with the
// entry. Each step is one script, so claiming and completing are atomic against every other
// process and instance; the clock is Redis's own (TIME), the same for all of them.
// Unlike the rate limits, which fail open, a request with a key cannot go on without its entry:
// while Redis does not answer, such a request is a 503 (a retry later is safe).
import { randomUUID } from 'node:crypto';
import { createRequire } from 'node:module';
import type { Redis } from 'ioredis';
import { HttpError } from '../errors.js';
import { redisReady } from '../redis-ready.js';
import type { KeyOwner } from './request.js';
import type { Claim, IdempotencyStore, Kept, StoreTimes } from './store.js';

// ioredis is loaded only when REDIS_URL is set, as the rate limits' store does.
const require = createRequire(import.meta.url);

/** KEYS[1] the entry; ARGV fingerprint, ttl ms, running ms, the claim's token. */
const CLAIM = `
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
local state = redis.call('HGET', KEYS[1], 'state')
if (not state) or (state == 'running' and tonumber(redis.call('HGET', KEYS[1], 'claimedAt')) <= now - tonumber(ARGV[3])) then
  redis.call('DEL', KEYS[1])
  redis.call('HSET', KEYS[1], 'fingerprint', ARGV[1], 'state', 'running', 'token', ARGV[4], 'claimedAt', now)
  redis.call('PEXPIRE', KEYS[1], ARGV[2])
  return {'claimed', '', ''}
end
return {state, redis.call('HGET', KEYS[1], 'fingerprint') or '', redis.call('HGET', KEYS[1], 'answer') or ''}
`;

/** KEYS[1] the entry; ARGV the claim's token, answer. The entry keeps the expiry its claim set. */
const COMPLETE = `
if redis.call('HGET', KEYS[1], 'state') == 'running' and redis.call('HGET', KEYS[1], 'token') == ARGV[1] then
  redis.call('HSET', KEYS[1], 'state', 'done', 'answer', ARGV[2])
end
return 1
`;

/** KEYS[1] the entry; ARGV the claim's token. */
const RELEASE = `
if redis.call('HGET', KEYS[1], 'state') == 'running' and redis.call('HGET', KEYS[1], 'token') == ARGV[1] then
  redis.call('DEL', KEYS[1])
end
return 1
`;

type Scripted = Redis & {
  idempotencyClaim(key: string, fingerprint: string, ttlMs: number, runningMs: number, token: string): Promise<[string, string, string]>;
  idempotencyComplete(key: string, token: string, answer: string): Promise<number>;
  idempotencyRelease(key: string, token: string): Promise<number>;
};

const unavailable = () => new HttpError(503, 'Idempotency keys cannot be checked right now (their store does not answer): retry later');

export function redisStore(url: string, prefix: string, times: StoreTimes, timeoutMs: number, onFailure: (err: unknown) => void): IdempotencyStore {
  const { Redis } = require('ioredis') as typeof import('ioredis');
  const redis = new Redis(url, {
    enableOfflineQueue: false,
    maxRetriesPerRequest: 0,
    commandTimeout: timeoutMs,
    retryStrategy: (attempt) => Math.min(attempt * 200, 2000),
  }) as Scripted;
  // Failures reach the request that met them (a 503); the connection retries by itself.
  redis.on('error', () => {});
  redis.defineCommand('idempotencyClaim', { numberOfKeys: 1, lua: CLAIM });
  redis.defineCommand('idempotencyComplete', { numberOfKeys: 1, lua: COMPLETE });
  redis.defineCommand('idempotencyRelease', { numberOfKeys: 1, lua: RELEASE });
  // Under the deployment's prefix as the rate limits' keys are (`<prefix>:…`).
  const entry = (owner: KeyOwner, key: string) => `${prefix}:idempotency:${owner.tenantId}:${owner.userId}:${key}`;
  const guarded = async <T>(command: () => Promise<T>): Promise<T> => {
    try {
      return await command();
    } catch (err) {
      onFailure(err);
      throw unavailable();
    }
  };

  return {
    async claim(owner, key, fingerprint): Promise<Claim> {
      const token = randomUUID();
      const [state, stored, answer] = await guarded(() => redis.idempotencyClaim(entry(owner, key), fingerprint, times.ttlMs, times.runningMs, token));
      if (state === 'claimed') return { kind: 'claimed', token };
      if (stored !== fingerprint) return { kind: 'mismatch' };
      if (state === 'running') return { kind: 'running' };
      return { kind: 'done', answer: JSON.parse(answer) as Kept };
    },
    async complete(owner, key, token, answer) {
      await guarded(() => redis.idempotencyComplete(entry(owner, key), token, JSON.stringify(answer)));
    },
    async release(owner, key, token) {
      await guarded(() => redis.idempotencyRelease(entry(owner, key), token));
    },
    ready: (waitMs) => redisReady(redis, waitMs),
    async close() {
      redis.disconnect();
    },
  };
}
