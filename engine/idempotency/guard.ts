// Idempotent routes (a route declared `idempotent: true`): a request with an Idempotency-Key runs
// once per caller and key. The first claims the key and runs; a success (2xx) is kept with its
// status, the headers that describe it and its body, and a retry with the same key and request
// replays it (Idempotent-Replayed: true) without running again. A failure gives the key back,
// having written nothing, so a retry runs again. The same key with another request is a 422; a
// retry while the first runs, a 409. Without the header a request runs as it always does.
import type { Context, Middleware, Next } from 'koa';
import type { Knex } from 'knex';
import type { Config } from '../config/config.js';
import { HttpError } from '../errors.js';
import { callerOf } from '../http/context.js';
import type { LogEvent } from '../log/log.js';
import { databaseStore } from './database-store.js';
import { redisStore } from './redis-store.js';
import { fingerprintOf, idempotencyKeyOf, IDEMPOTENCY_KEY_HEADER, REPLAYED_HEADER, type KeyOwner } from './request.js';
import type { IdempotencyStore, StoredAnswer } from './store.js';

/** The headers of an answer a replay repeats: those describing the answer, not the exchange. */
const KEPT_HEADERS = ['content-type', 'etag', 'location', 'link'];

/** The longest a request waits for Redis to claim or complete its key. */
const REDIS_TIMEOUT_MS = 2000;

export interface Idempotency {
  /** Where entries live, as the docs and the log say it. */
  kind: 'database' | 'redis';
  /**
   * The handler of an idempotent route, wrapped; `headers` are the request headers that change
   * what it does (Organization-Id), part of a request's fingerprint with its method, URL and body.
   */
  guard(handler: Middleware, headers: readonly string[]): Middleware;
  ready(timeoutMs: number): Promise<void>;
  close(): Promise<void>;
}

/** The least time between two log lines about the store failing (an outage is not a line per request). */
const FAILURE_LOG_MS = 10_000;

export const keyReusedWithOtherRequest = () =>
  new HttpError(422, `This ${IDEMPOTENCY_KEY_HEADER} was used with another request (method, path or body): send a new key for a new request`);
export const keyStillRunning = () => new HttpError(409, `A request with this ${IDEMPOTENCY_KEY_HEADER} is still running: retry once it has answered`, { 'Retry-After': '1' });

function replay(ctx: Context, answer: StoredAnswer) {
  ctx.status = answer.status;
  for (const [name, value] of Object.entries(answer.headers)) ctx.set(name, value);
  if (answer.body !== '') ctx.body = answer.body;
  if (answer.headers['content-type']) ctx.type = answer.headers['content-type'];
  ctx.set(REPLAYED_HEADER, 'true');
}

/** The answer as a retry will get it; the body becomes its JSON text, which is what is sent too. */
function keptAnswer(ctx: Context): StoredAnswer {
  const headers: Record<string, string> = {};
  for (const name of KEPT_HEADERS) {
    const value = ctx.response.get(name);
    if (value) headers[name] = String(value);
  }
  let body = '';
  if (typeof ctx.body === 'string') body = ctx.body;
  else if (ctx.body !== undefined && ctx.body !== null) {
    body = JSON.stringify(ctx.body);
    const type = ctx.response.get('content-type');
    ctx.body = body;
    ctx.type = type || 'application/json';
  }
  return { status: ctx.status, headers, body };
}

const describe = (err: unknown) => String((err as Error)?.message ?? err);

export function createIdempotency(config: Config, db: Knex, log: LogEvent): Idempotency {
  const { runningMs } = config.idempotency;
  // An entry lives at least as long as a claim may run: a running request never loses its key to expiry.
  const times = { ttlMs: Math.max(config.idempotency.ttlSeconds * 1000, runningMs), runningMs };
  let loggedAt = 0;
  const storeFailed = (err: unknown) => {
    if (Date.now() - loggedAt < FAILURE_LOG_MS) return;
    loggedAt = Date.now();
    log('warn', 'idempotency keys: Redis does not answer; requests with a key are answered 503', { error: describe(err) });
  };
  const store: IdempotencyStore = config.redisUrl
    ? redisStore(config.redisUrl, config.rateLimits.prefix, times, REDIS_TIMEOUT_MS, storeFailed)
    : databaseStore(db, times, (err) => log('warn', 'idempotency keys: sweeping expired keys failed', { error: describe(err) }));

  return {
    kind: config.redisUrl ? 'redis' : 'database',
    guard: (handler, headers) =>
      async function idempotent(ctx: Context, next: Next) {
        const key = idempotencyKeyOf(ctx.get(IDEMPOTENCY_KEY_HEADER));
        if (key === undefined) return handler(ctx, next);
        const caller = callerOf(ctx);
        const owner: KeyOwner = { tenantId: caller.tenantId, userId: caller.userId };
        const fingerprint = fingerprintOf(ctx.method, ctx.url, ctx.request.body, headers.map((name) => ctx.get(name)));
        const claim = await store.claim(owner, key, fingerprint);
        if (claim.kind === 'mismatch') throw keyReusedWithOtherRequest();
        if (claim.kind === 'running') throw keyStillRunning();
        if (claim.kind === 'done') return replay(ctx, claim.answer);
        let succeeded = false;
        try {
          await handler(ctx, next);
          succeeded = ctx.status >= 200 && ctx.status < 300;
        } finally {
          // Failed, it wrote nothing (every write is all or nothing): the key is free for a retry.
          if (!succeeded) await store.release(owner, key, claim.token).catch(() => {});
        }
        if (!succeeded) return;
        const answer = keptAnswer(ctx);
        // Once more after a failure: a kept answer is what stops a later retry from writing twice.
        for (let attempt = 1; ; attempt++) {
          try {
            await store.complete(owner, key, claim.token, answer);
            return;
          } catch (err) {
            if (attempt === 2) {
              log('warn', 'idempotency keys: an answer could not be kept; the key stays claimed until it counts as abandoned', { error: describe(err) });
              return;
            }
          }
        }
      },
    ready: (timeoutMs) => store.ready(timeoutMs),
    close: () => store.close(),
  };
}
