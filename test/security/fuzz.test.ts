// Property-based fuzzing of every route the OpenAPI document lists (and of the methods and paths
// it does not): generated list queries, search bodies, create/replace/patch bodies, path ids and
// headers, each answer judged by test/helpers/fuzz/oracle.ts: a documented status, never a 5xx,
// the error envelope, no SQL, stack or hidden field, nothing of another tenant. Fixed seeds and a
// bounded number of requests per operation; `npm run fuzz` runs the long campaign.
import fc from 'fast-check';
import knex from 'knex';
import { test } from 'uvu';
import { createProjectApp as createApp } from '../../app/create-app.js';
import { loadConfig } from '../../engine/config/config.js';
import { modules } from '../../resources/modules.js';
import { createTestApp, TEST_ENV, type TestApp } from '../helpers/app.js';
import { describeFinding, property, seedOf, type Probe } from '../helpers/fuzz/campaign.js';
import { NOWHERE, operationsOf, type Operation } from '../helpers/fuzz/operations.js';
import { buildWorld, type World } from '../helpers/fuzz/world.js';

const SEED = 20_261_208;

/**
 * Requests per operation: more where the inputs are richest (lists, searches, writes), one for a
 * path's missing methods and for an alias (the same routes as the resource's own path).
 */
function runsOf(op: Operation): number {
  const own = op.resource && `/api/${op.resource.paths[0]}`;
  const alias = own !== undefined && op.path !== own && !op.path.startsWith(`${own}/`);
  if (!op.documented || alias || op.method === 'HEAD') return 1;
  if (op.kind === 'list' || op.kind === 'search') return 4;
  if (op.kind === 'read' || op.kind === 'delete') return 2;
  return 3;
}

/** The operations, grouped by path, to name the tests while the file loads (no database is opened). */
function pathsAtLoad(): string[] {
  const db = knex({ client: 'pg' });
  const app = createApp({ config: loadConfig(TEST_ENV), db, modules, log: () => {}, logError: () => {} });
  void db.destroy();
  return [...new Set(operationsOf(app.openapi as Record<string, any>, app.engine.registry).map((op) => op.path)), NOWHERE.path];
}

let t: TestApp;
let w: World;
const logged: unknown[] = [];

test.before(async () => {
  t = await createTestApp({ appOptions: { logError: (err) => logged.push(err) } });
  w = await buildWorld(t, logged);
});
test.after(async () => {
  await w?.close();
  await t?.close();
});

async function fuzz(op: Operation) {
  const state: Probe = { sent: 0 };
  const seed = seedOf(SEED, op.id);
  const result = await fc.check(property(w, op, state), { seed, numRuns: runsOf(op) });
  if (!result.failed) return;
  if (!state.last) throw result.errorInstance ?? new Error(`${op.id}: the property failed without a request (seed ${seed})`);
  const command = `FUZZ_OP='${op.id}' FUZZ_SEED=${seed} FUZZ_PATH=${result.counterexamplePath} npm run fuzz`;
  // The whole report once, as it is (uvu would print a long message twice, re-indented).
  console.error(`\n${describeFinding(w, state.last, { seed, path: result.counterexamplePath ?? undefined, command })}\n`);
  throw new Error(`${op.id}: ${state.last.problems[0]} (the request is printed above; replay: ${command})`);
}

for (const path of pathsAtLoad()) {
  test(`fuzz ${path}`, async () => {
    const ops = path === NOWHERE.path ? [NOWHERE] : w.operations.filter((op) => op.path === path);
    if (!ops.length) throw new Error(`no operation of ${path} in the app under test`);
    for (const op of ops) await fuzz(op);
  });
}

test.run();
