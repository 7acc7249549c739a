// `referencesBy` in a definition: a uuid field naming a record of the resource
// that another field of the record names, as comment.entityId and entity-subscription.entityId
// name a Task, an Employee, a project, a daily plan, an invoice or a time-off request by `entity`.
// Checked as `references` is, through HTTP against the database:
// - another tenant's record of each kind, a missing id, or an id of another kind is a 400 naming
//   the field, and nothing is written; the caller's own record of each kind is a 201;
// - an EMPLOYEE may name only what the owner rule lets it see of an owned kind (employees, daily
//   plans, time-off requests);
// - PUT is checked like a create; a PATCH of entityId alone or entity alone is checked with the
//   stored other half;
// - an import is checked row by row, all or nothing;
// - a definition that misuses it stops compilation with the file, line, path and fault.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { loadRoles } from '../../auth/roles.js';
import { ROLES_FILE } from '../../app/paths.js';
import { schemaName } from '../../engine/openapi/fragments.js';
import type { CompiledResource } from '../../engine/resource/compiled.js';
import { compileDefinitions } from '../../engine/resource/compile.js';
import { DefinitionError, parseDefinition } from '../../engine/resource/load.js';
import { modules } from '../../resources/modules.js';
import { newTenant, userWithRole, type Session } from '../helpers/accounts.js';
import { createTestApp, type TestApp } from '../helpers/app.js';
import { assertError, assertNotFound } from '../helpers/error-envelope.js';
import { hasCrudRoutes, SampleRecords, type Body, type Tenant } from '../helpers/sample-records.js';

const MISSING_ID = '00000000-0000-4000-8000-000000000000';
/** The project's resources with a referencesBy field. */
const HOLDERS = ['comment', 'entity-subscription'];

type Worker = Session & { employeeId?: string };

let t: TestApp;
let samples: SampleRecords;
let acme: Tenant;
let other: Tenant;
let ann: Worker;
let bob: Worker;
/** Per kind (the entity value): a record of acme's and one of the other tenant's. */
const own = new Map<string, string>();
const foreign = new Map<string, string>();
/** Per kind whose resource has an owner: Ann's record and Bob's. */
const anns = new Map<string, string>();
const bobs = new Map<string, string>();

const resource = (name: string) => t.engine.registry.get(name)!;
const kindsOf = (r: CompiledResource) => [...r.referencesBy[0].targets];
const rowsOf = (r: CompiledResource, where: Record<string, unknown> = {}) => t.db(r.table).where(where).orderBy('id');
const countOf = async (r: CompiledResource, where: Record<string, unknown>) => Number((await t.db(r.table).where(where).count({ n: '*' }))[0].n);
const show = (res: { status: number; body: unknown }) => `${res.status} ${JSON.stringify(res.body)}`;

/** A valid create body of the holder for `who`, naming the given record. */
async function bodyOf(r: CompiledResource, entity: string, entityId: string, who: Worker = acme): Promise<Body> {
  const body = await samples.body(r, acme);
  delete body.parentId;
  // The subscriber: the caller's own employee, or one of acme's for the admin.
  if (r.owner) body[r.owner] = who.employeeId ?? anns.get('Employee');
  if ('employeeId' in body && !r.owner) body.employeeId = who.employeeId ?? null;
  return { ...body, entity, entityId };
}

test.before(async () => {
  t = await createTestApp();
  const names = modules.map((m) => m.name);
  samples = new SampleRecords(t, t.engine.registry, (r) => hasCrudRoutes(r, names));
  acme = await newTenant(t, 'Acme');
  other = await newTenant(t, 'Other');
  ann = await userWithRole(t, acme, 'EMPLOYEE', true);
  bob = await userWithRole(t, acme, 'EMPLOYEE', true);
  anns.set('Employee', ann.employeeId!);
  bobs.set('Employee', bob.employeeId!);
  for (const [kind, target] of kindsOf(resource('comment'))) {
    own.set(kind, (await samples.create(target, acme)).id);
    foreign.set(kind, (await samples.create(target, other)).id);
    if (target.owner && target.owner !== 'id') {
      for (const [who, into] of [[ann, anns], [bob, bobs]] as const) {
        into.set(kind, (await samples.create(target, acme, { ...(await samples.body(target, acme)), [target.owner]: who.employeeId })).id);
      }
    }
  }
});
test.after(async () => {
  await t?.close();
});

test('the project definitions: comment and entity-subscription map every entity value to its resource', () => {
  for (const name of HOLDERS) {
    const [by, ...more] = resource(name).referencesBy;
    assert.equal(more, []);
    assert.is(by.field, 'entityId');
    assert.is(by.discriminator, 'entity');
    assert.equal(Object.fromEntries([...by.targets].map(([kind, target]) => [kind, target.name])), {
      Task: 'task',
      Employee: 'employee',
      OrganizationProject: 'organization-project',
      DailyPlan: 'daily-plan',
      Invoice: 'invoice',
      TimeOffRequest: 'time-off-request',
    });
  }
});

for (const name of HOLDERS) {
  test(`${name}: another tenant's record of each kind, or a missing id, is a 400 and no row is written`, async () => {
    const r = resource(name);
    const before = await rowsOf(r, { tenantId: acme.tenantId });
    for (const [kind, target] of kindsOf(r)) {
      for (const id of [foreign.get(kind)!, MISSING_ID]) {
        const res = await t.http.post(`/api/${r.paths[0]}`).set(acme.auth).send(await bodyOf(r, kind, id));
        assertError(res, 400, `entityId must reference an existing ${target.name}`);
        assert.is(await countOf(r, { entityId: id }), 0, `${kind} ${id}: no row names it`);
      }
    }
    assert.equal(await rowsOf(r, { tenantId: acme.tenantId }), before, "the caller's rows are as they were");
  });

  test(`${name}: an id of another kind is a 400 (an employee's id as a Task, a task's as an Employee)`, async () => {
    const r = resource(name);
    const before = await countOf(r, { tenantId: acme.tenantId });
    assertError(await t.http.post(`/api/${r.paths[0]}`).set(acme.auth).send(await bodyOf(r, 'Task', own.get('Employee')!)), 400, 'entityId must reference an existing task');
    assertError(await t.http.post(`/api/${r.paths[0]}`).set(acme.auth).send(await bodyOf(r, 'Employee', own.get('Task')!)), 400, 'entityId must reference an existing employee');
    assertError(await t.http.post(`/api/${r.paths[0]}`).set(acme.auth).send(await bodyOf(r, 'Invoice', own.get('DailyPlan')!)), 400, 'entityId must reference an existing invoice');
    assert.is(await countOf(r, { tenantId: acme.tenantId }), before);
  });

  test(`${name}: the caller's own record of each kind is a 201, stored as sent`, async () => {
    const r = resource(name);
    for (const [kind] of kindsOf(r)) {
      const res = await t.http.post(`/api/${r.paths[0]}`).set(acme.auth).send(await bodyOf(r, kind, own.get(kind)!.toUpperCase()));
      assert.is(res.status, 201, `${kind}: ${show(res)}`);
      const row = await t.db(r.table).where({ id: res.body.id }).first();
      assert.equal([row.tenantId, row.entity, row.entityId], [acme.tenantId, kind, own.get(kind)]);
    }
  });

  test(`${name}: PUT naming another tenant's record, or one of another kind, is a 400 and the record stays`, async () => {
    const r = resource(name);
    const made = await t.http.post(`/api/${r.paths[0]}`).set(acme.auth).send(await bodyOf(r, 'Task', own.get('Task')!));
    assert.is(made.status, 201, show(made));
    const url = `/api/${r.paths[0]}/${made.body.id}`;
    const before = await t.db(r.table).where({ id: made.body.id }).first();
    assertError(await t.http.put(url).set(acme.auth).send(await bodyOf(r, 'Task', foreign.get('Task')!)), 400, 'entityId must reference an existing task');
    assertError(await t.http.put(url).set(acme.auth).send(await bodyOf(r, 'OrganizationProject', own.get('Task')!)), 400, 'entityId must reference an existing organization-project');
    assert.equal(await t.db(r.table).where({ id: made.body.id }).first(), before);
    const moved = await t.http.put(url).set(acme.auth).send(await bodyOf(r, 'OrganizationProject', own.get('OrganizationProject')!));
    assert.is(moved.status, 200, show(moved));
    assert.equal([moved.body.entity, moved.body.entityId], ['OrganizationProject', own.get('OrganizationProject')]);
  });

  test(`${name}: a PATCH of entityId alone or entity alone is checked with the stored other half`, async () => {
    const r = resource(name);
    const made = await t.http.post(`/api/${r.paths[0]}`).set(acme.auth).send(await bodyOf(r, 'Task', own.get('Task')!));
    assert.is(made.status, 201, show(made));
    const id = made.body.id;
    const patch = (body: Body) => t.http.patch(`/api/${r.paths[0]}/${id}`).set(acme.auth).send(body);
    const before = await t.db(r.table).where({ id }).first();

    // entityId alone: stored entity Task.
    assertError(await patch({ entityId: foreign.get('Task')! }), 400, 'entityId must reference an existing task');
    assertError(await patch({ entityId: own.get('Employee')! }), 400, 'entityId must reference an existing task');
    // entity alone: stored entityId is a task.
    assertError(await patch({ entity: 'Employee' }), 400, 'entityId must reference an existing employee');
    assertError(await patch({ entity: 'Invoice' }), 400, 'entityId must reference an existing invoice');
    assert.equal(await t.db(r.table).where({ id }).first(), before, 'the record is unchanged, updatedAt included');

    // Within the rule, each half alone goes through.
    const secondTask = (await samples.create(resource('task'), acme)).id;
    const idAlone = await patch({ entityId: secondTask });
    assert.is(idAlone.status, 200, show(idAlone));
    assert.equal([idAlone.body.entity, idAlone.body.entityId], ['Task', secondTask]);
    const both = await patch({ entity: 'Employee', entityId: own.get('Employee')! });
    assert.is(both.status, 200, show(both));
    assertError(await patch({ entity: 'Task' }), 400, 'entityId must reference an existing task');
    const row = await t.db(r.table).where({ id }).first();
    assert.equal([row.entity, row.entityId], ['Employee', own.get('Employee')]);
    // A PATCH of another field leaves the pair as it is.
    const plain = samples.plainFields(r)[0];
    const otherField = await patch({ [plain.name]: samples.value(plain) });
    assert.is(otherField.status, 200, show(otherField));
    assert.equal([otherField.body.entity, otherField.body.entityId], ['Employee', own.get('Employee')]);

    // Another tenant's record: a 404 as for any other PATCH, whichever half is sent, and it stays.
    const theirs = await t.http.post(`/api/${r.paths[0]}`).set(other.auth).send({ ...(await bodyOfOther(r)), entity: 'Task', entityId: foreign.get('Task')! });
    assert.is(theirs.status, 201, show(theirs));
    const theirsBefore = await t.db(r.table).where({ id: theirs.body.id }).first();
    assertNotFound(await t.http.patch(`/api/${r.paths[0]}/${theirs.body.id}`).set(acme.auth).send({ entity: 'Employee' }));
    assertNotFound(await t.http.patch(`/api/${r.paths[0]}/${theirs.body.id}`).set(acme.auth).send({ entityId: own.get('Task')! }));
    assert.equal(await t.db(r.table).where({ id: theirs.body.id }).first(), theirsBefore);
  });

  test(`${name}: an EMPLOYEE names only the records of an owned kind the owner rule lets it see`, async () => {
    const r = resource(name);
    const post = async (kind: string, id: string) => t.http.post(`/api/${r.paths[0]}`).set(ann.auth).send(await bodyOf(r, kind, id, ann));
    const before = await countOf(r, { tenantId: acme.tenantId });
    for (const [kind, target] of kindsOf(r).filter(([, target]) => target.owner)) {
      assertError(await post(kind, bobs.get(kind)!), 400, `entityId must reference an existing ${target.name}`);
    }
    assert.is(await countOf(r, { tenantId: acme.tenantId }), before, "nothing naming Bob's records was written");
    for (const [kind] of kindsOf(r).filter(([, target]) => target.owner)) {
      const res = await post(kind, anns.get(kind)!);
      assert.is(res.status, 201, `${kind}: ${show(res)}`);
    }
    // A kind without an owner: any record of the tenant.
    const task = await post('Task', own.get('Task')!);
    assert.is(task.status, 201, show(task));
    // And a PATCH of the kind alone, onto Bob's: the owner rule again.
    const url = `/api/${r.paths[0]}/${task.body.id}`;
    assertError(await t.http.patch(url).set(ann.auth).send({ entity: 'DailyPlan', entityId: bobs.get('DailyPlan')! }), 400, 'entityId must reference an existing daily-plan');
  });

  test(`${name}: an import with a row naming another tenant's record is a 400 naming the row; nothing is imported`, async () => {
    const r = resource(name);
    const before = await countOf(r, { tenantId: acme.tenantId });
    const rows = [
      await bodyOf(r, 'Task', own.get('Task')!),
      await bodyOf(r, 'Invoice', foreign.get('Invoice')!),
      await bodyOf(r, 'Employee', own.get('Task')!),
      await bodyOf(r, 'Employee', own.get('Employee')!),
    ];
    const send = (sent: Body[]) => t.http.post(`/api/import/${r.name}`).set(acme.auth).set('Content-Type', 'application/json').send(JSON.stringify(sent));
    const res = await send(rows);
    assert.is(res.status, 400, show(res));
    assert.equal(res.body.errors, [
      { row: 2, message: 'entityId must reference an existing invoice' },
      { row: 3, message: 'entityId must reference an existing employee' },
    ]);
    assert.is(res.body.imported, 0);
    assert.is(await countOf(r, { tenantId: acme.tenantId }), before, 'all or nothing');
    assert.is(await countOf(r, { entityId: foreign.get('Invoice')! }), 0);
    // The valid rows alone land.
    const fine = await send([rows[0], rows[3]]);
    assert.is(fine.status, 201, show(fine));
    assert.equal(fine.body, { imported: 2, errors: [] });
    assert.is(await countOf(r, { tenantId: acme.tenantId }), before + 2);
  });
}

/** A create body of the other tenant (for a record to attack), its subscriber one of its employees. */
async function bodyOfOther(r: CompiledResource): Promise<Body> {
  const body = await samples.body(r, other);
  delete body.parentId;
  if (r.owner) body[r.owner] = await samples.reference(resource('employee'), other, false, []);
  return body;
}

test("OpenAPI: the field's description says which records it may name", () => {
  const schemas = (t.openapi as any).components.schemas;
  for (const name of HOLDERS) {
    for (const kind of ['create', 'replace', 'patch', 'record'] as const) {
      const description: string = schemas[schemaName(resource(name), kind)].properties.entityId.description;
      assert.match(description, /^Id of the (commented|followed) record\. /, `${name} ${kind}`);
      assert.match(description, "of the caller's tenant, of the resource that entity names (Task: task, Employee: employee, OrganizationProject: organization-project, DailyPlan: daily-plan, Invoice: invoice, TimeOffRequest: time-off-request)");
    }
  }
});

// ---------------------------------------------------------------------------------------------
// Definitions that misuse referencesBy stop compilation.

const { permissions } = loadRoles(ROLES_FILE);
const definition = (name: string, fields: string[]) =>
  [`name: ${name}`, 'scope: tenant', 'permissions: { read: authenticated, write: authenticated }', 'fields:', ...fields.map((f) => `  ${f}`), ''].join('\n');
/** A gadget (line 5 on: its fields) beside a part and a bolt, compiled on their own. */
function problemsOf(...fields: string[]): string[] {
  try {
    compileDefinitions(
      [
        parseDefinition(definition('gadget', fields), 'gadget.yaml'),
        parseDefinition(definition('part', ['label: { type: string }']), 'part.yaml'),
        parseDefinition(definition('bolt', ['label: { type: string }']), 'bolt.yaml'),
      ],
      { permissions },
    );
  } catch (err) {
    assert.instance(err, DefinitionError);
    return (err as DefinitionError).problems;
  }
  assert.unreachable('compiled without a problem');
  return [];
}
const KIND = 'kind: { type: string, required: true, enum: [Part, Bolt] }';
const ref = (by: string, type = 'uuid') => `ref: { type: ${type}, referencesBy: ${by} }`;

test('definition: a sound referencesBy compiles to the resources each value names', () => {
  const registry = compileDefinitions(
    [
      parseDefinition(definition('gadget', [KIND, ref('{ field: kind, resources: { Part: part, Bolt: bolt } }')]), 'gadget.yaml'),
      parseDefinition(definition('part', ['label: { type: string }']), 'part.yaml'),
      parseDefinition(definition('bolt', ['label: { type: string }']), 'bolt.yaml'),
    ],
    { permissions },
  );
  const [by] = registry.get('gadget')!.referencesBy;
  assert.equal([by.field, by.discriminator, [...by.targets].map(([k, v]) => [k, v.name])], ['ref', 'kind', [['Part', 'part'], ['Bolt', 'bolt']]]);
  assert.equal(registry.get('gadget')!.references, [], 'not a plain reference');
});

test('definition: the discriminator must be another field of the resource', () => {
  assert.equal(problemsOf(KIND, ref('{ field: sort, resources: { Part: part, Bolt: bolt } }')), [
    'gadget.yaml:6:45 fields.ref.referencesBy.field: referencesBy field "sort" is not a field of gadget',
  ]);
  assert.equal(problemsOf(KIND, ref('{ field: ref, resources: { Part: part, Bolt: bolt } }')), [
    'gadget.yaml:6:45 fields.ref.referencesBy.field: must name another field: the one whose value says which resource this field references',
  ]);
});

test('definition: the discriminator must be a string field with an enum', () => {
  assert.equal(problemsOf('kind: { type: string }', ref('{ field: kind, resources: { Part: part } }')), [
    'gadget.yaml:6:45 fields.ref.referencesBy.field: "kind" must be a string field with an enum: its values name the resources ref may reference',
  ]);
  assert.equal(problemsOf('kind: { type: integer }', ref('{ field: kind, resources: { Part: part } }')), [
    'gadget.yaml:6:45 fields.ref.referencesBy.field: "kind" must be a string field with an enum: its values name the resources ref may reference',
  ]);
});

test('definition: every enum value is mapped, and only enum values are', () => {
  assert.equal(problemsOf(KIND, ref('{ field: kind, resources: { Part: part } }')), [
    'gadget.yaml:6:62 fields.ref.referencesBy.resources: every value of kind needs a resource; missing: Bolt',
  ]);
  assert.equal(problemsOf(KIND, ref('{ field: kind, resources: { Part: part, Bolt: bolt, Nut: part } }')), [
    'gadget.yaml:6:93 fields.ref.referencesBy.resources.Nut: "Nut" is not a value of kind (Part, Bolt)',
  ]);
});

test('definition: every mapped resource must exist', () => {
  assert.equal(problemsOf(KIND, ref('{ field: kind, resources: { Part: part, Bolt: nut } }')), [
    'gadget.yaml:6:82 fields.ref.referencesBy.resources.Bolt: "nut" is not a resource (known: bolt, gadget, part)',
  ]);
});

test('definition: only on a uuid field, never beside references, and in the shape the format allows', () => {
  assert.equal(problemsOf(KIND, ref('{ field: kind, resources: { Part: part, Bolt: bolt } }', 'string')), [
    'gadget.yaml:6:38 fields.ref.referencesBy: only uuid fields can reference a resource',
  ]);
  assert.equal(problemsOf(KIND, 'ref: { type: uuid, references: part, referencesBy: { field: kind, resources: { Part: part, Bolt: bolt } } }'), [
    'gadget.yaml:6:54 fields.ref.referencesBy: a field has references or referencesBy, not both',
  ]);
  const missing = 'gadget.yaml:6:36 fields.ref.referencesBy: is missing the required property "resources"';
  const shapes: Array<[string, string[]]> = [
    ['{ field: kind }', [missing]],
    ['{ field: kind, resources: {} }', ['gadget.yaml:6:62 fields.ref.referencesBy.resources: must NOT have fewer than 1 properties']],
    ['{ field: kind, resources: { Part: 3 } }', ['gadget.yaml:6:70 fields.ref.referencesBy.resources.Part: must be string']],
    ['{ field: kind, resource: { Part: part } }', [missing, 'gadget.yaml:6:51 fields.ref.referencesBy.resource: is not a known property']],
  ];
  for (const [by, expected] of shapes) {
    try {
      parseDefinition(definition('gadget', [KIND, ref(by)]), 'gadget.yaml');
      assert.unreachable(`${by} passed the format`);
    } catch (err) {
      assert.instance(err, DefinitionError);
      assert.equal((err as DefinitionError).problems.sort(), expected, by);
    }
  }
});

test.run();
