// Counting one request as several (a bulk write counts as many requests as it has items) in one
// step per limit, whatever the store: the in-memory store's counts, a Lua script on Redis, or
// the cluster primary's leases. Running koa-ratelimit's probe once per item would not do: its
// Redis script keeps one member per request named by the time in a tenth of a millisecond, so
// items counted within one would count once, and a thousand probes are a thousand commands.
import type { Redis } from 'ioredis';

/** What a take of `n` requests found: taken (then `left` after them) or refused (nothing taken; `left` is what there was). */
export interface Taken {
  taken: boolean;
  left: number;
  /** Unix seconds at which the window frees up (in Redis: when its oldest counted request leaves it). */
  resetAt: number;
}

export type TakeMany = (key: string, max: number, durationMs: number, n: number) => Promise<Taken>;

/** koa-ratelimit's memory entry: `remaining` is what was left before the last request it counted (which it takes off lazily, at the next). */
interface MemoryEntry {
  id?: string;
  reset: number;
  remaining: number;
  total: number;
}

/** Takes `n` at once from koa-ratelimit's memory counts (its Map, keyed as its driver keys them). */
export function memoryTakeMany(db: Map<string, unknown>): TakeMany {
  return async (key, max, durationMs, n) => {
    const now = Date.now() / 1000;
    const entry = db.get(key) as MemoryEntry | undefined;
    if (!entry || entry.reset < now) {
      // A window that began after the request's own count: nothing counted in it yet.
      if (n > max) return { taken: false, left: max, resetAt: now + durationMs / 1000 };
      db.set(key, { reset: now + durationMs / 1000, remaining: max - n + 1, total: max });
      return { taken: true, left: max - n, resetAt: now + durationMs / 1000 };
    }
    const left = Math.max(0, entry.remaining - 1);
    if (left < n) return { taken: false, left, resetAt: entry.reset };
    entry.remaining -= n;
    return { taken: true, left: left - n, resetAt: entry.reset };
  };
}

/**
 * The same sorted set async-ratelimiter's script keeps (a member per request, scored and named by
 * its time in milliseconds), `n` members added at once when the window has room for them all, none
 * otherwise. Members are named by the time, a salt and their number, so that no two collide; they
 * still read as that time, which async-ratelimiter's script takes the oldest member's name for.
 */
const TAKE_MANY_SCRIPT = `
local key = KEYS[1]
local now = tonumber(ARGV[1])
local duration = tonumber(ARGV[2])
local max = tonumber(ARGV[3])
local n = tonumber(ARGV[4])
local salt = ARGV[5]
redis.call('ZREMRANGEBYSCORE', key, 0, now - duration)
local count = redis.call('ZCARD', key)
local oldest = now
if count > 0 then oldest = tonumber(redis.call('ZRANGE', key, 0, 0)[1]) end
local left = max - count
if left < n then return {left, math.floor((oldest + duration) / 1000), 0} end
local stamp = string.format('%.4f', now) .. salt
local args = {}
for i = 1, n do
  args[#args + 1] = now
  args[#args + 1] = stamp .. string.format('%06d', i)
  if #args >= 1000 then
    redis.call('ZADD', key, unpack(args))
    args = {}
  end
end
if #args > 0 then redis.call('ZADD', key, unpack(args)) end
redis.call('PEXPIRE', key, duration)
return {left - n, math.floor((oldest + duration) / 1000), 1}
`;

type WithTakeMany = Redis & { rateLimitTakeMany(key: string, now: number, duration: number, max: number, n: number, salt: string): Promise<[number, number, number]> };

export function redisTakeMany(db: Redis): TakeMany {
  db.defineCommand('rateLimitTakeMany', { numberOfKeys: 1, lua: TAKE_MANY_SCRIPT });
  return async (key, max, durationMs, n) => {
    const salt = String(Math.floor(Math.random() * 1e6)).padStart(6, '0');
    const [left, resetAt, taken] = await (db as WithTakeMany).rateLimitTakeMany(key, Date.now(), durationMs, max, n, salt);
    return { taken: taken === 1, left: Math.max(0, left), resetAt };
  };
}

/**
 * A store that answers async-ratelimiter's one command (the cluster primary's leases): `n` of
 * them, one after the other, stopping at the first refused. What was taken before stays taken.
 */
export function oneByOneTakeMany(count: (key: string, durationMs: number, max: number) => Promise<[number, number, number]>): TakeMany {
  return async (key, max, durationMs, n) => {
    let last: [number, number, number] = [max, Date.now() / 1000 + durationMs / 1000, max];
    for (let i = 0; i < n; i++) {
      last = await count(key, durationMs, max);
      if (last[0] <= 0) return { taken: false, left: 0, resetAt: last[1] };
    }
    return { taken: true, left: Math.max(0, last[0] - 1), resetAt: last[1] };
  };
}
