// Export a resource of one tenant (GET /api/export/{resource}, CSV and JSON, through HTTP) and
// import the file into another tenant (POST /api/import/{resource}): the second tenant's records
// equal the first's in every field but id, tenantId, organizationId, createdAt and updatedAt.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { newTenant, type Session } from '../helpers/accounts.js';
import { createTestApp, type TestApp } from '../helpers/app.js';

type Tenant = Session & { organizationId: string };

let t: TestApp;
let source: Tenant;
test.before(async () => {
  t = await createTestApp();
  source = await newTenant(t, 'Source');
  await seed(source);
});
test.after(async () => {
  await t.close();
});

const PLACEMENT = ['id', 'tenantId', 'organizationId', 'createdAt', 'updatedAt'];

/** Each resource's table and the field its records are told apart by. */
const RESOURCES = [
  { path: 'tags', table: 'tag', key: 'name' },
  { path: 'organization-project', table: 'organization_project', key: 'name' },
  { path: 'event-type', table: 'event_type', key: 'title' },
];

/** Records whose cells put the CSV rules to work: formula characters, quotes, line breaks, numbers written with exponents. */
async function seed(tenant: Tenant) {
  const tags = [
    { name: '=HYPERLINK("http://x","click")', color: '+1', textColor: '-1', description: '@SUM(A1)', isSystem: true },
    { name: 'Comma, "quoted"\r\nand two lines', color: '#ff0000' },
    { name: 'Zürich ✓', color: '\tTabbed', description: "it's 'quoted'" },
    // A value's own leading apostrophe survives, before a formula character too ('=x, ''-1).
    { name: "'already apostrophe", color: "'=x", textColor: "''-1" },
  ];
  const projects = [
    { name: 'Apollo', startDate: '2026-01-05', endDate: '2026-12-31', billing: 'RATE', public: true, billable: false, budget: 1234.5, budgetType: 'hours', currency: 'EUR', color: '-red', description: 'multi\nline' },
    { name: 'Huge budget', budget: 1e21, public: false },
    { name: 'Tiny budget', budget: 1e-7, billable: true, owner: 'INTERNAL' },
    { name: 'Bare' },
  ];
  const eventTypes = [
    { title: 'Intro', durationUnit: 'Minute(s)', duration: 30, description: '=1+1' },
    { title: 'Workshop', durationUnit: 'Hour(s)', duration: 2.5, isActive: false },
  ];
  for (const [path, bodies] of [['tags', tags], ['organization-project', projects], ['event-type', eventTypes]] as const) {
    for (const body of bodies) {
      const res = await t.http.post(`/api/${path}`).set(tenant.auth).send(body);
      assert.is(res.status, 201, JSON.stringify(res.body));
    }
  }
}

/** A tenant's records of one table, without where they live, in a stable order. */
async function contents(table: string, key: string, tenantId: string) {
  const rows = await t.db(table).where({ tenantId }).orderBy(key);
  return rows.map((row) => {
    const copy: Record<string, unknown> = { ...row };
    for (const name of PLACEMENT) delete copy[name];
    // Dates compared as instants (the drivers return Date objects).
    for (const [name, value] of Object.entries(copy)) if (value instanceof Date) copy[name] = value.toISOString();
    return copy;
  });
}

async function exported(path: string, format: 'csv' | 'json'): Promise<string> {
  const res = await t.http.get(`/api/export/${path}?format=${format}`).set(source.auth).buffer(true).parse((r, done) => {
    let text = '';
    r.setEncoding('utf8');
    r.on('data', (chunk: string) => (text += chunk));
    r.on('end', () => done(null, text));
  });
  assert.is(res.status, 200, String(res.body));
  return res.body as string;
}

for (const format of ['csv', 'json'] as const) {
  for (const { path, table, key } of RESOURCES) {
    test(`${path}: ${format.toUpperCase()} export of one tenant imported into another reproduces its records`, async () => {
      const target = await newTenant(t, `Target ${format} ${path}`);
      const file = await exported(path, format);
      const expected = await contents(table, key, source.tenantId);
      assert.ok(expected.length >= 2, 'the source has records to carry over');
      // The raw body and the multipart upload both, into tenants of their own.
      const type = format === 'csv' ? 'text/csv' : 'application/json';
      const res = await t.http.post(`/api/import/${path}`).set(target.auth).set('Content-Type', type).send(file);
      assert.is(res.status, 201, JSON.stringify(res.body));
      assert.equal(res.body, { imported: expected.length, errors: [] });
      assert.equal(await contents(table, key, target.tenantId), expected);
      const uploaded = await newTenant(t, `Uploaded ${format} ${path}`);
      const up = await t.http.post(`/api/import/${path}`).set(uploaded.auth).attach('file', Buffer.from(file), { filename: `${path}.${format}`, contentType: type });
      assert.is(up.status, 201, JSON.stringify(up.body));
      assert.equal(await contents(table, key, uploaded.tenantId), expected);
      // The records are the new tenant's own, in its organization.
      const placed = await t.db(table).where({ tenantId: target.tenantId }).distinct('organizationId');
      assert.equal(placed, [{ organizationId: target.organizationId }]);
    });
  }
}

test('the CSV export neutralises formula cells, and the import gives the stored values back', async () => {
  const file = await exported('tags', 'csv');
  assert.ok(file.includes(`"'=HYPERLINK(""http://x"",""click"")"`), file);
  assert.ok(file.includes(`'+1,'-1,'@SUM(A1)`), file);
  assert.ok(file.includes(`''already apostrophe,''=x,'''-1`), file);
});

test.run();
