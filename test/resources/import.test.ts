// POST /api/import/{resource}: CSV and JSON, multipart and raw bodies, every row validated by the
// resource's create rules, all rows written in one transaction or none. Every answer is checked
// against the database.
import { randomUUID } from 'node:crypto';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { login, newTenant, PASSWORD, uniqueEmail, userWithRole, type Session } from '../helpers/accounts.js';
import { createTestApp, type TestApp } from '../helpers/app.js';

type Tenant = Session & { organizationId: string };

let t: TestApp;
let a: Tenant;
let b: Tenant;
test.before(async () => {
  t = await createTestApp();
  a = await newTenant(t, 'Importers');
  b = await newTenant(t, 'Others');
});
test.after(async () => {
  await t.close();
});

const iso = (value: unknown) => (value == null ? value : new Date(value as string).toISOString());

async function count(table: string, tenantId: string): Promise<number> {
  const [{ n }] = await t.db(table).where({ tenantId }).count({ n: '*' });
  return Number(n);
}

/** Raw body import. */
function raw(session: Session, resource: string, type: string, body: string, query = '') {
  return t.http.post(`/api/import/${resource}${query}`).set(session.auth).set('Content-Type', type).send(body);
}

const csv = (session: Session, resource: string, body: string, query = '') => raw(session, resource, 'text/csv', body, query);
const json = (session: Session, resource: string, body: unknown, query = '') => raw(session, resource, 'application/json', JSON.stringify(body), query);

function upload(session: Session, resource: string, content: string | Buffer, filename: string, contentType: string, query = '') {
  return t.http.post(`/api/import/${resource}${query}`).set(session.auth).attach('file', Buffer.isBuffer(content) ? content : Buffer.from(content), { filename, contentType });
}

function assertImported(res: { status: number; body: any }, n: number) {
  assert.is(res.status, 201, JSON.stringify(res.body));
  assert.equal(res.body, { imported: n, errors: [] });
}

function assertError(res: { status: number; body: any }, status: number, message: string) {
  assert.is(res.status, status, JSON.stringify(res.body));
  assert.is(res.body.statusCode, status);
  assert.type(res.body.error, 'string');
  const messages = [res.body.message].flat() as string[];
  assert.ok(messages.some((m) => m.includes(message)), `${JSON.stringify(res.body.message)} lacks "${message}"`);
}

/** A 400 listing failed rows: its sentence, nothing imported, and exactly these errors. */
function assertRowErrors(res: { status: number; body: any }, failed: number, total: number, errors: Array<{ row: number; message: string }>) {
  assert.is(res.status, 400, JSON.stringify(res.body));
  assert.equal(res.body.message, [`${failed} of ${total} ${total === 1 ? 'row' : 'rows'} failed; nothing was imported`]);
  assert.is(res.body.statusCode, 400);
  assert.is(res.body.error, 'Bad Request');
  assert.is(res.body.imported, 0);
  assert.is(res.body.failedRows, failed);
  assert.equal(res.body.errors, errors);
}

async function createRecord(session: Session, path: string, body: Record<string, unknown>, headers: Record<string, string> = {}) {
  const res = await t.http.post(`/api/${path}`).set(session.auth).set(headers).send(body);
  assert.is(res.status, 201, JSON.stringify(res.body));
  return res.body as Record<string, any>;
}

async function newUserId(tenant: Tenant): Promise<string> {
  const res = await t.http.post('/api/auth/register').set(tenant.auth).send({ user: { email: uniqueEmail('imp'), firstName: 'Ima', lastName: 'Porter' }, password: PASSWORD });
  assert.is(res.status, 201, JSON.stringify(res.body));
  return res.body.id;
}

const newEmployee = async (tenant: Tenant, firstName = 'Emma') => (await createRecord(tenant, 'employee', { firstName, lastName: 'Ployee', userId: await newUserId(tenant) })).id as string;
const newTag = async (tenant: Tenant, name: string) => (await createRecord(tenant, 'tags', { name, color: '#00ff00' })).id as string;

// ---------------------------------------------------------------------------------------------
// What lands

test('CSV (raw text/csv): rows land exactly; neutralised cells restored; quoted commas, quotes and newlines; empty cells take defaults', async () => {
  const before = await count('tag', a.tenantId);
  const file = [
    'name,color,textColor,description,isSystem',
    `'=SUM(A1:A2),'+red,'-x,'@home,true`,
    `"Comma, inside","#0000ff",,"line one\nline two ""quoted""",false`,
    `Plain,#fff,,,`,
    `'apostrophe kept,'#notneutralised,''doubled,it's,`,
  ].join('\r\n');
  assertImported(await csv(a, 'tags', file), 4);
  assert.is(await count('tag', a.tenantId), before + 4);
  const rows = await t.db('tag').where({ tenantId: a.tenantId }).whereIn('name', ['=SUM(A1:A2)', 'Comma, inside', 'Plain', "'apostrophe kept"]).orderBy('name');
  const byName = Object.fromEntries(rows.map((r) => [r.name, r]));
  assert.equal(
    { color: byName['=SUM(A1:A2)'].color, textColor: byName['=SUM(A1:A2)'].textColor, description: byName['=SUM(A1:A2)'].description, isSystem: byName['=SUM(A1:A2)'].isSystem },
    { color: '+red', textColor: '-x', description: '@home', isSystem: true },
  );
  assert.equal(
    { color: byName['Comma, inside'].color, textColor: byName['Comma, inside'].textColor, description: byName['Comma, inside'].description, isSystem: byName['Comma, inside'].isSystem },
    { color: '#0000ff', textColor: null, description: 'line one\nline two "quoted"', isSystem: false },
  );
  assert.is(byName.Plain.isSystem, false, 'an empty cell is an absent field: its default applies');
  assert.is(byName.Plain.description, null);
  // The export's apostrophe stands before a formula character or another apostrophe; any other is the value's own.
  assert.is(byName["'apostrophe kept"].color, "'#notneutralised");
  assert.is(byName["'apostrophe kept"].textColor, "'doubled");
  assert.is(byName["'apostrophe kept"].description, "it's");
  for (const row of rows) assert.is(row.organizationId, a.organizationId);
});

test('CSV: id, tenantId, organizationId, createdAt, updatedAt and read-only columns are ignored; another tenant in the file does not move the row', async () => {
  const fileId = randomUUID();
  const file = [
    'id,tenantId,organizationId,createdAt,updatedAt,name,color',
    `${fileId},${b.tenantId},${b.organizationId},2001-02-03T04:05:06.000Z,2001-02-03T04:05:06.000Z,Moved?,#123456`,
  ].join('\n');
  const started = Date.now();
  assertImported(await csv(a, 'tag', file), 1);
  const row = await t.db('tag').where({ name: 'Moved?' }).first();
  assert.ok(row);
  assert.is.not(row.id, fileId);
  assert.is(row.tenantId, a.tenantId);
  assert.is(row.organizationId, a.organizationId);
  assert.ok(new Date(row.createdAt).getTime() >= started - 60_000, 'createdAt is the import time, not the file value');
  assert.is(await t.db('tag').where({ tenantId: b.tenantId, name: 'Moved?' }).first(), undefined);
  // Read-only and computed fields too: a time log's duration is the database's to compute.
  const employeeId = await newEmployee(a);
  const logs = ['employeeId,startedAt,stoppedAt,duration', `${employeeId},2026-01-05T08:00:00Z,2026-01-05T09:00:00Z,99999`].join('\n');
  assertImported(await csv(a, 'time-log', logs), 1);
  const log = await t.db('time_log').where({ employeeId }).first();
  assert.is(log.duration, 3600);
});

test('JSON (raw application/json) time logs: references, enums, booleans, timestamps, the rule stoppedAt >= startedAt; ignored keys dropped', async () => {
  const employeeId = await newEmployee(a, 'Tim');
  const project = await createRecord(a, 'organization-project', { name: 'Timed' });
  const body = [
    { employeeId, projectId: project.id, startedAt: '2026-03-01T22:00:00Z', stoppedAt: '2026-03-02T01:30:00Z', logType: 'MANUAL', source: 'DESKTOP', isBillable: true, description: 'Across midnight', reason: 'Forgot the timer' },
    { employeeId, startedAt: '2026-03-03T09:00:00+02:00', stoppedAt: '2026-03-03T09:00:00+02:00', id: randomUUID(), tenantId: b.tenantId, organizationId: b.organizationId, createdAt: '2001-01-01T00:00:00Z', duration: 5 },
    { employeeId, startedAt: '2026-03-04' },
  ];
  assertImported(await json(a, 'time-log', body), 3);
  const rows = await t.db('time_log').where({ employeeId }).orderBy('startedAt');
  assert.is(rows.length, 3);
  assert.equal(
    rows.map((r) => ({ p: r.projectId, s: iso(r.startedAt), e: iso(r.stoppedAt), d: r.duration, t: r.logType, src: r.source, b: r.isBillable, desc: r.description, reason: r.reason, org: r.organizationId, ten: r.tenantId })),
    [
      { p: project.id, s: '2026-03-01T22:00:00.000Z', e: '2026-03-02T01:30:00.000Z', d: 12600, t: 'MANUAL', src: 'DESKTOP', b: true, desc: 'Across midnight', reason: 'Forgot the timer', org: a.organizationId, ten: a.tenantId },
      { p: null, s: '2026-03-03T07:00:00.000Z', e: '2026-03-03T07:00:00.000Z', d: 0, t: 'TRACKED', src: 'WEB_TIMER', b: false, desc: null, reason: null, org: a.organizationId, ten: a.tenantId },
      { p: null, s: '2026-03-04T00:00:00.000Z', e: null, d: null, t: 'TRACKED', src: 'WEB_TIMER', b: false, desc: null, reason: null, org: a.organizationId, ten: a.tenantId },
    ],
  );
});

test('CSV projects: numbers, dates, enums, booleans, and many-to-many ids columns (tagIds, memberIds) as JSON text', async () => {
  const [tag1, tag2] = [await newTag(a, 'p-one'), await newTag(a, 'p-two')];
  const member = await newEmployee(a, 'Member');
  const file = [
    'name,startDate,endDate,billing,public,billable,budget,budgetType,currency,tagIds,memberIds',
    `Apollo,2026-01-05,2026-06-30,RATE,true,false,1234.5,hours,EUR,"[""${tag1}"",""${tag2}""]","[""${member}""]"`,
    `Gemini,,,,,,'-0,,,[],`,
    `Mercury,2026-02-01T10:00:00+01:00,,FLAT_FEE,false,true,0.25,cost,USD,"[""${tag2.toUpperCase()}""]",`,
  ].join('\n');
  assertImported(await csv(a, 'organization-projects', file), 3);
  const rows = await t.db('organization_project').where({ tenantId: a.tenantId }).whereIn('name', ['Apollo', 'Gemini', 'Mercury']).orderBy('name');
  assert.equal(
    rows.map((r) => ({ n: r.name, s: iso(r.startDate), e: iso(r.endDate), bi: r.billing, pu: r.public, bl: r.billable, bu: r.budget, bt: r.budgetType, c: r.currency })),
    [
      { n: 'Apollo', s: '2026-01-05T00:00:00.000Z', e: '2026-06-30T00:00:00.000Z', bi: 'RATE', pu: true, bl: false, bu: 1234.5, bt: 'hours', c: 'EUR' },
      { n: 'Gemini', s: null, e: null, bi: null, pu: null, bl: null, bu: 0, bt: null, c: null },
      { n: 'Mercury', s: '2026-02-01T09:00:00.000Z', e: null, bi: 'FLAT_FEE', pu: false, bl: true, bu: 0.25, bt: 'cost', c: 'USD' },
    ],
  );
  const tagsOf = async (id: string) => (await t.db('tag_organization_project').where({ organizationProjectId: id }).pluck('tagId')).sort();
  const membersOf = async (id: string) => await t.db('organization_project_employee').where({ organizationProjectId: id }).pluck('employeeId');
  assert.equal(await tagsOf(rows[0].id), [tag1, tag2].sort());
  assert.equal(await membersOf(rows[0].id), [member]);
  assert.equal(await tagsOf(rows[1].id), []);
  assert.equal(await tagsOf(rows[2].id), [tag2]);
});

test('JSON invoices with their items (a writable hasMany) and tags: children land with their parent', async () => {
  const tag = await newTag(a, 'billing');
  const body = [
    { invoiceNumber: 9001, invoiceDate: '2026-04-01', dueDate: '2026-04-30', fromOrganizationId: a.organizationId, currency: 'EUR', tagIds: [tag], invoiceItems: [{ description: 'Work', quantity: 2, price: 50 }, { quantity: 1.5, price: 10 }] },
    { invoiceNumber: 9002, invoiceDate: '2026-04-02', dueDate: '2026-04-02', fromOrganizationId: a.organizationId, isEstimate: true },
  ];
  assertImported(await json(a, 'invoice', body), 2);
  const invoices = await t.db('invoice').where({ tenantId: a.tenantId }).whereIn('invoiceNumber', [9001, 9002]).orderBy('invoiceNumber');
  assert.equal(invoices.map((i) => [i.invoiceNumber, i.status, i.isEstimate, i.discountValue]), [[9001, 'DRAFT', false, 0], [9002, 'DRAFT', true, 0]]);
  const items = await t.db('invoice_item').where({ invoiceId: invoices[0].id }).orderBy('price', 'desc');
  assert.equal(items.map((i) => [i.description, i.quantity, i.price, i.organizationId, i.tenantId]), [['Work', 2, 50, a.organizationId, a.tenantId], [null, 1.5, 10, a.organizationId, a.tenantId]]);
  assert.equal(await t.db('invoice_item').where({ invoiceId: invoices[1].id }).pluck('id'), []);
  assert.equal(await t.db('tag_invoice').where({ invoiceId: invoices[0].id }).pluck('tagId'), [tag]);
});

test('event types (a hand-written module): a row without employeeId is the caller\'s own, as its create does; tags by id', async () => {
  const employee = await createRecord(a, 'employee', { firstName: 'Olive', lastName: 'Owner', userId: a.userId });
  const admin = await login(t, a.email);
  const tag = await newTag(a, 'events');
  const other = await newEmployee(a, 'Other');
  const body = [
    { title: 'Intro', durationUnit: 'Minute(s)', duration: 30, tags: [{ id: tag }] },
    { title: 'Workshop', durationUnit: 'Hour(s)', duration: 2.5, isActive: false, employeeId: other },
    { title: 'Nobody', durationUnit: 'Day(s)', duration: 1, employeeId: null },
  ];
  assertImported(await json(admin, 'event-type', body), 3);
  const rows = await t.db('event_type').where({ tenantId: a.tenantId }).orderBy('title');
  assert.equal(
    rows.map((r) => [r.title, r.durationUnit, r.duration, r.isActive, r.employeeId]),
    [['Intro', 'Minute(s)', 30, true, employee.id], ['Nobody', 'Day(s)', 1, true, null], ['Workshop', 'Hour(s)', 2.5, false, other]],
  );
  assert.equal(await t.db('tag_event_type').where({ eventTypeId: rows[0].id }).pluck('tagId'), [tag]);
});

test('multipart: the file field as CSV or JSON, told by its name, its type or ?format; aliases and a trailing slash', async () => {
  const before = await count('skill', a.tenantId);
  assertImported(await upload(a, 'skill', 'name,color\nM1,#111\nM2,#222\n', 'skills.csv', 'application/vnd.ms-excel'), 2);
  assertImported(await upload(a, 'skill/', JSON.stringify([{ name: 'M3' }]), 'skills.json', 'application/octet-stream'), 1);
  assertImported(await upload(a, 'skill', 'name\nM4\n', 'export', 'text/csv'), 1);
  assertImported(await upload(a, 'skill', '[{"name":"M5"}]', 'data.txt', 'text/plain', '?format=json'), 1);
  const names = (await t.db('skill').where({ tenantId: a.tenantId }).whereLike('name', 'M_').pluck('name')).sort();
  assert.equal(names, ['M1', 'M2', 'M3', 'M4', 'M5']);
  assert.is(await count('skill', a.tenantId), before + 5);
  // A file whose format nothing tells: 415 naming the formats.
  assertError(await upload(a, 'skill', 'name\nM6\n', 'data.txt', 'text/plain'), 415, '.csv or .json');
});

test('Organization-Id header: rows land in that organization of the tenant; without it, in a tenant of two organizations, in none where the resource allows it', async () => {
  // A tenant of its own: a second organization takes away the default the other tests rely on.
  const c = await newTenant(t, 'Two orgs');
  const second = await createRecord(c, 'organization', { name: 'Second', currency: 'USD' });
  const res = await csv(c, 'tags', 'name,color\nIn second,#abc\n').set('Organization-Id', second.id);
  assertImported(res, 1);
  assert.is((await t.db('tag').where({ name: 'In second' }).first()).organizationId, second.id);
  assertError(await csv(c, 'tags', 'name,color\nX,#abc\n').set('Organization-Id', 'nope'), 400, 'Organization-Id header must be a UUID');
  const other = await csv(c, 'tags', 'name,color\nIn other,#abc\n').set('Organization-Id', b.organizationId);
  assertRowErrors(other, 1, 1, [{ row: 1, message: 'organizationId must reference an existing organization' }]);
  // Tags may belong to the whole tenant: every row lands there. Teams may not: every row says so.
  assertImported(await csv(c, 'tags', 'name,color\nNowhere,#abc\nNowhere either,#abd\n'), 2);
  assert.equal((await t.db('tag').where({ tenantId: c.tenantId }).whereLike('name', 'Nowhere%').pluck('organizationId')), [null, null]);
  const several = 'organizationId should not be empty: this tenant has more than one organization, so name one with organizationId or in the Organization-Id header';
  assertRowErrors(await csv(c, 'organization-team', 'name\nA\nB\n'), 2, 2, [{ row: 1, message: several }, { row: 2, message: several }]);
  // Names are unique among the tenant's tags of no organization: within the file, and against those stored.
  const clash = 'A tag with this name already exists in this organization, or in the tenant for a tag of no organization';
  assertRowErrors(await csv(c, 'tags', 'name,color\nTwice,#abc\nTwice,#abd\n'), 1, 2, [{ row: 2, message: `${clash} (as row 1 of the file)` }]);
  assertRowErrors(await csv(c, 'tags', 'name,color\nFresh,#abc\nNowhere,#abd\n'), 1, 2, [{ row: 2, message: clash }]);
  assert.is(await count('tag', c.tenantId), 3);
  assert.is(await count('organization_team', c.tenantId), 0);
});

test('a header-only CSV and an empty JSON array import nothing: 201 with imported 0', async () => {
  const before = await count('tag', a.tenantId);
  assertImported(await csv(a, 'tags', 'name,color\n'), 0);
  assertImported(await json(a, 'tags', []), 0);
  assert.is(await count('tag', a.tenantId), before);
});

// ---------------------------------------------------------------------------------------------
// Rows that fail: nothing is written

test('one bad row among good ones: 400 naming its row, and nothing written', async () => {
  const before = await count('tag', a.tenantId);
  const file = ['name,color', 'Good one,#111', 'Good two,#222', ',#333', 'Good four,#444'].join('\n');
  assertRowErrors(await csv(a, 'tags', file), 1, 4, [{ row: 3, message: 'name should not be empty' }]);
  assert.is(await count('tag', a.tenantId), before);
  const jsonRes = await json(a, 'tags', [{ name: 'J1', color: '#1' }, { name: 'J2' }]);
  assertRowErrors(jsonRes, 1, 2, [{ row: 2, message: 'color should not be empty' }]);
  assert.is(await count('tag', a.tenantId), before);
});

test('several errors in several rows: one entry per broken rule, rows counted from 1 without the header', async () => {
  const before = await count('employee', a.tenantId);
  const userId = await newUserId(a);
  const file = [
    'firstName,lastName,userId,billRateValue,payPeriod,isActive,startedWorkOn,billRateCurrency',
    `Ok,Row,${userId},10,WEEKLY,true,2026-01-05,EUR`,
    `,Row,${userId},12abc,DAILY,yes,2026-02-31,EU`,
    `Bad,Ref,${randomUUID()},5,,,,`,
    `Float,Rate,${userId},1.5,,,,`,
    `Neg,Rate,${userId},'-1,NONE,false,,`,
  ].join('\n');
  const res = await csv(a, 'employee', file);
  // Field rules first, as in a create: a row's references are looked up once its fields pass.
  assertRowErrors(res, 4, 5, [
    { row: 2, message: 'firstName should not be empty' },
    { row: 2, message: 'startedWorkOn must be a valid ISO 8601 date string' },
    { row: 2, message: 'billRateValue must be an integer number' },
    { row: 2, message: 'billRateCurrency must be longer than or equal to 3 characters' },
    { row: 2, message: 'payPeriod must be one of the following values: NONE, BI_WEEKLY, WEEKLY, TWICE_PER_MONTH, MONTHLY' },
    { row: 2, message: 'isActive must be a boolean value' },
    { row: 3, message: 'userId must reference an existing user' },
    { row: 4, message: 'billRateValue must be an integer number' },
    { row: 5, message: 'billRateValue must not be less than 0' },
  ]);
  assert.is(await count('employee', a.tenantId), before);
});

test('a reference to another tenant\'s record is a row error; so is an unknown many-to-many id', async () => {
  const theirs = await newEmployee(b, 'Theirs');
  const theirTag = await newTag(b, 'theirs');
  const before = await count('time_log', a.tenantId);
  const res = await json(a, 'time-log', [{ employeeId: theirs, startedAt: '2026-01-01T10:00:00Z' }]);
  assertRowErrors(res, 1, 1, [{ row: 1, message: 'employeeId must reference an existing employee' }]);
  assert.is(await count('time_log', a.tenantId), before);
  const projects = await csv(a, 'organization-project', `name,tagIds\nWith their tag,"[""${theirTag}""]"\n`);
  assertRowErrors(projects, 1, 1, [{ row: 1, message: 'tags must reference an existing tag' }]);
});

test('rules: a time log stopped before it started fails with the rule\'s sentence, every such row listed, nothing written', async () => {
  const employeeId = await newEmployee(a, 'Rule');
  const before = await count('time_log', a.tenantId);
  const file = [
    'employeeId,startedAt,stoppedAt,logType',
    `${employeeId},2026-01-05T10:00:00Z,2026-01-05T09:59:59Z,TRACKED`,
    `${employeeId},2026-01-05T10:00:00Z,2026-01-05T11:00:00Z,TRACKED`,
    `${employeeId},2026-01-06,2026-01-05,SLEEPING`,
  ].join('\n');
  assertRowErrors(await csv(a, 'time-log', file), 2, 3, [
    { row: 1, message: 'stoppedAt must not be earlier than startedAt' },
    { row: 3, message: 'logType must be one of the following values: TRACKED, MANUAL, IDLE, RESUMED' },
  ]);
  const onlyRule = await csv(a, 'time-log', [file.split('\n')[0], file.split('\n')[3].replace('SLEEPING', 'IDLE')].join('\n'));
  assertRowErrors(onlyRule, 1, 1, [{ row: 1, message: 'stoppedAt must not be earlier than startedAt' }]);
  assert.is(await count('time_log', a.tenantId), before);
});

test('children of several rows are checked before anything is written: each broken item listed with its row', async () => {
  const before = await count('invoice', a.tenantId);
  const items = await count('invoice_item', a.tenantId);
  const invoice = (n: number, extra: Record<string, unknown>) => ({ invoiceNumber: n, invoiceDate: '2026-05-01', dueDate: '2026-05-31', fromOrganizationId: a.organizationId, ...extra });
  const res = await json(a, 'invoice', [
    invoice(7001, { invoiceItems: [{ quantity: 1, price: 1 }] }),
    invoice(7002, { invoiceItems: [{ quantity: 1, price: 1 }, { quantity: 0, price: 5 }] }),
    invoice(7003, { dueDate: '2026-04-30', invoiceItems: [{ quantity: 1, price: 1 }] }),
    invoice(7004, { invoiceItems: [{ quantity: 1, price: 1, employeeId: await newEmployee(b, 'Elsewhere') }] }),
    invoice(7005, { invoiceItems: [{ quantity: 1, price: 1, tenantId: b.tenantId }] }),
  ]);
  assertRowErrors(res, 4, 5, [
    { row: 2, message: 'invoiceItems.1.quantity must be greater than 0' },
    { row: 3, message: 'dueDate must not be earlier than invoiceDate' },
    // A child's references are looked up before the transaction too (a create does it inside).
    { row: 4, message: 'invoiceItems.0.employeeId must reference an existing employee' },
    // A child naming another tenant is what a create refuses with a 403: said as such, per row.
    { row: 5, message: 'the row is forbidden: a tenantId names another tenant' },
  ]);
  assert.is(await count('invoice', a.tenantId), before);
  assert.is(await count('invoice_item', a.tenantId), items);
});

test('a unique rule broken between two rows of the file: 400 naming the later row, nothing written', async () => {
  const before = await count('tag', a.tenantId);
  const file = ['name,color', 'Twin,#1', 'Single,#2', 'Twin,#3'].join('\n');
  assertRowErrors(await csv(a, 'tags', file), 1, 3, [{ row: 3, message: 'A tag with this name already exists in this organization, or in the tenant for a tag of no organization (as row 1 of the file)' }]);
  assert.is(await count('tag', a.tenantId), before);
});

test('a unique rule broken against a stored record: found by the database, the whole transaction rolled back', async () => {
  await newTag(a, 'Stored');
  const before = await count('tag', a.tenantId);
  const file = ['name,color', 'Fresh 1,#1', 'Fresh 2,#2', 'Stored,#3', 'Fresh 4,#4'].join('\n');
  assertRowErrors(await csv(a, 'tags', file), 1, 4, [{ row: 3, message: 'A tag with this name already exists in this organization, or in the tenant for a tag of no organization' }]);
  assert.is(await count('tag', a.tenantId), before);
  assert.is(await t.db('tag').where({ tenantId: a.tenantId, name: 'Fresh 1' }).first(), undefined);
});

test('more rows than one insert statement takes: all land; a clash in a later statement names its row and rolls back the earlier ones', async () => {
  const before = await count('tag', a.tenantId);
  await newTag(a, 'Bulk 1100');
  const file = ['name,color', ...Array.from({ length: 1200 }, (_, i) => `Bulk ${i + 1},#${i}`)].join('\n');
  assertRowErrors(await csv(a, 'tags', file), 1, 1200, [{ row: 1100, message: 'A tag with this name already exists in this organization, or in the tenant for a tag of no organization' }]);
  assert.is(await count('tag', a.tenantId), before + 1);
  assertImported(await csv(a, 'tags', file.replace('Bulk 1100,', 'Bulk 1100 again,')), 1200);
  assert.is(await count('tag', a.tenantId), before + 1201);
  const names = await t.db('tag').where({ tenantId: a.tenantId }).whereLike('name', 'Bulk %').pluck('name');
  assert.is(new Set(names).size, 1201);
});

test('JSON rows: an element that is not an object, and unknown properties, are row errors', async () => {
  const before = await count('tag', a.tenantId);
  const res = await json(a, 'tags', [{ name: 'fine', color: '#1' }, 'text', [1], { name: 'x', color: '#2', salary: 1 }]);
  assertRowErrors(res, 3, 4, [
    { row: 2, message: 'the row must be an object' },
    { row: 3, message: 'the row must be an object' },
    { row: 4, message: 'property salary should not exist' },
  ]);
  assert.is(await count('tag', a.tenantId), before);
  // A __proto__ key is a key like any other: unknown, so the row fails (it never reaches a prototype).
  const proto = await raw(a, 'tags', 'application/json', '[{"name":"p","color":"#1","__proto__":{"isSystem":true}}]');
  assertRowErrors(proto, 1, 1, [{ row: 1, message: 'property __proto__ should not exist' }]);
  assert.is(await count('tag', a.tenantId), before);
});

test('a CSV relation column that is not JSON is a row error', async () => {
  const res = await csv(a, 'organization-project', 'name,tagIds\nBroken,[not json\n');
  assertRowErrors(res, 1, 1, [{ row: 1, message: 'tagIds must be JSON text, such as ["…"]' }]);
});

test('the error list is capped at 100 entries; failedRows counts every failed row', async () => {
  const file = ['name,color', ...Array.from({ length: 120 }, () => ',')].join('\n');
  const res = await csv(a, 'tags', file);
  assert.is(res.status, 400);
  assert.is(res.body.failedRows, 120);
  assert.is(res.body.errors.length, 100);
  assert.equal(res.body.message, ['120 of 120 rows failed; nothing was imported']);
  assert.equal(res.body.errors[0], { row: 1, message: 'name should not be empty' });
  assert.equal(res.body.errors[99], { row: 50, message: 'color should not be empty' });
});

// ---------------------------------------------------------------------------------------------
// Files refused as a whole

test('unknown and repeated columns: 400 for the whole file, naming them and the accepted columns', async () => {
  const before = await count('tag', a.tenantId);
  const res = await csv(a, 'tags', 'name,color,salary\nA,#1,3\n');
  assertError(res, 400, 'column salary is not a column of tag; accepted columns: id, tenantId, organizationId, createdAt, updatedAt, name, color, textColor, description, isSystem');
  assert.is(res.body.errors, undefined);
  assertError(await csv(a, 'tags', 'name,color,name\nA,#1,B\n'), 400, 'column name appears more than once');
  assertError(await csv(a, 'tags', 'name,,color\nA,,#1\n'), 400, 'column 2 of the header row has no name');
  // A hidden field is no column of the file either.
  assertError(await csv(a, 'tags', 'name,color,hash\nA,#1,x\n'), 400, 'column hash is not a column of tag');
  assert.is(await count('tag', a.tenantId), before);
});

test('malformed files: CSV that does not parse, JSON that is not JSON or not an array', async () => {
  assertError(await csv(a, 'tags', 'name,color\n"open,#1\n'), 400, 'a quoted cell is never closed');
  assertError(await csv(a, 'tags', 'name,color\nA,#1,extra\n'), 400, 'every row must have as many cells as the header row (line 2)');
  assertError(await csv(a, 'tags', 'name,color\n"A"x,#1\n'), 400, 'a quoted cell must end at a comma');
  assertError(await raw(a, 'tags', 'application/json', '[{"name":'), 400, 'the file is not valid JSON');
  assertError(await json(a, 'tags', { name: 'A', color: '#1' }), 400, 'a JSON import must be an array of records');
  assertError(await upload(a, 'tags', Buffer.from([0x41, 0xff, 0xfe, 0x41]), 'x.csv', 'text/csv'), 400, 'file must be UTF-8 text');
});

test('empty bodies and files: 400', async () => {
  assertError(await csv(a, 'tags', ''), 400, 'file should not be empty');
  assertError(await csv(a, 'tags', '\n\n  \n'), 400, 'file should not be empty');
  assertError(await raw(a, 'tags', 'application/json', ''), 400, 'file should not be empty');
  assertError(await t.http.post('/api/import/tags').set(a.auth), 400, 'file should not be empty');
  assertError(await upload(a, 'tags', '', 'empty.csv', 'text/csv'), 400, 'file should not be empty');
});

test('multipart without the file, or with another field: 400', async () => {
  const noFile = await t.http.post('/api/import/tags').set(a.auth).field('name', 'x');
  assertError(noFile, 400, 'property name should not exist');
  const boundary = 'XyZ';
  const empty = await t.http.post('/api/import/tags').set(a.auth).set('Content-Type', `multipart/form-data; boundary=${boundary}`).send(`--${boundary}--\r\n`);
  assertError(empty, 400, 'file should not be empty');
  const otherField = await t.http.post('/api/import/tags').set(a.auth).attach('upload', Buffer.from('name,color\n'), 'x.csv');
  assertError(otherField, 400, 'the file goes in the field "file"');
});

test('content types: another type is a 415; a raw body\'s type and ?format must agree; unknown parameters are a 400', async () => {
  assertError(await raw(a, 'tags', 'text/plain', 'name,color\nA,#1\n'), 415, 'Unsupported media type');
  assertError(await raw(a, 'tags', 'application/xml', '<a/>'), 415, 'Unsupported media type');
  assertError(await raw(a, 'tags', 'text/csv; charset=latin1', 'name,color\n'), 415, 'Unsupported charset latin1');
  assertError(await csv(a, 'tags', 'name,color\nA,#1\n', '?format=json'), 400, 'format=json does not match the Content-Type text/csv');
  assertError(await csv(a, 'tags', 'name,color\nA,#1\n', '?format=xml'), 400, 'format must be one of the following values: csv, json');
  assertError(await csv(a, 'tags', 'name,color\nA,#1\n', '?dryRun=true'), 400, 'dryRun is not a supported parameter of an import; supported: format');
  assertImported(await csv(a, 'tags', 'name,color\nCharset ok,#1\n', '?format=csv').set('Content-Type', 'text/csv; charset=utf-8'), 1);
});

// ---------------------------------------------------------------------------------------------
// Who may import what

test('no token 401; a role without IMPORT_ADD 403 (MANAGER, EMPLOYEE); unknown resource 404; a resource the API does not create 404', async () => {
  const res = await t.http.post('/api/import/tags').set('Content-Type', 'text/csv').send('name,color\nA,#1\n');
  assertError(res, 401, 'Unauthorized');
  const manager = await userWithRole(t, a, 'MANAGER');
  assertError(await csv(manager, 'tags', 'name,color\nA,#1\n'), 403, 'Forbidden resource');
  const employee = await userWithRole(t, a, 'EMPLOYEE', true);
  assertError(await json(employee, 'time-log', [{ startedAt: '2026-01-01T00:00:00Z' }]), 403, 'Forbidden resource');
  assertError(await csv(a, 'nothing-here', 'name\nA\n'), 404, 'There is no resource named "nothing-here"');
  // An alias with a slash is not one path segment, even encoded: nothing is written through it.
  assertError(await csv(a, 'timesheet%2Ftime-log', 'startedAt\n2026-01-05T09:00:00Z\n'), 404, 'There is no resource named "timesheet/time-log"');
  assertError(await json(a, 'user', [{ email: uniqueEmail() }]), 404, 'user records cannot be imported');
  assertError(await json(a, 'role', [{}]), 404, 'role records cannot be imported');
  assert.is(await t.db('tag').where({ tenantId: a.tenantId, name: 'A' }).first(), undefined);
});

test.run();
