// What an independent schema-driven fuzzer found where the document and the server disagreed
// (issue 42), each pinned by the request that showed it: the answer the server gives, and the
// document agreeing with it (an answer fits its declared schema; a value the server refuses is
// one the document refuses too, and one it takes is one the document takes).
import { Ajv } from 'ajv';
import addFormats from 'ajv-formats';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { newTenant, type Session } from '../helpers/accounts.js';
import { createTestApp, type TestApp } from '../helpers/app.js';
import { assertError } from '../helpers/error-envelope.js';
import { OpenApiChecker, supertestAnswer } from '../helpers/openapi-checker.js';
import { operationsOf } from '../helpers/openapi.js';

let t: TestApp;
let doc: Record<string, any>;
let checker: OpenApiChecker;
let admin: Session & { organizationId: string };
let taskId: string;

test.before(async () => {
  t = await createTestApp();
  doc = t.openapi as Record<string, any>;
  checker = new OpenApiChecker(doc);
  admin = await newTenant(t, 'Findings');
  const task = await t.http.post('/api/task').set(admin.auth).send({ title: 'Pinned' });
  assert.is(task.status, 201, JSON.stringify(task.body));
  taskId = task.body.id;
});
test.after(async () => {
  await t?.close();
});

/** A node of the document with its $refs followed. */
function resolve(node: any): any {
  let current = node;
  while (current?.$ref) current = String(current.$ref).slice(2).split('/').reduce((at: any, part: string) => at?.[part.replace(/~1/g, '/').replace(/~0/g, '~')], doc);
  return current;
}

/** The schema of one parameter of one operation, as a validator of the text a request carries. */
function parameterValidator(method: string, path: string, where: string, name: string) {
  const item = doc.paths[path];
  const parameter = [...(item.parameters ?? []), ...(item[method].parameters ?? [])].map(resolve).find((p) => p.in === where && p.name === name);
  assert.ok(parameter, `${method.toUpperCase()} ${path} declares the ${where} parameter ${name}`);
  const ajv = new Ajv({ strict: false, coerceTypes: true });
  addFormats.default(ajv);
  ajv.addSchema({ $id: 'doc', components: doc.components });
  const rebase = (node: any): any =>
    Array.isArray(node) ? node.map(rebase) : node && typeof node === 'object' ? Object.fromEntries(Object.entries(node).map(([k, v]) => [k, k === '$ref' ? `doc${v}` : rebase(v)])) : node;
  return ajv.compile(rebase(parameter.schema));
}

test('1. a relation narrowed by select[] is declared narrowed: id and what was asked, nothing else required', async () => {
  for (const path of [`/api/task/${taskId}`, '/api/task']) {
    const url = `${path}?select[]=creator.createdAt&relations[]=creator.role`;
    const res = await t.http.get(url).set(admin.auth);
    assert.is(res.status, 200, JSON.stringify(res.body));
    const record = path === '/api/task' ? res.body.items.find((item: any) => item.id === taskId) : res.body;
    assert.equal(Object.keys(record.creator).sort(), ['createdAt', 'id', 'role']);
    assert.is(record.creator.id, admin.userId);
    assert.equal(checker.checkResponse(supertestAnswer('GET', url, res)), []);
  }
  // Every relation of every Selected schema refers to its target's Selected schema, whichever level.
  for (const [name, schema] of Object.entries<any>(doc.components.schemas)) {
    if (!name.endsWith('Selected')) continue;
    for (const [property, value] of Object.entries<any>(schema.properties)) {
      const refs = JSON.stringify(value).match(/"#\/components\/schemas\/[A-Za-z]+"/g) ?? [];
      for (const ref of refs) assert.ok(ref.endsWith('Selected"'), `${name}.${property} refers to ${ref}, a whole record`);
    }
  }
});

/** Whether a concrete path fits a templated one, each parameter's value by its declared schema. */
function fitsTemplate(method: string, concrete: string, template: string): boolean {
  const names = template.match(/\{[^}]+\}/g)?.map((n) => n.slice(1, -1)) ?? [];
  const pattern = new RegExp(`^${template.split(/\{[^}]+\}/).map((part) => part.replace(/[.*+?^$()|[\]\\]/g, '\\$&')).join('([^/]+)')}$`);
  const values = pattern.exec(concrete)?.slice(1);
  if (!values) return false;
  return names.every((name, i) => parameterValidator(method, template, 'path', name)(values[i]));
}

test('2. no documented path is also an instance of a templated one (a report name is not an "unknown report")', async () => {
  const concrete = operationsOf(doc).filter(({ path }) => !path.includes('{'));
  const templated = operationsOf(doc).filter(({ path }) => path.includes('{'));
  const overlaps = concrete.flatMap((c) =>
    templated.filter((tpl) => tpl.method === c.method && fitsTemplate(tpl.method, c.path, tpl.path)).map((tpl) => `${c.method.toUpperCase()} ${c.path} fits ${tpl.path}`),
  );
  assert.equal(overlaps, []);
  // The server still names the reports for a name that is none.
  const res = await t.http.get('/api/report/no-such-report').set(admin.auth);
  assertError(res, 404, 'No such report; reports: time-log-daily, time-log-weekly, amounts-owed, project-budgets');
});

test('3. an empty Idempotency-Key counts as none, and the document says so', async () => {
  const fits = parameterValidator('post', '/api/task', 'header', 'Idempotency-Key');
  assert.ok(fits(''), 'the document takes an empty key');
  assert.not.ok(fits('with space'), 'the document refuses what the server refuses');
  for (let i = 0; i < 2; i++) {
    const res = await t.http.post('/api/task').set(admin.auth).set('Idempotency-Key', '').send({ title: 'No key' });
    assert.is(res.status, 201, JSON.stringify(res.body));
    assert.is(res.headers['idempotent-replayed'], undefined);
  }
  // Not a key: both requests ran.
  const rows = await t.db('task').where({ tenantId: admin.tenantId, title: 'No key' });
  assert.is(rows.length, 2);
  const bad = await t.http.post('/api/task').set(admin.auth).set('Idempotency-Key', 'with space').send({ title: 'Bad key' });
  assertError(bad, 400, 'Idempotency-Key must be 1 to 255 visible ASCII characters (no spaces)');
});

/** Whether a schema requires a property it (or a schema it is made of) marks readOnly. */
function requiredReadOnly(schema: any, at: string, depth = 0): string[] {
  const s = resolve(schema);
  if (!s || typeof s !== 'object' || depth > 8) return [];
  const found: string[] = [];
  const properties: Record<string, any> = {};
  const required = new Set<string>();
  const gather = (part: any) => {
    const p = resolve(part);
    Object.assign(properties, Object.fromEntries(Object.entries<any>(p?.properties ?? {}).filter(([name, v]) => resolve(v)?.readOnly || !properties[name])));
    for (const name of p?.required ?? []) required.add(name);
    for (const inner of p?.allOf ?? []) gather(inner);
  };
  gather(s);
  for (const name of required) if (resolve(properties[name])?.readOnly) found.push(`${at}: ${name} is required and readOnly`);
  if (s.items) found.push(...requiredReadOnly(s.items, `${at}[]`, depth + 1));
  for (const part of [...(s.oneOf ?? []), ...(s.anyOf ?? [])]) found.push(...requiredReadOnly(part, at, depth + 1));
  return found;
}

test('4. every request body can be sent: no property is both required and readOnly (the bulk PATCH items)', async () => {
  const problems = operationsOf(doc).flatMap(({ path, method, op }) => {
    const schema = resolve(op.requestBody)?.content?.['application/json']?.schema;
    return schema ? requiredReadOnly(schema, `${method.toUpperCase()} ${path}`) : [];
  });
  assert.equal(problems, []);
  const body = [{ id: taskId, title: 'Renamed in bulk' }];
  const res = await t.http.patch('/api/task/bulk').set(admin.auth).send(body);
  assert.is(res.status, 200, JSON.stringify(res.body));
  assert.is(res.body.items[0].title, 'Renamed in bulk');
  assert.equal(checker.checkRequest({ method: 'PATCH', path: '/api/task/bulk', headers: [['Content-Type', 'application/json']], json: body }, res.status), []);
  assert.is((await t.db('task').where({ id: taskId }).first()).title, 'Renamed in bulk');
});

/** A component schema of the document, as a validator of a JSON body. */
function schemaValidator(name: string) {
  const ajv = new Ajv({ strict: false });
  addFormats.default(ajv);
  ajv.addSchema({ $id: 'doc', components: doc.components });
  return ajv.compile({ $ref: `doc#/components/schemas/${name}` });
}

test('5. what the server refuses as malformed, the document refuses too; what it takes, the document takes', async () => {
  const ifMatch = parameterValidator('patch', '/api/task/{id}', 'header', 'If-Match');
  const ifNoneMatch = parameterValidator('get', '/api/task/{id}', 'header', 'If-None-Match');
  const patched = await t.http.patch(`/api/task/${taskId}`).set(admin.auth).set('If-Match', 'hello').send({ title: 'Never' });
  assertError(patched, 400, 'If-Match must be * or a list of entity tags ("…" or W/"…")');
  assert.not.ok(ifMatch('hello'));
  const read = await t.http.get(`/api/task/${taskId}`).set(admin.auth).set('If-None-Match', 'hello');
  assertError(read, 400, 'If-None-Match must be * or a list of entity tags ("…" or W/"…")');
  assert.not.ok(ifNoneMatch('hello'));
  for (const tags of ['*', '"abc"', 'W/"abc", "def"', '"a",,"b"']) {
    assert.ok(ifMatch(tags) && ifNoneMatch(tags), `the document takes ${tags}`);
  }
  assert.not.ok(ifMatch(''), 'an empty If-Match is a 400 too');
  assertError(await t.http.patch(`/api/task/${taskId}`).set(admin.auth).set('If-Match', '').send({ title: 'Never' }), 400);
  // An empty If-None-Match counts as none: the read answers, and the document takes it.
  assert.is((await t.http.get(`/api/task/${taskId}`).set(admin.auth).set('If-None-Match', '')).status, 200);
  assert.ok(ifNoneMatch(''));
  assert.is((await t.db('task').where({ id: taskId }).first()).title, 'Renamed in bulk');

  const where = parameterValidator('get', '/api/task', 'query', 'where');
  // where= is how some clients write an empty where object: no condition, as relations= names none.
  const unfiltered = await t.http.get('/api/task?where=').set(admin.auth);
  assert.is(unfiltered.status, 200, JSON.stringify(unfiltered.body));
  assert.ok(unfiltered.body.items.some((item: any) => item.id === taskId));
  assert.ok(where('') && where({}), 'the document takes where= and an empty where');
  assertError(await t.http.get('/api/task?where=x').set(admin.auth), 400, 'where must be an object of field to value, e.g. where[isActive]=true');
  assert.not.ok(where('x'));
  assertError(await t.http.get('/api/task?where[id][in]=').set(admin.auth), 400, 'where.id.in should not be empty');
  assert.not.ok(where({ id: { in: '' } }), 'an empty in list is refused');
  assert.ok(where({ id: { in: taskId } }) && where({ id: { in: [taskId] } }));

  for (const [name, fits] of [
    ['Tenant-Id', parameterValidator('get', '/api/task', 'header', 'Tenant-Id')],
    ['Organization-Id', parameterValidator('post', '/api/task', 'header', 'Organization-Id')],
  ] as const) {
    assert.not.ok(fits('acme'), `${name}: the document refuses what is no id`);
    assert.ok(fits('') && fits(admin.tenantId), `${name}: an id, or empty (none)`);
  }
  assertError(await t.http.get('/api/task').set(admin.auth).set('Tenant-Id', 'acme'), 403, 'Forbidden resource');
  assert.is((await t.http.get('/api/task').set(admin.auth).set('Tenant-Id', '')).status, 200);
  assertError(await t.http.post('/api/task').set(admin.auth).set('Organization-Id', 'acme').send({ title: 'Never' }), 400);
  const tenantQuery = parameterValidator('get', '/api/task', 'query', 'tenantId');
  assert.not.ok(tenantQuery('acme') || tenantQuery(''));
  assert.ok(tenantQuery(admin.tenantId));
});

test('6. the document shows the product\'s limits, whatever RATE_LIMIT_SCALE a deployment runs with', async () => {
  const scaled = await createTestApp({ env: { RATE_LIMIT_SCALE: '1000', RATE_LIMIT_WINDOW_SCALE: '0.5' } });
  try {
    const scaledDoc = scaled.openapi as Record<string, any>;
    const description = scaledDoc.paths['/api/task'].get.description as string;
    assert.match(description, /`GET \/api\/\*`: 1000 per 60 s/);
    assert.not.match(description, /1000000/);
    assert.equal(scaledDoc, doc, 'the same document as with no scaling');
    // The deployment still enforces its own numbers.
    assert.ok(scaled.rateLimiting.table.tiers.every((tier, i) => tier.requests === t.rateLimiting.table.tiers[i].requests * 1000));
  } finally {
    await scaled.close();
  }
});

test('7. a value the server refuses in a list\'s where, relations or select is one the document refuses (second round)', async () => {
  const where = parameterValidator('get', '/api/task', 'query', 'where');
  // Each: the where a client sends, and the refusal the server gives it; the document refuses it too.
  const refused: Array<[string, Record<string, unknown>, string]> = [
    ['where[dueDate]=2026-02-30', { dueDate: '2026-02-30' }, 'where.dueDate must be a valid ISO 8601 date string'],
    ['where[dueDate]=1387-11-31', { dueDate: '1387-11-31' }, 'where.dueDate must be a valid ISO 8601 date string'],
    ['where[dueDate]=0999-12-31', { dueDate: '0999-12-31' }, 'where.dueDate must be a valid ISO 8601 date string'],
    ['where[dueDate]=2026-01-05T10:00-27:00', { dueDate: '2026-01-05T10:00-27:00' }, 'where.dueDate must be a valid ISO 8601 date string'],
    ['where[deletedAt][ne]=null', { deletedAt: { ne: 'null' } }, 'where.deletedAt.ne must be a valid ISO 8601 date string'],
    ['where[id][in]=x,y', { id: { in: 'x,y' } }, 'where.id.in.0 must be a UUID'],
    ['where[number][nin]=1,2a', { number: { nin: '1,2a' } }, 'where.number.nin.1 must be an integer number'],
    ['where[dueDate][between]=2026-01-05', { dueDate: { between: '2026-01-05' } }, 'where.dueDate.between must be two values (from, to), e.g. [1, 10] or 1,10'],
    ['where[status][in]=open,shut', { status: { in: 'open,shut' } }, 'where.status.in.1 must be one of the following values: open'],
    ['where[number]=-5392524873', { number: '-5392524873' }, 'where.number must not be less than -2147483648 or greater than 2147483647'],
    ['where[estimate][lt]=2147483648', { estimate: { lt: '2147483648' } }, 'where.estimate.lt must not be less than -2147483648 or greater than 2147483647'],
  ];
  for (const [query, value, message] of refused) {
    const answer = await t.http.get(`/api/task?${query.replace(/\+/g, '%2B')}`).set(admin.auth);
    assert.is(answer.status, 400, `${query}: ${JSON.stringify(answer.body)}`);
    assert.ok(answer.body.message.some((m: string) => m.startsWith(message)), `${query}: ${JSON.stringify(answer.body.message)}`);
    assert.not.ok(where(value), `the document refuses ${query}`);
  }
  // where[relation][field]={} (a JSON body): no value and no operator, refused by both.
  const nested = await t.http.post('/api/task/search').set(admin.auth).send({ where: { project: { name: {} } } });
  assertError(nested, 400, 'where.project.name should not be empty: give a value, or operators such as where.project.name[eq]');
  assert.not.ok(where({ project: { name: {} } }));
  // What the server takes, the document takes: a leap day, the ends of the range, a list of each type.
  const taken: Array<[string, Record<string, unknown>]> = [
    ['where[dueDate]=2024-02-29', { dueDate: '2024-02-29' }],
    ['where[dueDate]=1000-01-01T00:00Z', { dueDate: '1000-01-01T00:00Z' }],
    ['where[dueDate]=9999-12-31T23:59:59%2B05:00', { dueDate: '9999-12-31T23:59:59+05:00' }],
    ['where[dueDate][between]=2026-01-05,2026-02-28T09:30:00-23:59', { dueDate: { between: '2026-01-05,2026-02-28T09:30:00-23:59' } }],
    [`where[id][in]=${taskId},${taskId.toUpperCase()}`, { id: { in: `${taskId},${taskId.toUpperCase()}` } }],
    ['where[number][nin]=-2147483648,0,2147483647', { number: { nin: '-2147483648,0,2147483647' } }],
    ['where[status][in]=open,blocked', { status: { in: 'open,blocked' } }],
    ['where[prefix][in]=a,,b', { prefix: { in: 'a,,b' } }],
  ];
  for (const [query, value] of taken) {
    const answer = await t.http.get(`/api/task?${query}`).set(admin.auth);
    assert.is(answer.status, 200, `${query}: ${JSON.stringify(answer.body)}`);
    assert.ok(where(value), `the document takes ${query}`);
  }

  // A search body's relations and select as one comma-separated string: names the server takes.
  const findInput = schemaValidator('TaskFindInput');
  for (const [body, message] of [
    [{ relations: 'project,nothing' }, "relations: 'nothing' is not allowed"],
    [{ select: 'title,nothing' }, "select: 'nothing' is not a field of task"],
  ] as const) {
    const answer = await t.http.post('/api/task/search').set(admin.auth).send(body);
    assert.is(answer.status, 400, JSON.stringify(answer.body));
    assert.ok(answer.body.message.some((m: string) => m.startsWith(message)), JSON.stringify(answer.body.message));
    assert.not.ok(findInput(body), `the document refuses ${JSON.stringify(body)}`);
  }
  for (const body of [{ relations: 'project,tags' }, { relations: '' }, { select: 'title,project.name' }]) {
    const answer = await t.http.post('/api/task/search').set(admin.auth).send(body);
    assert.is(answer.status, 200, `${JSON.stringify(body)}: ${JSON.stringify(answer.body)}`);
    assert.ok(findInput(body), `the document takes ${JSON.stringify(body)}`);
  }
});

test.run();
