// Idempotent requests kept in the database (the default): one row per caller and key in
// idempotency_key (table.ts). Claiming is one insert that only an expired or abandoned row lets
// through, so of two requests racing with one key, on any process or instance, one claims it.
// Expired rows are swept by the processes that use the table, at most every SWEEP_MS each.
import type { Knex } from 'knex';
import { run } from '../resource/sql/runner.js';
import type { KeyOwner } from './request.js';
import type { Claim, IdempotencyStore, StoredAnswer, StoreTimes } from './store.js';
import { IDEMPOTENCY_TABLE } from './table.js';

const SWEEP_MS = 10 * 60_000;

const T = `"${IDEMPOTENCY_TABLE}"`;
const ENTRY = `"tenantId" = $1 and "userId" = $2 and "key" = $3`;

const CLAIM =
  `insert into ${T} ("tenantId", "userId", "key", "fingerprint", "state", "claimedAt", "expiresAt") ` +
  `values ($1, $2, $3, $4, 'running', now(), now() + $5::float8 * interval '1 millisecond') ` +
  `on conflict ("tenantId", "userId", "key") do update set "fingerprint" = excluded."fingerprint", "state" = 'running', "answer" = null, ` +
  `"claimedAt" = excluded."claimedAt", "expiresAt" = excluded."expiresAt" ` +
  `where ${T}."expiresAt" <= now() or (${T}."state" = 'running' and ${T}."claimedAt" <= now() - $6::float8 * interval '1 millisecond') ` +
  'returning 1 as "claimed"';
const FIND = `select "fingerprint", "state", "answer" from ${T} where ${ENTRY}`;
const COMPLETE = `update ${T} set "state" = 'done', "answer" = $5::jsonb where ${ENTRY} and "fingerprint" = $4 and "state" = 'running'`;
const RELEASE = `delete from ${T} where ${ENTRY} and "fingerprint" = $4 and "state" = 'running'`;
const SWEEP = `with swept as (delete from ${T} where "expiresAt" < now() returning 1) select count(*)::int as "n" from swept`;

export interface DatabaseStore extends IdempotencyStore {
  /** Deletes every expired entry now; how many there were. */
  sweep(): Promise<number>;
}

export function databaseStore(db: Knex, times: StoreTimes, onSweepError: (err: unknown) => void): DatabaseStore {
  let nextSweep = Date.now() + SWEEP_MS;
  const entry = (owner: KeyOwner, key: string) => [owner.tenantId, owner.userId, key];

  const sweep = async (): Promise<number> => (await run(db, { text: SWEEP, values: [] }))[0].n;

  function sweepNowAndThen() {
    if (Date.now() < nextSweep) return;
    nextSweep = Date.now() + SWEEP_MS;
    sweep().catch(onSweepError);
  }

  return {
    async claim(owner, key, fingerprint): Promise<Claim> {
      sweepNowAndThen();
      // A row can vanish between the two statements (released, swept): then claim again.
      for (;;) {
        const claimed = await run(db, { text: CLAIM, values: [...entry(owner, key), fingerprint, times.ttlMs, times.runningMs] });
        if (claimed.length) return { kind: 'claimed' };
        const [found] = await run(db, { text: FIND, values: entry(owner, key) });
        if (!found) continue;
        if (found.fingerprint !== fingerprint) return { kind: 'mismatch' };
        if (found.state === 'running') return { kind: 'running' };
        const answer = typeof found.answer === 'string' ? JSON.parse(found.answer) : found.answer;
        return { kind: 'done', answer: answer as StoredAnswer };
      }
    },
    async complete(owner, key, fingerprint, answer) {
      await run(db, { text: COMPLETE, values: [...entry(owner, key), fingerprint, JSON.stringify(answer)] });
    },
    async release(owner, key, fingerprint) {
      await run(db, { text: RELEASE, values: [...entry(owner, key), fingerprint] });
    },
    sweep,
    async close() {},
  };
}
