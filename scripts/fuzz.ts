// `npm run fuzz`: a long fuzzing campaign against a fresh app and database (the embedded one, or
// with DATABASE_URL a fresh PostgreSQL database or schema, as for the tests), with the generators and the oracle of `npm test`'s fuzz suite
// (test/helpers/fuzz/). Each request goes to a random operation. The seed is printed first; the
// first failing request is shrunk and printed as a curl command line and as JSON, and the exit
// code is 1. Environment:
//   FUZZ_SEED   the seed (default: random)          FUZZ_RUNS  requests to send (default 5000)
//   FUZZ_PATH   with FUZZ_SEED: replay one counterexample (as printed) instead of a campaign
//   FUZZ_OP     only this operation (`GET /api/employee`, as the suite's reports name it)
//   FUZZ_SHRINK 0: report the first failing request as found, without shrinking it
import fc from 'fast-check';
import { createTestApp } from '../test/helpers/app.js';
import { dropTestDatabases } from '../test/helpers/postgres-copies.js';
import { describeFinding, property, type Probe } from '../test/helpers/fuzz/campaign.js';
import { NOWHERE } from '../test/helpers/fuzz/operations.js';
import { buildWorld } from '../test/helpers/fuzz/world.js';

function integer(name: string, fallback: number): number {
  const raw = process.env[name];
  if (raw === undefined || raw === '') return fallback;
  const value = Number(raw);
  if (!Number.isSafeInteger(value)) {
    console.error(`${name} must be an integer, not ${JSON.stringify(raw)}`);
    process.exit(2);
  }
  return value;
}

const seed = integer('FUZZ_SEED', Math.floor(Math.random() * 2 ** 31));
const runs = integer('FUZZ_RUNS', 5_000);
const replayPath = process.env.FUZZ_PATH || undefined;
const only = process.env.FUZZ_OP || undefined;
const shrink = process.env.FUZZ_SHRINK !== '0';

const logged: unknown[] = [];
const started = Date.now();
console.log(`fuzz: seed ${seed}, ${replayPath ? `replaying path ${replayPath}` : `${runs} requests`}${only ? `, only ${only}` : ''} (same run again: FUZZ_SEED=${seed}${only ? ` FUZZ_OP='${only}'` : ''} npm run fuzz)`);
const t = await createTestApp({ appOptions: { logError: (err) => logged.push(err) } });
let exitCode = 0;
try {
  const w = await buildWorld(t, logged);
  const all = [...w.operations, NOWHERE];
  const chosen = only ? all.find((op) => op.id === only) : undefined;
  if (only && !chosen) {
    console.error(`FUZZ_OP: no operation ${only}; the operations are:\n${all.map((op) => `  ${op.id}`).join('\n')}`);
    exitCode = 2;
  } else {
    console.log(`fuzz: ${all.length} operations, world ready in ${((Date.now() - started) / 1000).toFixed(1)} s`);
    const state: Probe = {
      sent: 0,
      onSent: (sent) => {
        if (sent % 500 === 0) console.log(`fuzz: ${sent} requests, ${((Date.now() - started) / 1000).toFixed(0)} s`);
      },
    };
    const result = await fc.check(property(w, chosen ?? all, state), { seed, numRuns: runs, path: replayPath, endOnFailure: !shrink });
    if (result.failed) {
      const path = result.counterexamplePath ?? undefined;
      const command = `FUZZ_SEED=${seed}${path ? ` FUZZ_PATH=${path}` : ''}${only ? ` FUZZ_OP='${only}'` : ''} npm run fuzz`;
      console.log(state.last ? describeFinding(w, state.last, { seed, path, command }) : `the property failed without a request: ${String(result.errorInstance)}`);
      console.log(`fuzz: FAILED after ${result.numRuns} requests (${result.numShrinks} shrinks), seed ${seed}`);
      exitCode = 1;
    } else {
      console.log(`fuzz: ${result.numRuns} requests, no finding, seed ${seed}, ${((Date.now() - started) / 1000).toFixed(0)} s`);
    }
  }
  await w.close();
} finally {
  await t.close();
  // process.exit skips `beforeExit`, where the test databases of a PostgreSQL run are dropped.
  await dropTestDatabases();
}
process.exit(exitCode);
