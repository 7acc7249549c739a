// Export through HTTP: GET /api/export/{resource}?format=csv|json and GET /api/export (zip). Every
// file is compared with the rows in the database (values, order, header), hidden fields never
// leave, formula cells are neutralised in CSV only, another tenant's rows never appear, the zip
// holds exactly the resources the caller may read, and every refusal is its status and envelope.
import AdmZip from 'adm-zip';
import { parse } from 'csv-parse/sync';
import type { Response } from 'supertest';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import type { CompiledResource } from '../../engine/resource/compiled.js';
import { newTenant, userWithRole, type Session } from '../helpers/accounts.js';
import { createTestApp, type TestApp } from '../helpers/app.js';
import { assertError, assertNoLeak } from '../helpers/error-envelope.js';

type Tenant = Session & { organizationId: string };

let t: TestApp;
let acme: Tenant; // SUPER_ADMIN: reads everything
let other: Tenant; // another tenant, with rows of its own
let bulk: Tenant; // a tenant with 2,500 tags
let manager: Session; // EXPORT_ADD, but not ORG_USERS_VIEW
let dataEntry: Session; // no EXPORT_ADD
let employee: Session & { employeeId?: string }; // no EXPORT_ADD either

const TRICKY_TAGS = [
  { name: '=1+1', color: 'red' },
  { name: '+SUM(A1:A2)', color: 'green' },
  { name: '-5', color: '@blue' },
  { name: '@cmd', color: 'plain', description: "'=already quoted" },
  { name: 'Plain tag', color: 'grey', description: 'comma, "quote"\nand a line break' },
  { name: 'Ünïcødé ✓', color: '\tTab first' },
];
const BULK_ROWS = 2500;

test.before(async () => {
  t = await createTestApp();
  acme = await newTenant(t, 'Acme');
  other = await newTenant(t, 'Other');
  bulk = await newTenant(t, 'Bulk');
  manager = await userWithRole(t, acme, 'MANAGER');
  dataEntry = await userWithRole(t, acme, 'DATA_ENTRY');
  employee = await userWithRole(t, acme, 'EMPLOYEE', true);
  for (const body of TRICKY_TAGS) assert.is((await t.http.post('/api/tags').set(acme.auth).send(body)).status, 201);
  assert.is((await t.http.post('/api/tags').set(other.auth).send({ name: 'Other tenant tag', color: 'black' })).status, 201);
  const project = await t.http.post('/api/organization-project').set(acme.auth).send({ name: '=HYPERLINK("x")', budget: 1234.5, budgetType: 'cost', startDate: '2026-01-05', billable: true });
  assert.is(project.status, 201);
  const log = await t.http.post('/api/time-log').set(acme.auth).send({
    employeeId: employee.employeeId,
    startedAt: '2026-01-05T08:00:00Z',
    stoppedAt: '2026-01-05T09:30:00Z',
    projectId: project.body.id,
    description: '-minus first',
    isBillable: true,
  });
  assert.is(log.status, 201, JSON.stringify(log.body));
  const running = await t.http.post('/api/time-log').set(acme.auth).send({ employeeId: employee.employeeId, startedAt: '2026-01-06T08:00:00Z' });
  assert.is(running.status, 201);
  // One statement, as many rows as ten keyset batches need (and 25 chunks of text).
  await t.db.raw(
    `insert into tag ("tenantId", "organizationId", name, color) select ?, ?, 'bulk-' || n, 'red' from generate_series(1, ${BULK_ROWS}) as n`,
    [bulk.tenantId, bulk.organizationId],
  );
});
test.after(async () => {
  await t.close();
});

/** The envelope with exactly these messages (a 400's array, or the one sentence of another status). */
function assertErrorEnvelope(res: Response, status: number, message: string | string[]) {
  assertError(res, status);
  assertNoLeak(res);
  assert.equal(res.body.message, message);
}

const resource = (name: string): CompiledResource => t.engine.registry.get(name)!;

/** The raw bytes of an answer, whatever its content type. */
function binary(res: any, done: (err: Error | null, body: Buffer) => void) {
  const chunks: Buffer[] = [];
  res.on('data', (chunk: Buffer) => chunks.push(chunk));
  res.on('end', () => done(null, Buffer.concat(chunks)));
}

const get = (path: string, session?: Session) => {
  const req = t.http.get(path).buffer(true).parse(binary);
  return session ? req.set(session.auth) : req;
};

/** The tenant's rows as the export should hold them: visible columns, ordered by id. */
async function rowsInDb(name: string, tenantId: string) {
  const r = resource(name);
  return t.db(r.table).select(r.visibleColumns).where({ tenantId }).orderBy('id', 'asc');
}

/** The cell rules, written out again here so that the test does not trust the code it checks. */
function expectedCell(value: unknown): string {
  const text = value === null || value === undefined ? '' : value instanceof Date ? value.toISOString() : typeof value === 'object' ? JSON.stringify(value) : String(value);
  return /^[=+\-@\t\r']/.test(text) ? `'${text}` : text;
}

const csvOf = (res: Response) => parse(res.body.toString('utf8')) as string[][];

async function assertCsvMatchesDb(name: string, tenant: Tenant, res: Response) {
  assert.is(res.status, 200, res.body.toString());
  const r = resource(name);
  const rows = await rowsInDb(name, tenant.tenantId);
  const [header, ...records] = csvOf(res);
  assert.equal(header, r.visibleColumns);
  assert.equal(records, rows.map((row) => r.visibleColumns.map((c) => expectedCell(row[c]))));
  return records;
}

test('CSV of several resources: header = visible columns, every row and value as stored, ordered by id', async () => {
  for (const name of ['tag', 'employee', 'time-log', 'organization-project', 'organization', 'role', 'user']) {
    const res = await get(`/api/export/${name}`, acme);
    const records = await assertCsvMatchesDb(name, acme, res);
    assert.ok(records.length > 0, `${name} has rows to compare`);
    assert.is(res.headers['content-type'], 'text/csv; charset=utf-8');
    assert.is(res.headers['content-disposition'], `attachment; filename="${name}-${new Date().toISOString().slice(0, 10)}.csv"`);
    assert.is(res.headers['cache-control'], 'no-store');
  }
  // The values typed as the database holds them: a timestamp, a number, a boolean, an empty cell.
  const [header, ...logs] = csvOf(await get('/api/export/time-log', acme));
  const log = Object.fromEntries(header.map((c, i) => [c, logs.find((l) => l[header.indexOf('stoppedAt')] !== '')![i]]));
  assert.is(log.startedAt, '2026-01-05T08:00:00.000Z');
  assert.is(log.duration, '5400');
  assert.is(log.isBillable, 'true');
  assert.is(log.description, "'-minus first");
  assert.is(log.timesheetId, '');
  const running = logs.find((l) => l[header.indexOf('stoppedAt')] === '')!;
  assert.is(running[header.indexOf('duration')], '', 'a running time log has an empty duration');
  const [pHeader, project] = csvOf(await get('/api/export/organization-project', acme));
  assert.is(project[pHeader.indexOf('budget')], '1234.5');
  assert.is(project[pHeader.indexOf('startDate')], '2026-01-05T00:00:00.000Z');
  assert.is(project[pHeader.indexOf('name')], `'=HYPERLINK("x")`);
});

test('CSV: = + - @ and tab neutralised with an apostrophe, other values untouched; quotes, commas and line breaks quoted (RFC 4180, CRLF, no BOM)', async () => {
  const res = await get('/api/export/tags', acme);
  const text: string = res.body.toString('utf8');
  assert.ok(text.startsWith('id,tenantId,'), 'no byte order mark: the header comes first');
  assert.ok(text.endsWith('\r\n'));
  assert.is(text.split('\r\n').length - 1, TRICKY_TAGS.length + 1, 'one CRLF per record (the line break inside a cell is quoted, not a record end)');
  assert.ok(text.includes('"comma, ""quote""\nand a line break"'), 'a cell with a comma, quotes and a line break is quoted, its quotes doubled');
  const [header, ...records] = csvOf(res);
  const cell = (record: string[], column: string) => record[header.indexOf(column)];
  const names = records.map((r) => cell(r, 'name')).sort();
  assert.equal(names, ["'+SUM(A1:A2)", "'-5", "'=1+1", "'@cmd", 'Plain tag', 'Ünïcødé ✓'].sort());
  const byName = (name: string) => records.find((r) => cell(r, 'name') === name)!;
  assert.is(cell(byName("'-5"), 'color'), "'@blue");
  assert.is(cell(byName("'@cmd"), 'color'), 'plain');
  // A leading apostrophe is doubled, so that an import, which removes one, gets the value back.
  assert.is(cell(byName("'@cmd"), 'description'), "''=already quoted");
  assert.is(cell(byName('Ünïcødé ✓'), 'color'), "'\tTab first");
  assert.is(cell(byName('Plain tag'), 'description'), 'comma, "quote"\nand a line break');
  assert.is(cell(byName('Plain tag'), 'textColor'), '', 'null is an empty cell');
  assert.is(cell(byName('Plain tag'), 'isSystem'), 'false');
});

test('JSON: one array of the records exactly as the API answers them (dates ISO, nothing neutralised), ordered by id', async () => {
  for (const name of ['tag', 'employee', 'time-log', 'organization-project', 'user']) {
    const res = await t.http.get(`/api/export/${name}?format=json`).set(acme.auth);
    assert.is(res.status, 200);
    assert.is(res.headers['content-type'], 'application/json; charset=utf-8');
    assert.is(res.headers['content-disposition'], `attachment; filename="${name}-${new Date().toISOString().slice(0, 10)}.json"`);
    assert.is(res.headers['cache-control'], 'no-store');
    assert.equal(res.body, JSON.parse(JSON.stringify(await rowsInDb(name, acme.tenantId))));
    const r = resource(name);
    if (r.routes || name === 'event-type') {
      for (const record of res.body) assert.equal((await t.http.get(`/api/${r.paths[0]}/${record.id}`).set(acme.auth)).body, record);
    }
  }
  const tags = (await t.http.get('/api/export/tag?format=json').set(acme.auth)).body as Array<{ name: string }>;
  assert.equal(tags.map((tag) => tag.name).sort(), TRICKY_TAGS.map((tag) => tag.name).sort());
  const csv = await get('/api/export/tag?format=csv', acme);
  assert.is(csv.headers['content-type'], 'text/csv; charset=utf-8', 'format=csv is the default spelled out');
});

test('a resource without rows: the header alone in CSV, [] in JSON', async () => {
  const csv = await get('/api/export/candidate', acme);
  assert.is(csv.status, 200);
  assert.is(csv.body.toString(), `${resource('candidate').visibleColumns.join(',')}\r\n`);
  const json = await t.http.get('/api/export/candidate?format=json').set(acme.auth);
  assert.is(json.status, 200);
  assert.equal(json.body, []);
});

test('hidden fields never leave: the user export has no hash, and no column of any export is a hidden field', async () => {
  const res = await get('/api/export/user', acme);
  const [header] = csvOf(res);
  assert.not.ok(header.includes('hash'));
  const hashes = await t.db('user').where({ tenantId: acme.tenantId }).pluck('hash');
  assert.ok(hashes.length > 0 && hashes.every(Boolean));
  for (const hash of hashes) assert.not.ok(res.body.toString().includes(hash), 'a password hash is in the export');
  const json = await t.http.get('/api/export/user?format=json').set(acme.auth);
  for (const record of json.body) assert.not.ok('hash' in record);
  const zip = new AdmZip((await get('/api/export', acme)).body);
  for (const entry of zip.getEntries()) {
    const r = resource(entry.entryName.replace(/\.csv$/, ''));
    const [columns] = parse(entry.getData().toString('utf8')) as string[][];
    assert.equal(columns, r.visibleColumns, `${r.name}: the header is its visible columns`);
    for (const hidden of r.hiddenFields) assert.not.ok(columns.includes(hidden), `${r.name} exports hidden ${hidden}`);
  }
});

test("another tenant's rows never appear, in a single export or in any entry of the zip", async () => {
  const mine = csvOf(await get('/api/export/tag', acme));
  assert.not.ok(mine.some((r) => r.includes('Other tenant tag')));
  const theirs = await t.http.get('/api/export/tag?format=json').set(other.auth);
  assert.equal(theirs.body.map((tag: { name: string }) => tag.name), ['Other tenant tag']);
  const zip = new AdmZip((await get('/api/export', acme)).body);
  let rows = 0;
  for (const entry of zip.getEntries()) {
    const [header, ...records] = parse(entry.getData().toString('utf8')) as string[][];
    const tenant = header.indexOf('tenantId');
    assert.ok(tenant >= 0, entry.entryName);
    for (const record of records) assert.is(record[tenant], acme.tenantId, `${entry.entryName} holds a row of another tenant`);
    rows += records.length;
  }
  assert.ok(rows > 0);
});

test('zip: export-<day>.zip with exactly one CSV per resource the caller may read, each the same bytes as its single export', async () => {
  const res = await get('/api/export', acme);
  assert.is(res.status, 200);
  assert.is(res.headers['content-type'], 'application/zip');
  assert.is(res.headers['content-disposition'], `attachment; filename="export-${new Date().toISOString().slice(0, 10)}.zip"`);
  assert.is(res.headers['cache-control'], 'no-store');
  const zip = new AdmZip(res.body);
  const names = zip.getEntries().map((e) => e.entryName);
  assert.equal([...names].sort(), [...t.engine.registry.keys()].map((n) => `${n}.csv`).sort(), 'every resource, the event-type module and user included');
  for (const name of ['tag', 'user', 'event-type', 'time-log', 'role']) {
    const single = await get(`/api/export/${name}`, acme);
    assert.is(zip.getEntry(`${name}.csv`)!.getData().toString('utf8'), single.body.toString('utf8'), name);
  }
  // A trailing slash is the same route.
  const slash = await get('/api/export/', acme);
  assert.is(slash.status, 200);
  assert.equal(new AdmZip(slash.body).getEntries().map((e) => e.entryName), names);
});

test("zip: resources whose read permission the caller lacks are left out (MANAGER: no user, no rows it cannot see)", async () => {
  const res = await get('/api/export', manager);
  assert.is(res.status, 200);
  const names = new AdmZip(res.body).getEntries().map((e) => e.entryName.replace(/\.csv$/, ''));
  const permissions = t.engine.roles.grants.get('MANAGER')!;
  const readable = [...t.engine.registry.values()].filter((r) => r.permissions.read === 'authenticated' || permissions.has(r.permissions.read)).map((r) => r.name);
  assert.equal([...names].sort(), [...readable].sort());
  assert.not.ok(names.includes('user'));
  assert.ok(names.includes('tag') && names.includes('time-log'));
  const forbidden = await t.http.get('/api/export/user').set(manager.auth);
  assertErrorEnvelope(forbidden, 403, 'Forbidden resource');
});

test('refusals: no token 401, a role without EXPORT_ADD 403 (both routes), an unknown resource 404', async () => {
  for (const path of ['/api/export', '/api/export/tag', '/api/export/nope']) {
    assertErrorEnvelope(await t.http.get(path), 401, 'Unauthorized');
    assertErrorEnvelope(await t.http.get(path).set(dataEntry.auth), 403, 'Forbidden resource');
    assertErrorEnvelope(await t.http.get(path).set(employee.auth), 403, 'Forbidden resource');
  }
  for (const path of ['/api/export/nope', '/api/export/tenant', '/api/export/Tag']) {
    assertErrorEnvelope(await t.http.get(path).set(acme.auth), 404, `There is no resource named "${path.split('/').pop()}"`);
  }
  // An alias with a slash is not one path segment: no such route.
  assertErrorEnvelope(await t.http.get('/api/export/timesheet/time-log').set(acme.auth), 404, 'Cannot GET /api/export/timesheet/time-log');
  // Nor does it become one when its slash is encoded.
  assertErrorEnvelope(await t.http.get('/api/export/timesheet%2Ftime-log').set(acme.auth), 404, 'There is no resource named "timesheet/time-log"');
  // Every alias of one segment names its resource.
  for (const [alias, name] of [['tags', 'tag'], ['image-assets', 'image-asset'], ['organization-projects', 'organization-project']]) {
    const res = await get(`/api/export/${alias}`, acme);
    assert.is(res.status, 200);
    assert.is(res.headers['content-disposition'], `attachment; filename="${name}-${new Date().toISOString().slice(0, 10)}.csv"`);
  }
});

test('bad parameters: format other than csv or json, a repeated format, any other parameter: 400 naming them', async () => {
  const formats = ['xml', 'CSV', '', 'csv,json'];
  for (const format of formats) {
    assertErrorEnvelope(await t.http.get(`/api/export/tag?format=${encodeURIComponent(format)}`).set(acme.auth), 400, ['format must be one of the following values: csv, json']);
  }
  assertErrorEnvelope(await t.http.get('/api/export/tag?format=csv&format=json').set(acme.auth), 400, ['format must be one of the following values: csv, json']);
  assertErrorEnvelope(await t.http.get('/api/export/tag?take=5').set(acme.auth), 400, ['take is not a supported parameter of /api/export/tag; supported: format']);
  assertErrorEnvelope(await t.http.get('/api/export/tag?where[name]=x&format=pdf').set(acme.auth), 400, [
    'where is not a supported parameter of /api/export/tag; supported: format',
    'format must be one of the following values: csv, json',
  ]);
  assertErrorEnvelope(await t.http.get('/api/export?format=csv').set(acme.auth), 400, [
    'format is not a supported parameter of /api/export; it takes none (every CSV of the zip is one resource\'s export)',
  ]);
  assertErrorEnvelope(await t.http.get('/api/export/tag?__proto__[x]=1').set(acme.auth), 400, ['query parameter names must not contain __proto__']);
});

test(`${BULK_ROWS} rows over several keyset batches: complete, in id order, no duplicates, in CSV, JSON and the zip`, async () => {
  const ids = (await rowsInDb('tag', bulk.tenantId)).map((row) => row.id);
  assert.is(ids.length, BULK_ROWS);
  const records = await assertCsvMatchesDb('tag', bulk, await get('/api/export/tag', bulk));
  const csvIds = records.map((r) => r[0]);
  assert.equal(csvIds, ids);
  assert.is(new Set(csvIds).size, BULK_ROWS);
  for (let i = 1; i < csvIds.length; i++) assert.ok(csvIds[i - 1] < csvIds[i], `ids out of order at ${i}`);
  const json = await t.http.get('/api/export/tag?format=json').set(bulk.auth);
  assert.equal(json.body.map((row: { id: string }) => row.id), ids);
  const names = json.body.map((row: { name: string }) => row.name);
  assert.equal([...names].sort(), Array.from({ length: BULK_ROWS }, (_, i) => `bulk-${i + 1}`).sort());
  const zip = new AdmZip((await get('/api/export', bulk)).body);
  const [, ...zipped] = parse(zip.getEntry('tag.csv')!.getData().toString('utf8')) as string[][];
  assert.equal(zipped.map((r) => r[0]), ids);
});

test('an export writes nothing: the tables hold the same rows afterwards', async () => {
  const before = await rowsInDb('tag', acme.tenantId);
  await get('/api/export', acme);
  await get('/api/export/tag?format=json', acme);
  assert.equal(await rowsInDb('tag', acme.tenantId), before);
});

test.run();
