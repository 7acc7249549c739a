// Idempotent requests kept in the database (the default): one row per caller and key in
// idempotency_key (table.ts). Claiming is one insert that only an expired or abandoned row lets
// through, so of two requests racing with one key, on any process or instance, one claims it.
// Expired rows are swept by the processes that use the table, at most every SWEEP_MS each.
// A create of one row needs no claim of its own: its statement writes the key with the record
// (keyInStatement), and lookUp says what holds a key that statement found taken.
import { randomUUID } from 'node:crypto';
import type { Knex } from 'knex';
import { nativeError } from '../db/errors.js';
import { run } from '../resource/sql/runner.js';
import type { SqlText } from '../resource/sql/text.js';
import type { KeyInStatement } from '../resource/sql/write.js';
import type { KeyOwner } from './request.js';
import type { Claim, IdempotencyStore, Kept, StoreTimes } from './store.js';
import { IDEMPOTENCY_TABLE } from './table.js';

const SWEEP_MS = 10 * 60_000;
/** Rows one sweep statement deletes, and statements per sweep: short statements, never one huge delete. */
const SWEEP_BATCH = 1000;
const SWEEP_BATCHES = 50;

const T = `"${IDEMPOTENCY_TABLE}"`;
const ENTRY = `"tenantId" = $1 and "userId" = $2 and "key" = $3`;

const CLAIM =
  `insert into ${T} ("tenantId", "userId", "key", "fingerprint", "state", "token", "claimedAt", "expiresAt") ` +
  `values ($1, $2, $3, $4, 'running', $7, now(), now() + $5::float8 * interval '1 millisecond') ` +
  `on conflict ("tenantId", "userId", "key") do update set "fingerprint" = excluded."fingerprint", "state" = 'running', "token" = excluded."token", "answer" = null, ` +
  `"claimedAt" = excluded."claimedAt", "expiresAt" = excluded."expiresAt" ` +
  `where ${T}."expiresAt" <= now() or (${T}."state" = 'running' and ${T}."claimedAt" <= now() - $6::float8 * interval '1 millisecond') ` +
  'returning 1 as "claimed"';
/** An entry past its expiry, or claimed longer than the running time ago and never completed ($4: that time). */
const STALE = `("expiresAt" <= now() or ("state" = 'running' and "claimedAt" <= now() - $4::float8 * interval '1 millisecond'))`;
const FIND = `select "fingerprint", "state", "answer", ${STALE} as "stale" from ${T} where ${ENTRY}`;
const REMOVE_STALE = `delete from ${T} where ${ENTRY} and ${STALE}`;
const COMPLETE = `update ${T} set "state" = 'done', "answer" = $5::jsonb where ${ENTRY} and "token" = $4 and "state" = 'running'`;
const RELEASE = `delete from ${T} where ${ENTRY} and "token" = $4 and "state" = 'running'`;
// A batch at a time, rows another sweeper holds left to it.
const SWEEP =
  `with swept as (delete from ${T} where ctid = any(array(select ctid from ${T} where "expiresAt" < now() limit ${SWEEP_BATCH} for update skip locked)) returning 1) ` +
  'select count(*)::int as "n" from swept';

/** What holds a key: nothing, an entry to take over (expired or abandoned), or what claim() would say. */
export type Holder = { kind: 'none' } | { kind: 'stale' } | Exclude<Claim, { kind: 'claimed' }>;

function isKeyConflict(err: unknown): boolean {
  const native = nativeError(err);
  return native?.code === '23505' && (native.table === IDEMPOTENCY_TABLE || String(native.constraint).startsWith(IDEMPOTENCY_TABLE));
}

export interface DatabaseStore extends IdempotencyStore {
  /** Deletes every expired entry now; how many there were. */
  sweep(): Promise<number>;
  /**
   * The key written by a create's own statement (sql/write.ts): the row goes in only while no
   * entry holds the key and no other statement is writing it (a transaction-scoped advisory lock),
   * and its entry, done, holds the status and the row's JSON image for a replay.
   */
  keyInStatement(owner: KeyOwner, key: string, fingerprint: string, status: number): KeyInStatement;
  /** Whether a statement failed because its key's entry was written meanwhile (a racing request committed first). */
  isKeyConflict(err: unknown): boolean;
  lookUp(owner: KeyOwner, key: string, fingerprint: string): Promise<Holder>;
  /** Deletes the key's entry if it is expired or abandoned. */
  removeStale(owner: KeyOwner, key: string): Promise<void>;
}

export function databaseStore(db: Knex, times: StoreTimes, onSweepError: (err: unknown) => void): DatabaseStore {
  // Each process sweeps at its own moments (a random share of the interval), not all at once.
  const nextSweepAt = () => Date.now() + SWEEP_MS * (0.5 + Math.random());
  let nextSweep = nextSweepAt();
  const entry = (owner: KeyOwner, key: string) => [owner.tenantId, owner.userId, key];

  async function sweep(): Promise<number> {
    let total = 0;
    for (let i = 0; i < SWEEP_BATCHES; i++) {
      const [{ n }] = await run(db, { text: SWEEP, values: [] });
      total += n;
      if (n < SWEEP_BATCH) break;
    }
    return total;
  }

  async function lookUp(owner: KeyOwner, key: string, fingerprint: string): Promise<Holder> {
    const [found] = await run(db, { text: FIND, values: [...entry(owner, key), times.runningMs] });
    if (!found) return { kind: 'none' };
    if (found.stale) return { kind: 'stale' };
    if (found.fingerprint !== fingerprint) return { kind: 'mismatch' };
    if (found.state === 'running') return { kind: 'running' };
    return { kind: 'done', answer: (typeof found.answer === 'string' ? JSON.parse(found.answer) : found.answer) as Kept };
  }

  function sweepNowAndThen() {
    if (Date.now() < nextSweep) return;
    nextSweep = nextSweepAt();
    sweep().catch(onSweepError);
  }

  return {
    async claim(owner, key, fingerprint): Promise<Claim> {
      sweepNowAndThen();
      // A row can vanish, or come to count as stale, between the two statements: then claim again.
      const token = randomUUID();
      for (;;) {
        const claimed = await run(db, { text: CLAIM, values: [...entry(owner, key), fingerprint, times.ttlMs, times.runningMs, token] });
        if (claimed.length) return { kind: 'claimed', token };
        const holder = await lookUp(owner, key, fingerprint);
        if (holder.kind !== 'none' && holder.kind !== 'stale') return holder;
      }
    },
    async complete(owner, key, token, answer) {
      await run(db, { text: COMPLETE, values: [...entry(owner, key), token, JSON.stringify(answer)] });
    },
    async release(owner, key, token) {
      await run(db, { text: RELEASE, values: [...entry(owner, key), token] });
    },
    sweep,
    keyInStatement(owner, key, fingerprint, status): KeyInStatement {
      sweepNowAndThen();
      const entryOf = (sql: SqlText) => sql.value(owner.tenantId).sql(', ').value(owner.userId).sql(', ').value(key);
      return {
        claim(sql) {
          sql.sql('"idempotency_claim" as materialized (select pg_try_advisory_xact_lock(hashtextextended(');
          sql.value(`idempotency ${owner.tenantId} ${owner.userId} ${key}`).sql(`, 0)) and not exists (select 1 from ${T} where "tenantId" = `);
          sql.value(owner.tenantId).sql(' and "userId" = ').value(owner.userId).sql(' and "key" = ').value(key).sql(') as "free")');
        },
        free(sql) {
          sql.sql('(select "free" from "idempotency_claim")');
        },
        keep(sql, written) {
          sql.sql(`, "idempotency_kept" as (insert into ${T} ("tenantId", "userId", "key", "fingerprint", "state", "token", "answer", "claimedAt", "expiresAt") select `);
          entryOf(sql).sql(', ').value(fingerprint).sql(`, 'done', '', jsonb_build_object('status', `).value(status);
          // json, not jsonb: the image keeps the columns in the order the answer has them.
          sql.sql(`::int, 'row', to_json(${written})::text), now(), now() + `).value(times.ttlMs).sql(`::float8 * interval '1 millisecond' from ${written})`);
        },
        isConflict: isKeyConflict,
      };
    },
    isKeyConflict,
    lookUp,
    async removeStale(owner, key) {
      await run(db, { text: REMOVE_STALE, values: [...entry(owner, key), times.runningMs] });
    },
    async ready() {},
    async close() {},
  };
}
