// Idempotent routes (a route declared `idempotent: true`): a request with an Idempotency-Key runs
// once per caller and key. The first claims the key and runs; a success (2xx) is kept with its
// status, the headers that describe it and its body, and a retry with the same key and request
// replays it (Idempotent-Replayed: true) without running again. A failure gives the key back,
// having written nothing, so a retry runs again. The same key with another request is a 422; a
// retry while the first runs, a 409. Without the header a request runs as it always does.
// A create that declares how to answer a row again (`replay`) claims nothing beforehand on the
// database store: its handler writes the key in the create's own statement (keyed-create.ts),
// and only when that finds the key taken, or the request fails, is the key looked up.
import type { Context, Middleware, Next } from 'koa';
import type { Knex } from 'knex';
import type { Config } from '../config/config.js';
import { HttpError } from '../errors.js';
import { mapDatabaseError } from '../db/errors.js';
import { callerOf } from '../http/context.js';
import type { LogEvent } from '../log/log.js';
import type { IdempotentDeclaration } from '../route.js';
import { databaseStore, type DatabaseStore } from './database-store.js';
import { KeptAnswer, KeyedCreate, KeyTaken, setKeyedCreate } from './keyed-create.js';
import { redisStore } from './redis-store.js';
import { fingerprintOf, idempotencyKeyOf, IDEMPOTENCY_KEY_HEADER, REPLAYED_HEADER, type KeyOwner } from './request.js';
import type { Claim, IdempotencyStore, Kept, StoredAnswer } from './store.js';

/** The headers of an answer a replay repeats: those describing the answer, not the exchange. */
const KEPT_HEADERS = ['content-type', 'etag', 'location', 'link'];

/** The longest a request waits for Redis to claim or complete its key. */
const REDIS_TIMEOUT_MS = 2000;

export interface Idempotency {
  /** Where entries live, as the docs and the log say it. */
  kind: 'database' | 'redis';
  /** The handler of an idempotent route, wrapped as its declaration says (route.ts). */
  guard(handler: Middleware, declaration: IdempotentDeclaration): Middleware;
  ready(timeoutMs: number): Promise<void>;
  close(): Promise<void>;
}

/** The least time between two log lines about the store failing (an outage is not a line per request). */
const FAILURE_LOG_MS = 10_000;

export const keyReusedWithOtherRequest = () =>
  new HttpError(422, `This ${IDEMPOTENCY_KEY_HEADER} was used with another request (method, path or body): send a new key for a new request`);
export const keyStillRunning = () => new HttpError(409, `A request with this ${IDEMPOTENCY_KEY_HEADER} is still running: retry once it has answered`, { 'Retry-After': '1' });

function replay(ctx: Context, answer: Kept, declaration: IdempotentDeclaration) {
  if ('row' in answer) {
    // Kept by a create's own statement: the route answers the row as it did the first time. A
    // route that cannot (none declared) is not the one that kept it: another request.
    if (!declaration.replay) throw keyReusedWithOtherRequest();
    declaration.replay(ctx, JSON.parse(answer.row));
    ctx.status = answer.status;
  } else {
    ctx.status = answer.status;
    for (const [name, value] of Object.entries(answer.headers)) ctx.set(name, value);
    if (answer.body !== '') ctx.body = answer.body;
    if (answer.headers['content-type']) ctx.type = answer.headers['content-type'];
  }
  ctx.set(REPLAYED_HEADER, 'true');
}

/** A claim that is not this request's, as the client hears it. */
function answerHeld(ctx: Context, claim: Exclude<Claim, { kind: 'claimed' }>, declaration: IdempotentDeclaration): void {
  if (claim.kind === 'mismatch') throw keyReusedWithOtherRequest();
  if (claim.kind === 'running') throw keyStillRunning();
  replay(ctx, claim.answer, declaration);
}

/** How many times a create runs again after finding its key's entry expired or abandoned (and removing it). */
const TAKE_OVER_ATTEMPTS = 2;

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
  const database = config.redisUrl ? undefined : databaseStore(db, times, (err) => log('warn', 'idempotency keys: sweeping expired keys failed', { error: describe(err) }));
  const store: IdempotencyStore = database ?? redisStore(config.redisUrl!, config.rateLimits.prefix, times, REDIS_TIMEOUT_MS, storeFailed);

  /** After a claimed request: a success's answer is kept; anything else gives the key back (it wrote nothing). */
  async function settle(ctx: Context, owner: KeyOwner, key: string, token: string) {
    if (ctx.status < 200 || ctx.status >= 300) return store.release(owner, key, token).catch(() => {});
    const answer = keptAnswer(ctx);
    // Once more after a failure: a kept answer is what stops a later retry from writing twice.
    for (let attempt = 1; ; attempt++) {
      try {
        return await store.complete(owner, key, token, answer);
      } catch (err) {
        if (attempt === 2) {
          log('warn', 'idempotency keys: an answer could not be kept; the key stays claimed until it counts as abandoned', { error: describe(err) });
          return;
        }
      }
    }
  }

  /** Runs the handler holding a claim made before it. */
  async function runClaimed(ctx: Context, next: Next, handler: Middleware, owner: KeyOwner, key: string, token: string) {
    try {
      await handler(ctx, next);
    } catch (err) {
      // Every write is all or nothing: the failed request wrote nothing, the key is free for a retry.
      await store.release(owner, key, token).catch(() => {});
      throw err;
    }
    await settle(ctx, owner, key, token);
  }

  /**
   * A create whose key its handler takes (keyed-create.ts): in the create's own statement, or
   * claimed apart when the create needs more. When the statement found the key taken, or the
   * request failed before it (a 4xx: the retry of a request that succeeded may fail today, its
   * reference deleted since), the key is looked up: its kept answer, 409 or 422; an expired or
   * abandoned entry is removed and the create runs again.
   */
  async function runKeyedCreate(ctx: Context, next: Next, handler: Middleware, declaration: IdempotentDeclaration, keys: DatabaseStore, owner: KeyOwner, key: string, fingerprint: string) {
    for (let attempt = 0; ; attempt++) {
      let refused = false;
      const keyed = new KeyedCreate(
        (status) => keys.keyInStatement(owner, key, fingerprint, status),
        async () => {
          const claim = await store.claim(owner, key, fingerprint);
          if (claim.kind === 'claimed') return claim.token;
          refused = true;
          if (claim.kind === 'done') throw new KeptAnswer(claim.answer);
          return answerHeld(ctx, claim, declaration) as never;
        },
      );
      setKeyedCreate(ctx, keyed);
      const token = () => (keyed.taken?.by === 'claim' ? keyed.taken.token : undefined);
      try {
        await handler(ctx, next);
      } catch (err) {
        if (err instanceof KeptAnswer) return replay(ctx, err.answer, declaration);
        if (refused) throw err;
        const claimed = token();
        if (claimed) {
          await store.release(owner, key, claimed).catch(() => {});
          throw err;
        }
        const taken = err instanceof KeyTaken || keys.isKeyConflict(err);
        // A client's error (a database one included: a unique index no rule declares) may be the
        // retry of a success whose record now stands in its way: the key says.
        const clientError = err instanceof HttpError ? err.status < 500 : (mapDatabaseError(err)?.status ?? 500) < 500;
        if (!taken && !clientError) throw err;
        const holder = await keys.lookUp(owner, key, fingerprint);
        if (holder.kind === 'none' || holder.kind === 'stale') {
          if (!taken) throw err;
          // None: a racing statement is writing the key and has not committed yet.
          if (holder.kind === 'none' || attempt >= TAKE_OVER_ATTEMPTS) throw keyStillRunning();
          await keys.removeStale(owner, key);
          continue;
        }
        return answerHeld(ctx, holder, declaration);
      }
      const claimed = token();
      if (claimed) await settle(ctx, owner, key, claimed);
      // A handler that ignored its key (a module's mistake) wrote without it, and will again on
      // a retry: nothing here can undo that, so it is said loudly, once per request.
      else if (!keyed.taken) log('error', 'idempotency keys: a route declaring idempotent.replay answered without taking its key (keyedCreateOf): its retries run again', { path: ctx.path });
      return;
    }
  }

  return {
    kind: config.redisUrl ? 'redis' : 'database',
    guard: (handler, declaration) =>
      async function idempotent(ctx: Context, next: Next) {
        const key = idempotencyKeyOf(ctx.get(IDEMPOTENCY_KEY_HEADER));
        if (key === undefined) return handler(ctx, next);
        const caller = callerOf(ctx);
        const owner: KeyOwner = { tenantId: caller.tenantId, userId: caller.userId };
        const fingerprint = fingerprintOf(ctx.method, ctx.url, ctx.request.body, declaration.headers.map((name) => ctx.get(name)));
        if (declaration.replay && database) return runKeyedCreate(ctx, next, handler, declaration, database, owner, key, fingerprint);
        const claim = await store.claim(owner, key, fingerprint);
        if (claim.kind !== 'claimed') return answerHeld(ctx, claim, declaration);
        await runClaimed(ctx, next, handler, owner, key, claim.token);
      },
    ready: (timeoutMs) => store.ready(timeoutMs),
    close: () => store.close(),
  };
}
