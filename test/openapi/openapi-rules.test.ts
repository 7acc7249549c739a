// One rule, both places: where the document states a rule that the server enforces in code (the
// shape of a date, the password rules and register's required fields, what a filter takes, the
// sort directions, the caps on query lists), both give the same answer for the same values.
import { randomUUID } from 'node:crypto';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { MAX_PASSWORD_LENGTH } from '../../auth/password.js';
import { MAX_QUERY_VALUES } from '../../engine/http/context.js';
import { findInputName } from '../../engine/openapi/fragments.js';
import { DATE_STRING_PATTERN } from '../../engine/resource/fields.js';
import { ORDER_DIRECTIONS } from '../../engine/resource/list-query.js';
import { newTenant, uniqueEmail } from '../helpers/accounts.js';
import { createTestApp, type TestApp } from '../helpers/app.js';
import { ODD_DATES } from '../helpers/fuzz/values.js';
import { OpenApiChecker } from '../helpers/openapi-checker.js';
import { operationsOf } from '../helpers/openapi.js';

let t: TestApp;
let doc: Record<string, any>;
let checker: OpenApiChecker;
let admin: Awaited<ReturnType<typeof newTenant>>;

test.before(async () => {
  t = await createTestApp();
  doc = t.openapi as Record<string, any>;
  checker = new OpenApiChecker(doc);
  admin = await newTenant(t, 'Rules Co');
});
test.after(async () => {
  await t?.close();
});

/** A JSON pointer segment. */
const seg = (s: string) => encodeURIComponent(s.replace(/~/g, '~0').replace(/\//g, '~1'));
const parameterAt = (path: string, method: string, name: string) => {
  const index = doc.paths[path][method].parameters.findIndex((p: any) => p.name === name);
  assert.ok(index >= 0, `${method} ${path} has ${name}`);
  return `#/paths/${seg(path)}/${method}/parameters/${index}/schema`;
};

test('dates: every date schema carries the server\'s pattern, and the server takes only what it matches', async () => {
  let dateSchemas = 0;
  const walk = (node: unknown) => {
    if (!node || typeof node !== 'object') return;
    const schema = node as Record<string, any>;
    if (typeof schema.description === 'string' && schema.description.includes('ISO 8601 date (2026-01-05')) {
      assert.is(schema.pattern, DATE_STRING_PATTERN, schema.description);
      dateSchemas++;
    }
    Object.values(schema).forEach(walk);
  };
  walk(doc);
  assert.ok(dateSchemas > 50, `${dateSchemas} date schemas`);
  assert.is(doc.components.schemas.EmployeeCreate.properties.startedWorkOn.pattern, DATE_STRING_PATTERN);
  assert.is(doc.components.schemas.Employee.properties.startedWorkOn.format, 'date-time', 'answered as a timestamp');

  const at = parameterAt('/api/time-log', 'get', 'startDate');
  const values = [...ODD_DATES, '2026-01-05', '2026-01-05T09:30:00Z', '2026-01-05T09:30:00.123+02:00', '2026-01-05t09:30z', '2026-01-05 09:30:00-0500', '2026-1-5', '2026-01-05T9:30Z'];
  for (const value of values) {
    const res = await t.http.get(`/api/time-log?startDate=${encodeURIComponent(value)}`).set(admin.auth);
    assert.ok([200, 400].includes(res.status), `${value}: ${res.status}`);
    const documented = checker.fits(at, value) === undefined;
    // What the server takes, the pattern takes; the pattern cannot see a calendar (2026-02-30) or the years 1000 to 9999.
    if (res.status === 200) assert.ok(documented, `the server takes ${value}; the document refuses it`);
    if (!documented) assert.is(res.status, 400, `the document refuses ${value}; the server takes it`);
  }
});

/** The register body with this password at the top level. */
const registration = (password: string) => ({ user: { email: uniqueEmail('rule'), firstName: 'Rule', lastName: 'Case' }, password });

test('passwords: the documented rules (length, character classes) are the server\'s, and register needs one', async () => {
  const body = doc.paths['/api/auth/register'].post.requestBody.content['application/json'].schema;
  for (const property of [body.properties.password, body.properties.user.properties.password, body.properties.confirmPassword]) {
    assert.is(property.minLength, 8);
    assert.is(property.maxLength, MAX_PASSWORD_LENGTH);
    assert.type(property.pattern, 'string');
  }
  const changed = doc.paths['/api/auth/change-password'].post.requestBody.content['application/json'].schema;
  assert.is(changed.properties.newPassword.pattern, body.properties.password.pattern);
  assert.equal(body.required, ['user']);
  assert.equal(body.properties.user.required, ['email']);

  const at = `#/paths/${seg('/api/auth/register')}/post/requestBody/content/${seg('application/json')}/schema`;
  const samples = [
    'Str0ng!Passw0rd', 'Aa1!aaaa', 'Aa1!aaa', 'alllower1!', 'ALLUPPER1!', 'NoDigits!!', 'NoSpecial11', 'Aa1 aaaa', 'Ünïcödé1!',
    '\u{1F600}\u{1F600}\u{1F600}Aa1!', '\u{1F600}\u{1F600}\u{1F600}\u{1F600}Aa1!', `Aa1!${'x'.repeat(MAX_PASSWORD_LENGTH - 4)}`, `Aa1!${'x'.repeat(MAX_PASSWORD_LENGTH - 3)}`,
  ];
  for (const password of samples) {
    const sent = registration(password);
    const documented = checker.fits(at, sent) === undefined;
    const res = await t.http.post('/api/auth/register').send(sent);
    assert.is(res.status, documented ? 201 : 400, `${JSON.stringify(password)}: the document ${documented ? 'takes' : 'refuses'} it; the server answered ${JSON.stringify(res.body).slice(0, 200)}`);
  }
  // The password at the top level or inside user; without one, a 400 in both places.
  const { password: _p, ...without } = registration('Str0ng!Passw0rd');
  assert.ok(checker.fits(at, without), 'the document refuses a registration without a password');
  assert.is((await t.http.post('/api/auth/register').send(without)).status, 400);
  const nested = { user: { ...without.user, password: 'Str0ng!Passw0rd' } };
  assert.is(checker.fits(at, nested), undefined);
  assert.is((await t.http.post('/api/auth/register').send(nested)).status, 201);
});

/** Texts a filter may be sent, typed and as a query string carries them. */
const FILTER_VALUES: unknown[] = [
  '', 'x', ' ', 'true', 'false', 'TRUE', '1', '0', '-1', '1.5', '-0.25', '1e3', '0x10', '+5', ' 7', '2147483647', '2147483648', '-2147483649', '000000000000005',
  '2026-01-05', '2026-01-05T09:30:00Z', '2026-02-30', randomUUID(), randomUUID().toUpperCase(), 'urn:uuid:123', 'x'.repeat(300),
  true, false, 1, 0, -5, 1.5, 2 ** 31, null,
];

test('filters: where[field] takes in the document every value the server takes, on every filter of every resource', () => {
  let checked = 0;
  for (const resource of t.engine.registry.values()) {
    if (!resource.routes) continue;
    const at = `#/components/schemas/${seg(findInputName(resource))}/properties/where`;
    for (const [name, filter] of resource.filters) {
      for (const value of FILTER_VALUES) {
        const taken = filter.coerce(value, `where.${name}`).ok;
        const problem = checker.fits(at, { [name]: value });
        if (taken) assert.is(problem, undefined, `${resource.name} where[${name}]=${JSON.stringify(value)}: the server takes it, the document refuses it`);
        checked++;
      }
    }
  }
  assert.ok(checked > 1000, `${checked} values checked`);
});

test('order: the directions the document lists are the ones the server takes', async () => {
  const at = parameterAt('/api/employee', 'get', 'order');
  assert.equal(doc.paths['/api/employee'].get.parameters.find((p: any) => p.name === 'order').schema.properties.firstName.enum, [...ORDER_DIRECTIONS]);
  for (const direction of [...ORDER_DIRECTIONS, 'Asc', 'dESC', 'up', '']) {
    const res = await t.http.get(`/api/employee?order[firstName]=${direction}`).set(admin.auth);
    const documented = checker.fits(at, { firstName: direction }) === undefined;
    assert.is(res.status, documented ? 200 : 400, `order[firstName]=${direction}`);
  }
});

test(`query lists: every array parameter documents at most ${MAX_QUERY_VALUES} values, and the server takes that many and refuses one more`, async () => {
  const lists = new Map<string, { path: string; name: string; maxItems: number }>();
  for (const { path, method, op } of operationsOf(doc)) {
    for (const p of op.parameters ?? []) {
      if (p.in !== 'query' || p.schema?.type !== 'array') continue;
      assert.type(p.schema.maxItems, 'number', `${method} ${path} ${p.name}`);
      assert.ok(p.schema.maxItems <= MAX_QUERY_VALUES, `${method} ${path} ${p.name}: maxItems ${p.schema.maxItems}`);
      if (method === 'get' && !lists.has(p.name) && p.schema.items?.format === 'uuid') lists.set(p.name, { path, name: p.name, maxItems: p.schema.maxItems });
    }
  }
  assert.ok(lists.size >= 2, [...lists.keys()].join(', '));
  for (const { path, name, maxItems } of lists.values()) {
    const many = (n: number) => Array.from({ length: n }, () => `${encodeURIComponent(name)}=${randomUUID()}`).join('&');
    const url = path.replace(/\{[^}]+\}/g, randomUUID());
    const full = await t.http.get(`${url}?${many(maxItems)}`).set(admin.auth);
    assert.is.not(full.status, 400, `${path} ${name}: ${maxItems} values: ${JSON.stringify(full.body).slice(0, 200)}`);
    const over = await t.http.get(`${url}?${many(maxItems + 1)}`).set(admin.auth);
    assert.is(over.status, 400, `${path} ${name}: ${maxItems + 1} values`);
  }
});

test('where[tenantId]: the document takes the caller\'s tenant, as the server does', async () => {
  const at = parameterAt('/api/tags', 'get', 'where');
  assert.is(checker.fits(at, { tenantId: admin.tenantId }), undefined);
  assert.is((await t.http.get(`/api/tags?where[tenantId]=${admin.tenantId}`).set(admin.auth)).status, 200);
});

test.run();
