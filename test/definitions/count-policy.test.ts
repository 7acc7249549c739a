// A list's total by the resource's count policy (engine/resource/count.ts),
// through the list route on a real database: three fixture resources on one table
// (test/fixtures/count), exact, capped at 3 and estimated past 3. Below the threshold every policy
// counts exactly; above it, capped answers the cap and estimated the planner's figure (never one
// the count has disproved), both flagged inexact by X-Total-Exact: false. A hostile search value
// goes through the count and the EXPLAIN as a bound value.
// Also: `count:` written wrong stops start-up with the file, line and path.
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { loadRoles } from '../../auth/roles.js';
import { RESOURCES_DIR, ROLES_FILE } from '../../app/paths.js';
import { compileDefinitions } from '../../engine/resource/compile.js';
import { DefinitionError, loadDefinitionDir, parseDefinition } from '../../engine/resource/load.js';
import { newTenant, type Session } from '../helpers/accounts.js';
import { createTestApp, type TestApp } from '../helpers/app.js';

const COUNT_DIR = fileURLToPath(new URL('../fixtures/count/', import.meta.url));

let t: TestApp;
let owner: Session & { organizationId: string };
let other: Session & { organizationId: string };

test.before(async () => {
  t = await createTestApp({ resourceDirs: [RESOURCES_DIR, COUNT_DIR], migrationDirs: [path.join(COUNT_DIR, 'migrations')] });
  owner = await newTenant(t);
  other = await newTenant(t, 'Elsewhere');
  // Another tenant's rows, more than any threshold: never counted for the owner.
  for (let i = 0; i < 5; i++) await add(other, `other ${i}`);
});
test.after(async () => {
  await t?.close();
});

async function add(who: Session, label: string) {
  const res = await t.http.post('/api/tally').set(who.auth).send({ label });
  assert.is(res.status, 201, JSON.stringify(res.body));
}

const resource = (name: string) => t.engine.registry.get(name)!;

/** The owner's list of `name` (with a query string) as {total, exact}: the body's total, the header's flag. */
async function count(name: string, query = ''): Promise<{ total: number; exact: boolean }> {
  const res = await t.http.get(`/api/${name}?${query}`).set(owner.auth);
  assert.is(res.status, 200, JSON.stringify(res.body));
  assert.ok(res.body.items.length <= res.body.total, 'a page never holds more records than the total');
  const flag = res.headers['x-total-exact'];
  assert.ok(flag === 'true' || flag === 'false', `X-Total-Exact: ${flag}`);
  return { total: res.body.total, exact: flag === 'true' };
}

test('the policies compile from the definitions: exact by default, capped and estimated with their threshold', () => {
  assert.equal(resource('tally').count, { kind: 'exact' });
  assert.equal(resource('tally-capped').count, { kind: 'capped', limit: 3 });
  assert.equal(resource('tally-estimated').count, { kind: 'estimated', threshold: 3 });
});

test('below and at the threshold every policy counts exactly', async () => {
  assert.equal(await count('tally'), { total: 0, exact: true });
  assert.equal(await count('tally-capped'), { total: 0, exact: true });
  for (let i = 0; i < 3; i++) await add(owner, `mine ${i}`);
  for (const name of ['tally', 'tally-capped', 'tally-estimated']) assert.equal(await count(name), { total: 3, exact: true }, name);
  // A filter that leaves one: still exact.
  assert.equal(await count('tally-capped', 'where[label]=mine%200'), { total: 1, exact: true });
  assert.equal(await count('tally-estimated', 'where[label]=mine%200'), { total: 1, exact: true });
});

test('above the threshold: exact still counts all, capped answers the cap, both flagged', async () => {
  await add(owner, 'mine 3');
  await add(owner, 'mine 4');
  assert.equal(await count('tally'), { total: 5, exact: true });
  assert.equal(await count('tally-capped'), { total: 3, exact: false });
  // The filter applies before the cap: four of the five is still more than 3, one is exact.
  assert.equal(await count('tally-capped', 'search=mine%20'), { total: 3, exact: false });
  assert.equal(await count('tally-capped', 'search=mine%204'), { total: 1, exact: true });
});

test("above the threshold, estimated answers the planner's figure, never below the threshold + 1", async () => {
  const few = await count('tally-estimated');
  assert.is(few.exact, false);
  assert.ok(few.total >= 4, `${few.total}`);
  // With statistics of the table, the planner's figure follows the real count.
  for (let i = 5; i < 40; i++) await add(owner, `mine ${i}`);
  await t.db.raw('analyze tally');
  const many = await count('tally-estimated');
  assert.is(many.exact, false);
  assert.ok(many.total >= 30 && many.total <= 50, `estimated ${many.total} for 40`);
  assert.equal(await count('tally'), { total: 40, exact: true });
});

test('client values reach the database as bindings, in the count and in the EXPLAIN alike', async () => {
  // Labels of the owner's rows all contain it: the hostile search matches every one of them.
  for (let i = 0; i < 4; i++) await add(owner, `?' ; drop table tally; -- ${i}`);
  const hostile = `search=${encodeURIComponent("?' ; drop table tally; --")}`;
  assert.equal(await count('tally-capped', hostile), { total: 3, exact: false });
  assert.is((await count('tally-estimated', hostile)).exact, false);
  assert.equal(await count('tally', hostile), { total: 4, exact: true });
  assert.is(Number((await t.db('tally').count({ n: '*' }))[0].n), 49);
});

// ---------------------------------------------------------------------------------------------
// Definition errors

const { permissions } = loadRoles(ROLES_FILE);

/** The problems of a definition whose line 5 is `line` (after maxTake's), compiled beside the project's resources. */
function problemsOf(countLine: string, maxTake = 50): string[] {
  const text = [
    'name: tally-bad',
    'scope: tenant',
    'permissions: { read: authenticated, write: authenticated }',
    `maxTake: ${maxTake}`,
    countLine,
    'fields:',
    '  label: { type: string }',
    '',
  ].join('\n');
  try {
    compileDefinitions([...loadDefinitionDir(RESOURCES_DIR), parseDefinition(text, 'tally-bad.yaml')], { permissions });
  } catch (err) {
    assert.instance(err, DefinitionError);
    return (err as DefinitionError).problems;
  }
  return [];
}

test('count: a definition error names the file, line and path', () => {
  assert.equal(problemsOf('count: exactly'), [
    `tally-bad.yaml:5:8 count: "exactly" is not a count policy: write exact, { capped: N } or { estimated: N }`,
  ]);
  assert.equal(problemsOf('count: { capped: 100, estimated: 100 }'), [`tally-bad.yaml:5:8 count: needs exactly one of capped or estimated (this one has capped and estimated)`]);
  assert.equal(problemsOf('count: {}'), [`tally-bad.yaml:5:8 count: needs exactly one of capped or estimated`]);
  assert.equal(problemsOf('count: { capped: 0 }'), [`tally-bad.yaml:5:18 count.capped: must be >= 1`]);
  assert.equal(problemsOf('count: { estimated: many }'), [`tally-bad.yaml:5:21 count.estimated: must be integer`]);
  assert.equal(problemsOf('count: { exact: true }'), [`tally-bad.yaml:5:10 count.exact: is not a known property`]);
  assert.equal(problemsOf('count: 5'), [`tally-bad.yaml:5:8 count: must be string,object`]);
  // A cap below the page size would answer a full page with a smaller total.
  assert.equal(problemsOf('count: { capped: 10 }'), [`tally-bad.yaml:5:18 count.capped: must be at least maxTake (50): a page could hold more records than the total`]);
  assert.equal(problemsOf('count: { capped: 10 }', 10), []);
  assert.equal(problemsOf('count: exact'), []);
  assert.equal(problemsOf('count: { estimated: 10 }'), []);
});

test.run();
