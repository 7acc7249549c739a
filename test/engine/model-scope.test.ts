// The model of a resource, on a real database and without HTTP: what hand-written modules read and
// write through. Its scoped() query applies the caller's scope as the compiled statements do: another
// tenant's rows are invisible, the owner rule's role reaches only its own, a role without its claim
// reaches none; and the JSON of a row it answers leaves hidden fields out.
import { randomUUID } from 'node:crypto';
import { Model } from 'objection';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import type { Caller } from '../../engine/caller.js';
import { openDatabase, type Database } from '../../engine/db/database.js';
import { compileDefinitions } from '../../engine/resource/compile.js';
import type { ResourceModelClass } from '../../engine/resource/model.js';
import { parseDefinition } from '../../engine/resource/load.js';

const NOTE = `
name: note
scope: tenant
owner: writerId
permissions: { read: authenticated, write: authenticated }
fields:
  title: { type: string, required: true }
  writerId: { type: uuid }
  secret: { type: string, hidden: true }
`;

const OWNER_RULE = { role: 'WRITER', claim: 'personId', ownerIs: 'the person it signs in as' };

const tenantA = randomUUID();
const tenantB = randomUUID();
const alice = randomUUID();
const bob = randomUUID();

const callerOf = (tenantId: string, role: string, personId?: string): Caller => ({
  userId: randomUUID(),
  tenantId,
  role,
  permissions: new Set(),
  claims: { personId },
});

let database: Database;
let note: ResourceModelClass;

const titles = async (caller: Caller) => (await note.scoped(caller).select('title').orderBy('title')).map((row) => row.title);

test.before(async () => {
  database = await openDatabase({});
  const db = database.knex;
  await db.schema.createTable('note', (t) => {
    t.uuid('id').primary().defaultTo(db.raw('gen_random_uuid()'));
    t.uuid('tenantId').notNullable();
    t.string('title').notNullable();
    t.uuid('writerId');
    t.string('secret');
  });
  // As the app does it: the models on a base bound to the app's knex.
  class BoundModel extends Model {}
  BoundModel.knex(db);
  const registry = compileDefinitions([parseDefinition(NOTE, 'inline/note.yaml')], { permissions: new Set(), owner: OWNER_RULE, baseModel: BoundModel });
  note = registry.get('note')!.model;
  await note.query().insert([
    { tenantId: tenantA, title: 'A of alice', writerId: alice, secret: 'kept in' },
    { tenantId: tenantA, title: 'A of bob', writerId: bob },
    { tenantId: tenantA, title: 'A of nobody' },
    { tenantId: tenantB, title: 'B of alice', writerId: alice },
  ]);
});

test.after(() => database?.close());

test("another tenant's rows are invisible", async () => {
  assert.equal(await titles(callerOf(tenantA, 'EDITOR')), ['A of alice', 'A of bob', 'A of nobody']);
  assert.equal(await titles(callerOf(tenantB, 'EDITOR')), ['B of alice']);
  assert.equal(await titles(callerOf(randomUUID(), 'EDITOR')), []);
});

test("the owner rule's role reaches only its own rows, in its own tenant", async () => {
  assert.equal(await titles(callerOf(tenantA, 'WRITER', alice)), ['A of alice']);
  assert.equal(await titles(callerOf(tenantA, 'WRITER', bob)), ['A of bob']);
  assert.equal(await titles(callerOf(tenantB, 'WRITER', bob)), []);
});

test('the owner rule\'s role without its claim reaches no row at all', async () => {
  assert.equal(await titles(callerOf(tenantA, 'WRITER')), []);
  const [{ n }] = (await note.scoped(callerOf(tenantA, 'WRITER')).count({ n: '*' })) as unknown as Array<{ n: number | string }>;
  assert.is(Number(n), 0);
});

test('a reader of the tenant alone (a share link) reaches the whole tenant', async () => {
  assert.equal((await note.scoped({ tenantId: tenantB }).select('title')).map((row) => row.title), ['B of alice']);
});

test('an orWhere grouped inside where() stays within the scope (docs/modules.md)', async () => {
  const either = (q: any) => q.where('title', 'A of alice').orWhere('title', 'B of alice');
  const rows = await note.scoped(callerOf(tenantB, 'EDITOR')).select('title').where(either);
  assert.equal(rows.map((row) => row.title), ['B of alice']);
});

test('the scope follows the alias the query is given, and holds for writes too', async () => {
  const aliased = await note.scoped(callerOf(tenantA, 'WRITER', alice)).alias('n').select('n.title').where('n.title', 'like', 'A%');
  assert.equal(aliased.map((row) => row.title), ['A of alice']);
  // Another tenant's editor updates and deletes nothing of tenant A, even by id.
  const [ofA] = await note.scoped(callerOf(tenantA, 'EDITOR')).select('id').where('title', 'A of nobody');
  assert.is(await note.scoped(callerOf(tenantB, 'EDITOR')).findById(ofA.id).patch({ title: 'taken' }), 0);
  // (The row is looked for afterwards: the embedded database's knex client answers a delete's
  // count as its raw result, not a number.)
  await note.scoped(callerOf(tenantB, 'EDITOR')).deleteById(ofA.id);
  await note.scoped(callerOf(tenantA, 'WRITER', bob)).deleteById(ofA.id);
  assert.is((await note.query().findById(ofA.id))?.title, 'A of nobody');
  await note.scoped(callerOf(tenantA, 'EDITOR')).deleteById(ofA.id);
  assert.is(await note.query().findById(ofA.id), undefined);
});

test('a row answered by the model leaves hidden fields out of its JSON', async () => {
  const [row] = await note.scoped(callerOf(tenantA, 'WRITER', alice));
  assert.is(row.secret, 'kept in');
  const json = JSON.parse(JSON.stringify(row));
  assert.is(json.title, 'A of alice');
  assert.not.ok('secret' in json);
});

test.run();
