// A request that carries many writes (a bulk write) counts as one request per item against
// every limit that counted it: the limits count it once on the way in, before its body is read,
// and its handler, once it knows how many items the body holds, charges the rest (chargeItems)
// before writing anything. A limit without that many left refuses it with 429 then.
import type { Context } from 'koa';
import { HttpError } from '../errors.js';
import { byRestriction, rateLimitHeaders, tooManyRequests, type Count } from './headers.js';
import type { LimitPolicy } from './policy.js';

/** Charges `extra` more requests to the limits that counted this one; throws a 429 when one has not that many left. */
export type ExtraCharge = (extra: number) => Promise<void>;

const CHARGE = Symbol('rate-limit charge');

export function offerCharge(ctx: Context, charge: ExtraCharge) {
  (ctx.state as Record<PropertyKey, unknown>)[CHARGE] = charge;
}

/**
 * Counts a request holding `items` writes as that many requests (the limits counted one already).
 * Nothing to do when no limit counted it (limits off, an exempt path, the store failing).
 */
export async function chargeItems(ctx: Context, items: number): Promise<void> {
  const charge = (ctx.state as Record<PropertyKey, unknown>)[CHARGE] as ExtraCharge | undefined;
  if (charge && items > 1) await charge(items - 1);
}

/** Whole seconds until a window frees up, at least 1. */
const waitFor = (count: Count, now: number) => Math.max(1, Math.min(Math.ceil(count.policy.windowSeconds), Math.ceil(count.resetAt - now)));

/**
 * 429 for a request whose items a limit cannot take: a plain one when the limit is used up, else
 * one that says how many it had left for the request (its own count on the way in included).
 */
export function tooManyItems(refused: Count[], items: number, now: number): HttpError {
  const used = refused.filter((c) => c.remaining === 0);
  if (used.length) return tooManyRequests(used, now);
  const tightest = [...refused].sort(byRestriction)[0];
  const wait = waitFor(tightest, now);
  const { name, requests } = tightest.policy;
  const advice = items > requests ? `send at most ${requests} items per request` : `retry in ${wait} s, or send fewer items`;
  return new HttpError(
    429,
    `Too Many Requests: this request counts as ${items} requests (one per item) and the limit "${name}" (${requests} requests per ${Math.ceil(tightest.policy.windowSeconds)} s) had ${tightest.remaining + 1} left for it; ${advice}`,
    { 'Retry-After': String(wait) },
  );
}

export interface Charging {
  /** Each limit that counted the request, with its bucket and its count. */
  counted: Array<{ policy: LimitPolicy; bucket: string; count: Count }>;
  take(policy: LimitPolicy, bucket: string, n: number): Promise<Count>;
  /** Waits for the takes as the request's own counts were waited for (the store's time limit); a failed one is skipped. */
  within(takes: Array<Promise<Count>>): Promise<Array<Count | { error: unknown }>>;
  failed(err: unknown): void;
  now(): number;
}

/** The charge of a request its limits let through: `extra` more of each, refused (429, nothing more taken) when a limit has fewer left. */
export function extraCharge(ctx: Context, charging: Charging): ExtraCharge {
  return async (extra) => {
    const items = extra + 1;
    const short = charging.counted.filter((c) => c.count.remaining < extra).map((c) => c.count);
    if (short.length) throw tooManyItems(short, items, charging.now());
    const taken = await charging.within(charging.counted.map((c) => charging.take(c.policy, c.bucket, extra)));
    const failure = taken.find((c): c is { error: unknown } => 'error' in c);
    if (failure) charging.failed(failure.error);
    const counts = taken.filter((c): c is Count => !('error' in c)).sort(byRestriction);
    if (!counts.length) return;
    const at = charging.now();
    ctx.set(rateLimitHeaders(counts, at));
    const refused = counts.filter((c) => c.refused);
    if (refused.length) throw tooManyItems(refused, items, at);
  };
}
