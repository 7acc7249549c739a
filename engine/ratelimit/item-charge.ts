// A request that carries many writes (a bulk write) counts as one request per item against
// every limit that counted it: the limits count it once on the way in, before its body is read,
// and its handler, once it knows how many items the body holds, charges the rest (chargeItems)
// before writing anything. A limit without that many left refuses it with 429 then.
import type { Context } from 'koa';
import { HttpError } from '../errors.js';
import { byRestriction, rateLimitHeaders, tooManyRequests, type Count } from './headers.js';
import type { LimitPolicy } from './policy.js';

const CHARGE = Symbol('rate-limit charge');

/**
 * What a request's limits leave for its handler to charge more items to: the counts they took and
 * whose buckets they took them in. Kept as data, one object per request; the charge itself is made
 * only by a handler that charges (a bulk write), not on every request.
 */
export interface Offer {
  charging: Charging;
  /** Sorted by byRestriction. */
  counts: Count[];
  /** The buckets of the request: its address's, and its caller's (the address's when anonymous). */
  address: string;
  caller: string;
}

export function offerCharge(ctx: Context, offer: Offer) {
  (ctx.state as Record<PropertyKey, unknown>)[CHARGE] = offer;
}

/**
 * Counts a request holding `items` writes as that many requests (the limits counted one already).
 * Nothing to do when no limit counted it (limits off, an exempt path, the store failing).
 */
export async function chargeItems(ctx: Context, items: number): Promise<void> {
  const offer = (ctx.state as Record<PropertyKey, unknown>)[CHARGE] as Offer | undefined;
  if (offer && items > 1) await chargeExtra(ctx, offer, items - 1);
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

/** How a middleware's limits take more requests: the same for every request it counts. */
export interface Charging {
  take(policy: LimitPolicy, bucket: string, n: number): Promise<Count>;
  /** Waits for the takes as the request's own counts were waited for (the store's time limit); a failed one is skipped. */
  within(takes: Array<Promise<Count>>): Promise<Array<Count | { error: unknown }>>;
  failed(err: unknown): void;
  now(): number;
}

/** The bucket a policy counts a request in. */
export const bucketOf = (policy: LimitPolicy, address: string, caller: string) => (policy.per === 'address' ? address : caller);

/** Charges a request its limits let through `extra` more of each; refused (429, nothing more taken) when a limit has fewer left. */
async function chargeExtra(ctx: Context, { charging, counts: counted, address, caller }: Offer, extra: number): Promise<void> {
  const items = extra + 1;
  const short = counted.filter((c) => c.remaining < extra);
  if (short.length) throw tooManyItems(short, items, charging.now());
  const taken = await charging.within(counted.map((c) => charging.take(c.policy, bucketOf(c.policy, address, caller), extra)));
  const failure = taken.find((c): c is { error: unknown } => 'error' in c);
  if (failure) charging.failed(failure.error);
  const counts = taken.filter((c): c is Count => !('error' in c)).sort(byRestriction);
  if (!counts.length) return;
  const at = charging.now();
  ctx.set(rateLimitHeaders(counts, at));
  const refused = counts.filter((c) => c.refused);
  if (refused.length) throw tooManyItems(refused, items, at);
}
