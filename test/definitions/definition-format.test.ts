// The definition format's guarantees:
// - a bad definition stops start-up with the file, the line and column, the path inside the file and the fault;
// - a definition plus its migration is all a resource needs: the fixture test/fixtures/widget gets
//   working CRUD, validation, list parameters and its part of the OpenAPI document, with no code;
// - engine/ names no resource: everything resource-specific lives in resources/.
import { mkdtempSync, readFileSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { loadRoles, ROLES } from '../../auth/roles.js';
import { RESOURCES_DIR, ROLES_FILE } from '../../app/paths.js';
import { buildComponents } from '../../engine/openapi/components.js';
import { compileDefinitions } from '../../engine/resource/compile.js';
import { DefinitionError, loadDefinitionDir, loadDefinitionFile, parseDefinition } from '../../engine/resource/load.js';
import { createTestApp, type TestApp } from '../helpers/app.js';
import { newTenant, userWithRole, type Session } from '../helpers/accounts.js';
import { killServers, runServerToExit, startupFailure } from '../helpers/server-process.js';

const BAD = fileURLToPath(new URL('../fixtures/definitions/', import.meta.url));
const WIDGET_DIR = fileURLToPath(new URL('../fixtures/widget/', import.meta.url));
const ENGINE_DIR = fileURLToPath(new URL('../../engine/', import.meta.url));
const { permissions } = loadRoles(ROLES_FILE);

/** A fixture's name as messages print it (relative to the working directory). */
const shown = (file: string) => path.relative(process.cwd(), path.join(BAD, file));

/** The problems a definition file raises, loaded and compiled beside the project's resources. */
function problemsOf(...files: string[]): string[] {
  try {
    const sources = files.map((file) => loadDefinitionFile(path.join(BAD, file)));
    compileDefinitions([...loadDefinitionDir(RESOURCES_DIR), ...sources], { permissions });
  } catch (err) {
    assert.instance(err, DefinitionError);
    return (err as DefinitionError).problems;
  }
  assert.unreachable(`${files.join(', ')} loaded without a problem`);
  return [];
}

// ---------------------------------------------------------------------------------------------
// Bad definitions: each names file:line:col, the path inside the file, and the fault.

/** The resources a message lists as known, beside the one being loaded. */
const known = (extra: string) => [...loadDefinitionDir(RESOURCES_DIR).map((s) => s.definition.name), extra].sort().join(', ');

const BAD_CASES: Array<[file: string, problem: string]> = [
  // The parser notices the unclosed [ where the next key starts.
  ['yaml-syntax.yaml', '8:1 YAML syntax: Flow sequence in block collection must be sufficiently indented and end with a ]'],
  ['unknown-top-level-key.yaml', '7:1 filter: is not a known property'],
  ['field-property-typo.yaml', '6:30 fields.firstName.requird: is not a known property'],
  ['bad-field-type.yaml', '7:11 fields.firstName.type: must be one of: string, text, integer, number, boolean, uuid, date, timestamp'],
  [
    'relation-two-kinds.yaml',
    '10:5 relations.tags: a relation needs exactly one of: belongsTo with via, hasMany with via, manyToMany with through (this one has belongsTo and manyToMany)',
  ],
  ['relation-unknown-resource.yaml', `9:23 relations.gizmo.belongsTo: "gizmo" is not a resource (known: ${known('gadget')})`],
  ['filter-missing-field.yaml', '8:18 filters.1: filter "colour" is not a field of gadget'],
  ['sort-missing-field.yaml', '9:5 sort.1: sort field "size" is not a field of gadget'],
  ['search-missing-field.yaml', '7:10 search.0: search field "notes" is not a field of gadget'],
  ['search-named-twice.yaml', '7:17 search.1: search field "label" is named twice'],
  ['search-bad-mode.yaml', '7:32 search.0.mode: must be one of: fulltext, substring'],
  ['search-entry-list.yaml', '7:10 search.0: must be string'],
  ['date-range-not-date.yaml', '8:12 dateRange: dateRange field "label" must be a date or timestamp field'],
  ['unknown-permission.yaml', '6:10 permissions.write: "GADGETS_EDIT" is not a permission listed in roles.yaml'],
  ['hidden-filter.yaml', '8:18 filters.1: filter "secret" is hidden and cannot be used'],
  ['default-not-in-enum.yaml', '8:62 fields.colour.default: "purple" must be one of the following values: red, green, blue'],
  ['default-wrong-type.yaml', '7:35 fields.size.default: "many" must be an integer number'],
  ['default-out-of-range.yaml', '7:60 fields.size.default: 11 must not be greater than 10'],
  ['minimum-above-maximum.yaml', '7:35 fields.size.minimum: minimum 10 is greater than maximum 1: no value can pass'],
  ['number-bound-on-string.yaml', '6:51 fields.label.minimum: applies to integer and number fields, not string'],
  ['belongs-to-via-not-uuid.yaml', '9:38 relations.owner.via: "ownerName" is a string field of gadget; via must be a uuid field holding the employee id'],
  ['has-many-via-not-uuid.yaml', '8:40 relations.employees.via: "firstName" is a string field of employee; via must be a uuid field pointing at gadget'],
  [
    'ids-key-clash.yaml',
    '10:9 relations.tags: its ids key "tagIds" (derived from the name) is already the name of the field "tagIds"; name another with idsKey',
  ],
];

for (const [file, problem] of BAD_CASES) {
  test(`bad definition: ${file.replace(/\.yaml$/, '').replace(/-/g, ' ')}`, () => {
    assert.equal(problemsOf(file), [`${shown(file)}:${problem}`]);
  });
}

test('bad definition: two files claiming the same path', () => {
  const problems = problemsOf('duplicate-path/gadget.yaml', 'duplicate-path/gizmo.yaml');
  assert.equal(problems, [`${shown('duplicate-path/gizmo.yaml')}:3:19 aliases.1: path "/api/gadget" is already used by gadget (${shown('duplicate-path/gadget.yaml')})`]);
});

test('bad definition: a resource defined twice names both files', () => {
  const source = parseDefinition(readFileSync(path.join(BAD, 'duplicate-path/gadget.yaml'), 'utf8'), 'elsewhere/gadget.yaml');
  try {
    compileDefinitions([loadDefinitionFile(path.join(BAD, 'duplicate-path/gadget.yaml')), source, ...loadDefinitionDir(RESOURCES_DIR)], { permissions });
    assert.unreachable('compiled');
  } catch (err) {
    assert.instance(err, DefinitionError);
    assert.equal((err as DefinitionError).problems, [`elsewhere/gadget.yaml:2:7 name: resource "gadget" is already defined in ${shown('duplicate-path/gadget.yaml')}`]);
  }
});

test('bad definition: every problem of a file is reported at once, and so is every bad file of a folder', () => {
  const text = ['name: Gadget', 'scope: galaxy', 'permissions: { read: authenticated }', 'fields:', '  label: { type: string, requried: true }', 'colour: red', ''].join('\n');
  try {
    parseDefinition(text, 'inline.yaml');
    assert.unreachable('parsed');
  } catch (err) {
    assert.instance(err, DefinitionError);
    assert.equal((err as DefinitionError).problems.sort(), [
      'inline.yaml:1:7 name: must match pattern "^[a-z][a-z0-9]*(-[a-z0-9]+)*$"',
      'inline.yaml:2:8 scope: must be one of: tenant, organization',
      'inline.yaml:5:26 fields.label.requried: is not a known property',
      'inline.yaml:6:1 colour: is not a known property',
    ].sort());
  }
  try {
    loadDefinitionDir(BAD);
    assert.unreachable('loaded');
  } catch (err) {
    assert.instance(err, DefinitionError);
    const files = new Set((err as DefinitionError).problems.map((p) => p.split(':')[0]));
    // The five whose faults the format's schema catches; the rest need the other definitions.
    assert.equal([...files].sort(), ['bad-field-type', 'field-property-typo', 'relation-two-kinds', 'search-bad-mode', 'search-entry-list', 'unknown-top-level-key', 'yaml-syntax'].map((f) => shown(`${f}.yaml`)).sort());
  }
});

test('bad definition: an empty file or a list is not a definition', () => {
  for (const text of ['', '- name: gadget\n']) {
    try {
      parseDefinition(text, 'odd.yaml');
      assert.unreachable('parsed');
    } catch (err) {
      assert.equal((err as DefinitionError).problems, ['odd.yaml:1:1 (top level): must be a YAML mapping with at least name, scope, permissions and fields']);
    }
  }
});

/** Problems of inline definitions compiled on their own (without the project's resources). */
function inlineProblems(texts: Record<string, string>): string[] {
  try {
    compileDefinitions(Object.entries(texts).map(([file, text]) => parseDefinition(text, file)), { permissions });
  } catch (err) {
    assert.instance(err, DefinitionError);
    return (err as DefinitionError).problems;
  }
  assert.unreachable('compiled without a problem');
  return [];
}

const definition = (name: string, scope: string, extra = '') =>
  [`name: ${name}`, `scope: ${scope}`, 'permissions: { read: authenticated, write: authenticated }', 'fields:', '  label: { type: string }', extra, ''].join('\n');

// ---------------------------------------------------------------------------------------------
// Field rules that contradict each other, defaults and enum values that break them, and relation
// keys: caught at start-up, not by the first request that trips on them.

/** gadget.yaml with one more field on line 6 (after label), compiled on its own. */
const gadgetWith = (field: string) => inlineProblems({ 'gadget.yaml': definition('gadget', 'tenant', `  ${field}`) });

test('a default must pass its own field\'s rules: type, enum, bounds, length and format', () => {
  const cases: Array<[field: string, problem: string]> = [
    ['ref: { type: uuid, default: nope }', 'gadget.yaml:6:31 fields.ref.default: "nope" must be a UUID'],
    ['on: { type: date, default: 2026-02-31 }', 'gadget.yaml:6:30 fields.on.default: "2026-02-31" must be a valid ISO 8601 date string'],
    ['at: { type: timestamp, default: yesterday }', 'gadget.yaml:6:35 fields.at.default: "yesterday" must be a valid ISO 8601 date string'],
    ['mail: { type: string, format: email, default: nobody }', 'gadget.yaml:6:49 fields.mail.default: "nobody" must be an email'],
    ['site: { type: string, format: uri, default: not-a-url }', 'gadget.yaml:6:47 fields.site.default: "not-a-url" must be a URL address'],
    ['code: { type: string, maxLength: 3, default: ABCD }', 'gadget.yaml:6:48 fields.code.default: "ABCD" must be shorter than or equal to 3 characters'],
    ['code: { type: string, minLength: 3, default: AB }', 'gadget.yaml:6:48 fields.code.default: "AB" must be longer than or equal to 3 characters'],
    ['code: { type: string, required: true, default: "" }', 'gadget.yaml:6:50 fields.code.default: "" should not be empty'],
    ['rate: { type: number, exclusiveMinimum: 0, default: 0 }', 'gadget.yaml:6:55 fields.rate.default: 0 must be greater than 0'],
    ['size: { type: integer, default: 1.5 }', 'gadget.yaml:6:35 fields.size.default: 1.5 must be an integer number'],
    ['size: { type: integer, default: 3000000000 }', 'gadget.yaml:6:35 fields.size.default: 3000000000 must not be greater than 2147483647'],
    ['shiny: { type: boolean, default: "yes" }', 'gadget.yaml:6:36 fields.shiny.default: "yes" must be a boolean value'],
    ['label2: { type: string, default: 5 }', 'gadget.yaml:6:36 fields.label2.default: 5 must be a string'],
  ];
  for (const [field, expected] of cases) assert.equal(gadgetWith(field), [expected], field);
});

test('an enum value must pass the field\'s other rules', () => {
  assert.equal(gadgetWith('code: { type: string, maxLength: 2, enum: [ab, abc, abcd] }'), [
    'gadget.yaml:6:50 fields.code.enum.1: "abc" must be shorter than or equal to 2 characters',
    'gadget.yaml:6:55 fields.code.enum.2: "abcd" must be shorter than or equal to 2 characters',
  ]);
});

test('bounds that leave no value able to pass', () => {
  const cases: Array<[field: string, problem: string]> = [
    ['n: { type: number, minimum: 5, exclusiveMaximum: 5 }', 'gadget.yaml:6:31 fields.n.minimum: minimum 5 is not less than exclusiveMaximum 5: no value can pass'],
    ['n: { type: number, exclusiveMinimum: 5, maximum: 5 }', 'gadget.yaml:6:40 fields.n.exclusiveMinimum: exclusiveMinimum 5 is not less than maximum 5: no value can pass'],
    ['n: { type: integer, exclusiveMinimum: 7, exclusiveMaximum: 2 }', 'gadget.yaml:6:41 fields.n.exclusiveMinimum: exclusiveMinimum 7 is not less than exclusiveMaximum 2: no value can pass'],
    ['s: { type: text, minLength: 5, maxLength: 3 }', 'gadget.yaml:6:31 fields.s.minLength: minLength 5 is greater than maxLength 3: no value can pass'],
  ];
  for (const [field, expected] of cases) assert.equal(gadgetWith(field), [expected], field);
  // Crossed bounds are the fault; the default is not reported against them a second time.
  assert.equal(gadgetWith('n: { type: integer, minimum: 9, maximum: 2, default: 5 }'), [
    'gadget.yaml:6:32 fields.n.minimum: minimum 9 is greater than maximum 2: no value can pass',
  ]);
});

test('a rule of another type is a problem at the rule, not silently dropped', () => {
  assert.equal(gadgetWith('on: { type: date, minimum: 1, exclusiveMaximum: 9 }'), [
    'gadget.yaml:6:30 fields.on.minimum: applies to integer and number fields, not date',
    'gadget.yaml:6:51 fields.on.exclusiveMaximum: applies to integer and number fields, not date',
  ]);
  assert.equal(gadgetWith('size: { type: integer, maxLength: 3, enum: [a] }'), [
    'gadget.yaml:6:37 fields.size.maxLength: applies to string and text fields, not integer',
    'gadget.yaml:6:46 fields.size.enum: applies to string and text fields, not integer',
  ]);
  assert.equal(gadgetWith('ok: { type: boolean, format: email }'), ['gadget.yaml:6:32 fields.ok.format: applies to string and text fields, not boolean']);
});

test('sound rules and defaults compile, required with a default included', () => {
  const fields = [
    '  ref: { type: uuid, default: 0b7e6d3c-52f3-4c8e-9a51-7f1f2a3b4c5d }',
    '  on: { type: date, default: 2026-02-28 }',
    '  at: { type: timestamp, default: "2026-02-28T10:00:00Z" }',
    '  mail: { type: string, format: email, default: someone@example.com }',
    '  site: { type: string, format: uri, default: "https://example.com/" }',
    '  colour: { type: string, enum: [red, blue], default: blue, required: true }',
    '  n: { type: number, minimum: 5, maximum: 5, default: 5 }',
    '  rate: { type: number, exclusiveMinimum: 0, exclusiveMaximum: 1, default: 0.5 }',
    '  s: { type: text, minLength: 2, maxLength: 2, default: ab }',
    '  shiny: { type: boolean, default: false }',
  ].join('\n');
  const registry = compileDefinitions([parseDefinition(definition('gadget', 'tenant', fields), 'gadget.yaml')], { permissions });
  assert.equal(registry.get('gadget')!.defaults, {
    ref: '0b7e6d3c-52f3-4c8e-9a51-7f1f2a3b4c5d',
    on: '2026-02-28',
    at: '2026-02-28T10:00:00Z',
    mail: 'someone@example.com',
    site: 'https://example.com/',
    colour: 'blue',
    n: 5,
    rate: 0.5,
    s: 'ab',
    shiny: false,
  });
});

/** gadget with writable many-to-many relations to a status resource, defined beside it. */
function withRelations(relations: string[], fields: string[] = []): Record<string, string> {
  const extra = [...fields.map((f) => `  ${f}`), 'relations:', ...relations.map((r) => `  ${r}`)].join('\n');
  return { 'gadget.yaml': definition('gadget', 'tenant', extra), 'status.yaml': definition('status', 'tenant') };
}
const m2m = (name: string, extra = 'writable: true') => `${name}: { manyToMany: status, through: { table: ${name}_link, from: gadgetId, to: statusId }, ${extra} }`;

test('writable many-to-many ids keys: derived from the name, or named with idsKey', () => {
  const texts = withRelations([m2m('categories'), m2m('tags'), m2m('staff'), m2m('statuses', 'writable: true, idsKey: statusIds'), m2m('watchers', 'writable: false')]);
  const registry = compileDefinitions(Object.entries(texts).map(([file, text]) => parseDefinition(text, file)), { permissions });
  const gadget = registry.get('gadget')!;
  const keys = Object.fromEntries([...gadget.relations.values()].map((r) => [r.name, r.idsKey]));
  assert.equal(keys, { categories: 'categoryIds', tags: 'tagIds', staff: 'staffIds', statuses: 'statusIds', watchers: undefined });
  const id = '0b7e6d3c-52f3-4c8e-9a51-7f1f2a3b4c5d';
  const body = { label: 'x', categoryIds: [id], tagIds: [id], staffIds: [id], statusIds: [id] };
  assert.equal(gadget.validators.create(body), body, 'the body schema takes every ids key');
  assert.throws(() => gadget.validators.create({ label: 'x', statuseIds: [id] }), /property statuseIds should not exist/);
  assert.throws(() => gadget.validators.create({ label: 'x', watcherIds: [id] }), /property watcherIds should not exist/);
});

test('ids keys that clash, or an idsKey where there are no ids to take, are problems', () => {
  // tag and tags both derive tagIds: the second asks for an explicit key.
  assert.equal(inlineProblems(withRelations([m2m('tag'), m2m('tags')])), [
    'gadget.yaml:8:9 relations.tags: its ids key "tagIds" (derived from the name) is already the name of the ids key of "tag"; name another with idsKey',
  ]);
  assert.equal(inlineProblems(withRelations([m2m('statuses', 'writable: true, idsKey: label')])), [
    'gadget.yaml:7:124 relations.statuses.idsKey: "label" is already the name of the field "label"',
  ]);
  assert.equal(inlineProblems(withRelations([m2m('owner', 'writable: false'), m2m('statuses', 'writable: true, idsKey: owner')])), [
    'gadget.yaml:8:124 relations.statuses.idsKey: "owner" is already the name of the relation "owner"',
  ]);
  assert.equal(inlineProblems(withRelations([m2m('statuses', 'idsKey: statusIds')])), [
    'gadget.yaml:7:108 relations.statuses.idsKey: applies only to a writable manyToMany relation',
  ]);
  assert.equal(inlineProblems(withRelations(['status: { belongsTo: status, via: statusId, idsKey: statusIds }'], ['statusId: { type: uuid }'])), [
    'gadget.yaml:8:55 relations.status.idsKey: applies only to a writable manyToMany relation',
  ]);
});

test('organization root: organization scope needs one, of scope tenant, and only one', () => {
  assert.equal(inlineProblems({ 'orphan.yaml': definition('orphan', 'organization') }), [
    'orphan.yaml:2:8 scope: scope "organization" needs a resource marked organizationRoot (the organizations records belong to)',
  ]);
  assert.equal(inlineProblems({
    'first.yaml': definition('first', 'tenant', 'organizationRoot: {}'),
    'second.yaml': definition('second', 'tenant', 'organizationRoot: { header: X-Org }'),
  }), ['second.yaml:6:19 organizationRoot: only one resource can be the organization root; first (first.yaml) already is']);
  assert.equal(inlineProblems({ 'nested.yaml': definition('nested', 'organization', 'organizationRoot: {}') }), [
    'nested.yaml:2:8 scope: the organization root must have scope "tenant"',
  ]);
});

test('organization root: organization-scoped records point at it, and its header names their organization', () => {
  const registry = compileDefinitions([
    parseDefinition(definition('company', 'tenant', 'organizationRoot: { header: Company-Id }'), 'company.yaml'),
    parseDefinition(definition('desk', 'organization'), 'desk.yaml'),
  ], { permissions });
  const desk = registry.get('desk')!;
  assert.is(desk.organizationRoot, registry.get('company'));
  assert.is(desk.organizationHeader, 'Company-Id');
  assert.equal(desk.references.map((r) => [r.field, r.target.name]), [['organizationId', 'company']]);
  assert.is(registry.get('company')!.organizationRoot, undefined);
});

test('organizationOptional: organizationId nullable in bodies, records and where; scope organization only; children follow their parent', () => {
  const company = definition('company', 'tenant', 'organizationRoot: {}');
  const registry = compileDefinitions([
    parseDefinition(company, 'company.yaml'),
    parseDefinition(definition('desk', 'organization', 'organizationOptional: true\nunique:\n  - fields: [organizationId, label]'), 'desk.yaml'),
    parseDefinition(definition('chair', 'organization'), 'chair.yaml'),
  ], { permissions });
  const desk = registry.get('desk')!;
  const chair = registry.get('chair')!;
  assert.equal([desk.organizationOptional, chair.organizationOptional], [true, false]);
  const organizationOf = (schema: object) => (schema as { properties: Record<string, { type: unknown }> }).properties.organizationId.type;
  assert.equal([organizationOf(desk.schemas.create), organizationOf(desk.schemas.record)], [['string', 'null'], ['string', 'null']]);
  assert.equal([organizationOf(chair.schemas.create), organizationOf(chair.schemas.record)], ['string', 'string']);
  const deskFilter = desk.filters.get('organizationId')!;
  assert.equal([deskFilter.coerce(null, 'where.organizationId'), deskFilter.coerce('null', 'where.organizationId')], [{ ok: true, value: null }, { ok: true, value: null }]);
  assert.equal(chair.filters.get('organizationId')!.coerce('null', 'where.organizationId'), { ok: false, message: 'where.organizationId must be a UUID' });
  // A unique rule naming organizationId holds the records of none too, by tenant.
  assert.equal(desk.uniqueMessages[0].tenantWide, ['tenantId', 'label']);

  assert.equal(inlineProblems({ 'company.yaml': company, 'gadget.yaml': definition('gadget', 'tenant', 'organizationOptional: true') }), [
    'gadget.yaml:6:23 organizationOptional: applies to scope "organization" only: records of scope "tenant" have no organization',
  ]);
  assert.equal(inlineProblems({
    'company.yaml': company,
    'box.yaml': definition('box', 'organization', 'organizationOptional: true\nrelations:\n  parts: { hasMany: part, via: boxId, writable: true }'),
    'part.yaml': definition('part', 'organization', '  boxId: { type: uuid }'),
  }), ['box.yaml:8:49 relations.parts.writable: part records written with a box take its organization, which may be none (organizationOptional): part needs organizationOptional too']);
});

test('two resources whose OpenAPI schema names collide stop start-up like any bad definition', () => {
  const registry = compileDefinitions([
    parseDefinition(definition('gadget', 'tenant'), 'gadget.yaml'),
    parseDefinition(definition('gadget-create', 'tenant'), 'gadget-create.yaml'),
  ], { permissions });
  try {
    buildComponents(registry);
    assert.unreachable('built');
  } catch (err) {
    assert.instance(err, DefinitionError);
    assert.equal((err as DefinitionError).problems, [
      'gadget-create.yaml name: "gadget-create" needs the OpenAPI schema name GadgetCreate, already taken by gadget (gadget.yaml)',
    ]);
  }
});

test('role names agree: the role resource enum, roles.yaml and the code that creates them', () => {
  const role = loadDefinitionDir(RESOURCES_DIR).find((s) => s.definition.name === 'role')!;
  assert.equal(role.definition.fields.name.enum, [...ROLES]);
  assert.equal([...loadRoles(ROLES_FILE).grants.keys()], [...ROLES]);
});

test('the project definitions all pass the format and compile', () => {
  const sources = loadDefinitionDir(RESOURCES_DIR);
  assert.ok(sources.length >= 5);
  const registry = compileDefinitions(sources, { permissions });
  assert.equal([...registry.keys()].sort(), sources.map((s) => s.definition.name).sort());
});

test('a bad definition fails createApp with the same DefinitionError', async () => {
  try {
    const t = await createTestApp({ resourceDirs: [RESOURCES_DIR, path.join(BAD, 'duplicate-path')] });
    await t.close();
    assert.unreachable('the app was built');
  } catch (err) {
    assert.instance(err, DefinitionError);
    assert.match((err as Error).message, /^Invalid resource definition:\n {2}.*gizmo\.yaml:3:19 aliases\.1: path "\/api\/gadget" is already used by gadget/);
  }
});

test('start-up refuses: the server prints every problem and exits 1 before listening', async () => {
  const dataDir = mkdtempSync(path.join(tmpdir(), 'bad-definitions-'));
  try {
    const exit = await runServerToExit({ EXTRA_RESOURCES_DIR: BAD, DATA_DIR: dataDir, DATABASE_URL: process.env.DATABASE_URL });
    assert.is(exit.code, 1, exit.stderr);
    assert.not.match(exit.stdout, /"listening"/);
    assert.ok(exit.stderr.startsWith('Invalid resource definition:\n'), exit.stderr);
    // The same message in one log line, the last, at level fatal.
    assert.is(startupFailure(exit).msg, exit.stderr.trim());
    // The server runs in the project folder, so it prints the same relative names as this test.
    for (const line of [
      `${shown('unknown-top-level-key.yaml')}:7:1 filter: is not a known property`,
      `${shown('field-property-typo.yaml')}:6:30 fields.firstName.requird: is not a known property`,
      `${shown('bad-field-type.yaml')}:7:11 fields.firstName.type: must be one of:`,
      `${shown('relation-two-kinds.yaml')}:10:5 relations.tags: a relation needs exactly one of:`,
      `${shown('yaml-syntax.yaml')}:8:1 YAML syntax:`,
    ]) {
      assert.ok(exit.stderr.includes(`\n  ${line}`), `missing\n  ${line}\nin\n${exit.stderr}`);
    }
    assert.not.match(exit.stderr, /\n\s+at /, 'a definition problem is a message, not a stack trace');
  } finally {
    rmSync(dataDir, { recursive: true, force: true });
  }
});

// ---------------------------------------------------------------------------------------------
// The widget fixture: a definition and a migration, no code.

let t: TestApp;
let admin: Session & { organizationId: string };
let viewer: Session;
const WIDGET = { label: 'Sprocket', size: 3, weight: 1.5, colour: 'red', homepage: 'https://example.com/sprocket', madeOn: '2026-01-05', notes: 'Spins both ways' };

test.before(async () => {
  t = await createTestApp({ resourceDirs: [RESOURCES_DIR, WIDGET_DIR], migrationDirs: [path.join(WIDGET_DIR, 'migrations')] });
  admin = await newTenant(t);
  viewer = await userWithRole(t, admin, 'VIEWER');
});
test.after(async () => {
  killServers();
  await t?.close();
});

const widgetRow = (id: string) => t.db('widget').where({ id }).first();

test('widget: create answers 201 with the record; defaults, read-only and hidden fields behave', async () => {
  const res = await t.http.post('/api/widget').set(admin.auth).send({ ...WIDGET, size: undefined });
  assert.is(res.status, 201, JSON.stringify(res.body));
  const body = res.body;
  assert.equal(
    Object.keys(body).sort(),
    ['id', 'tenantId', 'organizationId', 'createdAt', 'updatedAt', 'label', 'size', 'weight', 'colour', 'homepage', 'madeOn', 'notes', 'isShiny', 'serial'].sort(),
  );
  assert.is(body.size, 1, 'the YAML default');
  assert.is(body.isShiny, false, 'the YAML default');
  assert.is(body.madeOn, '2026-01-05T00:00:00.000Z');
  assert.match(body.serial, /^W-[0-9a-f]{8}$/, 'set by the database, returned');
  assert.is(body.tenantId, admin.tenantId);
  assert.is(body.organizationId, admin.organizationId);
  const row = await widgetRow(body.id);
  assert.is(row.label, 'Sprocket');
  assert.is(row.size, 1);
  assert.is(row.tenantId, admin.tenantId);
  assert.is(row.secret, null);
});

test('widget: create validates the body by the YAML rules, writing nothing', async () => {
  const before = (await t.db('widget').count({ n: '*' }))[0].n;
  const res = await t.http.post('/api/widget').set(admin.auth).send({
    size: 11,
    weight: 0,
    colour: 'purple',
    homepage: 'not a url',
    madeOn: 'yesterday',
    isShiny: 'yes',
    secret: 'x',
    gears: 4,
  });
  assert.is(res.status, 400, JSON.stringify(res.body));
  assert.is(res.body.error, 'Bad Request');
  assert.equal([...res.body.message].sort(), [
    'label should not be empty',
    'size must not be greater than 10',
    'weight must be greater than 0',
    'colour must be one of the following values: red, green, blue',
    'homepage must be a URL address',
    'madeOn must be a valid ISO 8601 date string',
    'isShiny must be a boolean value',
    'property secret should not exist',
    'property gears should not exist',
  ].sort());
  assert.is((await t.db('widget').count({ n: '*' }))[0].n, before);

  const long = await t.http.post('/api/widget').set(admin.auth).send({ label: 'x'.repeat(41) });
  assert.is(long.status, 400);
  assert.equal(long.body.message, ['label must be shorter than or equal to 40 characters']);
  const empty = await t.http.post('/api/widget').set(admin.auth).send({ label: '' });
  assert.equal(empty.body.message, ['label should not be empty'], 'a required string is not empty');
});

test('widget: read-only fields in a body are ignored, the unique rule answers 409 with its YAML message', async () => {
  const res = await t.http.post('/api/widget').set(admin.auth).send({ label: 'Cog', serial: 'W-mine', id: '00000000-0000-4000-8000-000000000000' });
  assert.is(res.status, 201, JSON.stringify(res.body));
  assert.is.not(res.body.serial, 'W-mine');
  assert.is.not(res.body.id, '00000000-0000-4000-8000-000000000000');
  const again = await t.http.post('/api/widget').set(admin.auth).send({ label: 'Cog' });
  assert.is(again.status, 409, JSON.stringify(again.body));
  assert.is(again.body.message, 'A widget with this label already exists in this organization');
  assert.is((await t.db('widget').where({ label: 'Cog' }).count({ n: '*' }))[0].n, 1);
});

test('widget: read one, under its path and its alias; 404 for an unknown id, 400 for a bad one', async () => {
  const created = (await t.http.post('/api/widget').set(admin.auth).send({ ...WIDGET, label: 'Gear' })).body;
  for (const base of ['/api/widget', '/api/widgets']) {
    const res = await t.http.get(`${base}/${created.id}`).set(admin.auth);
    assert.is(res.status, 200, JSON.stringify(res.body));
    assert.equal(res.body, created);
  }
  const missing = await t.http.get('/api/widget/00000000-0000-4000-8000-000000000000').set(admin.auth);
  assert.is(missing.status, 404);
  assert.is(missing.body.message, 'The requested record was not found');
  const bad = await t.http.get('/api/widget/nope').set(admin.auth);
  assert.is(bad.status, 400);
  assert.equal(bad.body.message, ['id must be a UUID']);
});

test('widget: list and search take the filters, sort keys, search fields and dates of the YAML', async () => {
  await t.db('widget').where({ tenantId: admin.tenantId }).delete();
  const make = async (body: Record<string, unknown>) => {
    const res = await t.http.post('/api/widget').set(admin.auth).send(body);
    assert.is(res.status, 201, JSON.stringify(res.body));
    return res.body;
  };
  const a = await make({ label: 'Alpha', size: 2, colour: 'red', madeOn: '2026-01-01', notes: 'first of the batch' });
  const b = await make({ label: 'Bravo', size: 9, colour: 'blue', madeOn: '2026-02-01', isShiny: true });
  const c = await make({ label: 'Charlie', size: 5, colour: 'red', madeOn: '2026-03-01' });

  const ids = (res: { body: { items: Array<{ id: string }> } }) => res.body.items.map((w) => w.id);
  const red = await t.http.get('/api/widget?where[colour]=red&order[size]=DESC').set(admin.auth);
  assert.is(red.status, 200, JSON.stringify(red.body));
  assert.equal(ids(red), [c.id, a.id]);
  assert.is(red.body.total, 2);
  assert.equal(ids(await t.http.get('/api/widget?where[isShiny]=true').set(admin.auth)), [b.id]);
  assert.equal(ids(await t.http.get('/api/widget?search=BATCH').set(admin.auth)), [a.id]);
  assert.equal(ids(await t.http.get('/api/widget?startDate=2026-01-15&endDate=2026-02-01&order[label]=ASC').set(admin.auth)), [b.id]);
  const page = await t.http.get('/api/widget?order[label]=ASC&take=2&skip=1').set(admin.auth);
  assert.equal(ids(page), [b.id, c.id]);
  assert.is(page.body.total, 3);

  const search = await t.http.post('/api/widget/search').set(admin.auth).send({ where: { colour: 'red' }, order: { label: 'ASC' }, take: 1 });
  assert.is(search.status, 200, JSON.stringify(search.body));
  assert.equal(ids(search), [a.id]);
  assert.is(search.body.total, 2);

  // What the YAML does not list is refused, not ignored.
  const notes = await t.http.get('/api/widget?where[notes]=x').set(admin.auth);
  assert.is(notes.status, 400, JSON.stringify(notes.body));
  assert.ok(notes.body.message.some((m: string) => m.includes('notes')), JSON.stringify(notes.body));
  const weight = await t.http.get('/api/widget?order[weight]=ASC').set(admin.auth);
  assert.is(weight.status, 400, JSON.stringify(weight.body));
  const secret = await t.http.get('/api/widget?where[secret]=x').set(admin.auth);
  assert.is(secret.status, 400, JSON.stringify(secret.body));
});

test('widget: its maxTake from the YAML clamps the page size', async () => {
  await t.db('widget').insert(
    Array.from({ length: 25 }, (_, i) => ({ tenantId: admin.tenantId, organizationId: admin.organizationId, label: `Bulk ${i}` })),
  );
  const res = await t.http.get('/api/widget?take=50').set(admin.auth);
  assert.is(res.status, 200, JSON.stringify(res.body));
  assert.is(res.body.items.length, 20);
  assert.ok(res.body.total >= 25);
});

test('widget: writable tags by id, and the tags[] filter of tagFilter', async () => {
  const tag = await t.http.post('/api/tags').set(admin.auth).send({ name: 'Fragile', color: '#f00' });
  assert.is(tag.status, 201, JSON.stringify(tag.body));
  const w = await t.http.post('/api/widget').set(admin.auth).send({ label: 'Tagged', tagIds: [tag.body.id] });
  assert.is(w.status, 201, JSON.stringify(w.body));
  const links = await t.db('tag_widget').where({ widgetId: w.body.id });
  assert.equal(links.map((l: { tagId: string }) => l.tagId), [tag.body.id]);
  const withTags = await t.http.get(`/api/widget/${w.body.id}?relations[]=tags`).set(admin.auth);
  assert.equal(withTags.body.tags.map((x: { id: string }) => x.id), [tag.body.id]);
  const filtered = await t.http.get(`/api/widget?tags[]=${tag.body.id}`).set(admin.auth);
  assert.equal(filtered.body.items.map((x: { id: string }) => x.id), [w.body.id]);
  const unknown = await t.http.post('/api/widget').set(admin.auth).send({ label: 'Ghost tag', tagIds: ['00000000-0000-4000-8000-000000000000'] });
  assert.is(unknown.status, 400, JSON.stringify(unknown.body));
  assert.is(await t.db('widget').where({ label: 'Ghost tag' }).first(), undefined);
});

test('widget: PUT replaces (absent optional fields reset), PATCH modifies only what is sent', async () => {
  const created = (await t.http.post('/api/widget').set(admin.auth).send({ ...WIDGET, label: 'Spindle', isShiny: true })).body;
  const missing = await t.http.put(`/api/widget/${created.id}`).set(admin.auth).send({ size: 2 });
  assert.is(missing.status, 400);
  assert.equal(missing.body.message, ['label should not be empty']);

  const put = await t.http.put(`/api/widget/${created.id}`).set(admin.auth).send({ label: 'Spindle II' });
  assert.is(put.status, 200, JSON.stringify(put.body));
  assert.is(put.body.label, 'Spindle II');
  assert.is(put.body.size, 1, 'back to its default');
  assert.is(put.body.isShiny, false, 'back to its default');
  assert.is(put.body.colour, null);
  assert.is(put.body.madeOn, null);
  assert.is(put.body.serial, created.serial, 'read-only fields are kept');
  const row = await widgetRow(created.id);
  assert.equal([row.label, row.size, row.colour, row.notes], ['Spindle II', 1, null, null]);

  const patch = await t.http.patch(`/api/widget/${created.id}`).set(admin.auth).send({ colour: 'green' });
  assert.is(patch.status, 200, JSON.stringify(patch.body));
  assert.is(patch.body.colour, 'green');
  assert.is(patch.body.label, 'Spindle II');
  const badPatch = await t.http.patch(`/api/widget/${created.id}`).set(admin.auth).send({ size: 0 });
  assert.is(badPatch.status, 400);
  assert.equal(badPatch.body.message, ['size must not be less than 1']);
  assert.is((await widgetRow(created.id)).size, 1);
});

test('widget: DELETE answers 204 and removes the record and its links', async () => {
  const tag = (await t.http.post('/api/tags').set(admin.auth).send({ name: 'Doomed', color: '#000' })).body;
  const created = (await t.http.post('/api/widget').set(admin.auth).send({ label: 'Doomed', tags: [{ id: tag.id }] })).body;
  const res = await t.http.delete(`/api/widget/${created.id}`).set(admin.auth);
  assert.is(res.status, 204);
  assert.is(await widgetRow(created.id), undefined);
  assert.equal(await t.db('tag_widget').where({ widgetId: created.id }), []);
  assert.is((await t.http.get(`/api/widget/${created.id}`).set(admin.auth)).status, 404);
  assert.is((await t.http.delete(`/api/widget/${created.id}`).set(admin.auth)).status, 404);
});

test('widget: the YAML permissions and the tenant apply', async () => {
  const created = (await t.http.post('/api/widget').set(admin.auth).send({ label: 'Guarded' })).body;
  // read: authenticated; write: ALL_ORG_EDIT, which VIEWER lacks.
  assert.is((await t.http.get(`/api/widget/${created.id}`).set(viewer.auth)).status, 200);
  const denied = await t.http.post('/api/widget').set(viewer.auth).send({ label: 'Sneaky' });
  assert.is(denied.status, 403);
  assert.is(denied.body.message, 'Forbidden resource');
  assert.is(await t.db('widget').where({ label: 'Sneaky' }).first(), undefined);
  assert.is((await t.http.get('/api/widget')).status, 401);
  const other = await newTenant(t, 'Other');
  assert.is((await t.http.get(`/api/widget/${created.id}`).set(other.auth)).status, 404);
  assert.is((await t.http.get('/api/widget').set(other.auth)).body.total, 0);
});

test('widget: it is in the OpenAPI document, paths and components', async () => {
  const res = await t.http.get('/swg-json');
  assert.is(res.status, 200);
  const doc = res.body;
  for (const p of ['/api/widget', '/api/widget/{id}', '/api/widget/search']) {
    assert.ok(doc.paths?.[p], `${p} is in paths (${Object.keys(doc.paths ?? {}).join(', ')})`);
  }
  // The alias answers as the widget's paths: listed in their x-aliases, not in paths again.
  assert.equal(doc.paths['/api/widget']['x-aliases'], ['/api/widgets']);
  assert.equal(doc.paths['/api/widget/{id}']['x-aliases'], ['/api/widgets/{id}']);
  assert.is(doc.paths['/api/widgets'], undefined);
  assert.equal(Object.keys(doc.paths['/api/widget']).filter((k) => k !== 'x-aliases').sort(), ['get', 'post']);
  assert.equal(Object.keys(doc.paths['/api/widget/{id}']).filter((k) => k !== 'x-aliases').sort(), ['delete', 'get', 'patch', 'put']);
  const schemas = doc.components?.schemas ?? {};
  for (const name of ['Widget', 'WidgetCreate', 'WidgetReplace', 'WidgetPatch', 'WidgetList']) assert.ok(schemas[name], `${name} in components.schemas`);
  const record = schemas.Widget;
  assert.ok(record.properties.label && record.properties.serial, JSON.stringify(record));
  assert.is(record.properties.secret, undefined, 'hidden fields are not documented');
  const create = schemas.WidgetCreate;
  assert.equal(create.required, ['label']);
  assert.equal(create.properties.colour.enum.filter((v: unknown) => v !== null), ['red', 'green', 'blue']);
  // A read-only field is either left out of a body or documented as readOnly (sent, it is ignored).
  assert.ok(create.properties.serial === undefined || create.properties.serial.readOnly === true, JSON.stringify(create.properties.serial));
  assert.not.ok(create.required.includes('serial'));
});

// ---------------------------------------------------------------------------------------------
// engine/ names no resource.

/**
 * Code without its comments (a comment may well say "an employee's records") and without the
 * format's own scope keyword ('tenant' | 'organization', scope === 'organization').
 */
function code(text: string): string {
  return text
    .replace(/\/\*[\s\S]*?\*\//g, '')
    .replace(/(^|[^:'"`\\])\/\/.*$/gm, '$1')
    .replace(/'tenant' \| 'organization'/g, '')
    .replace(/scope [!=]== 'organization'/g, '');
}

/** String literals of the code: where a resource name would really couple the engine to it. */
function literals(text: string): string[] {
  return [...code(text).matchAll(/'(?:[^'\\\n]|\\.)*'|"(?:[^"\\\n]|\\.)*"|`(?:[^`\\]|\\.)*`/g)].map((m) => m[0].slice(1, -1));
}

function engineFiles(dir = ENGINE_DIR): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((e) =>
    e.isDirectory() ? engineFiles(path.join(dir, e.name)) : e.name.endsWith('.ts') ? [path.join(dir, e.name)] : [],
  );
}

test('engine/ names no resource of resources/', () => {
  // Resource and table names as they would appear in code: a whole literal ('employee'), or a
  // delimited part of an identifier-like one ('tag_employee', '/api/employee', 'employee.id').
  // Prose (a literal with spaces: messages, descriptions) may use the same words as English.
  const names = loadDefinitionDir(RESOURCES_DIR).flatMap(({ definition: d }) => [d.name, d.table ?? d.name.replace(/-/g, '_')]);
  const pattern = new RegExp(`(?:^|[^A-Za-z0-9])(${[...new Set(names)].join('|')})(?:[^A-Za-z0-9]|$)`);
  const found = new Map<string, string>();
  for (const file of engineFiles()) {
    const relative = path.relative(ENGINE_DIR, file);
    for (const literal of literals(readFileSync(file, 'utf8'))) {
      // Prose and other services' addresses (https://api.github.com/user, postgres://user@host/db)
      // name no resource of ours.
      const match = /\s/.test(literal) || /^[a-z][a-z0-9+.-]*:\/\//.test(literal) ? null : pattern.exec(literal);
      if (match) found.set(`${relative}\u0000${literal}`, `engine/${relative}: '${literal}' names "${match[1]}"`);
    }
  }
  const violations = [...found.values()];
  assert.equal(violations, [], `engine/ names resources:\n  ${violations.join('\n  ')}`);
});

test.run();
