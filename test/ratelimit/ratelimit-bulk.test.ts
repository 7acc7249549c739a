// A bulk write counts as one request per item against every limit that counts it (its tier, its
// method's limit, its endpoint's): shipped limits.yaml allows 100 POSTs a minute, so 60 items and
// then 40 use it up, 41 more are refused with nothing written, and a bulk larger than the limit
// itself is told to send fewer. In memory and, when REDIS_URL is set, in Redis.
import { randomBytes } from 'node:crypto';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { newTenant, type Session } from '../helpers/accounts.js';
import { createTestApp, type TestApp } from '../helpers/app.js';
import { assertError } from '../helpers/error-envelope.js';
import { countsOf, siblingApps } from '../helpers/ratelimit.js';

let t: TestApp;
let owner: Session & { organizationId: string };
const apps = siblingApps(() => t);

test.before(async () => {
  t = await createTestApp();
  owner = await newTenant(t);
});
test.after.each(() => apps.closeAll());
test.after(async () => {
  await t.close();
});

const STORES: Array<{ name: string; env: Record<string, string> }> = [{ name: 'memory', env: {} }];
const { REDIS_URL } = process.env;
if (REDIS_URL) STORES.push({ name: 'redis', env: { REDIS_URL } });
else console.log('ratelimit-bulk.test.ts: the Redis store is not tried, REDIS_URL is not set');

const tags = (prefix: string, n: number) => Array.from({ length: n }, (_, i) => ({ name: `${prefix}-${i}`, color: '#123456' }));
const tagCount = async (prefix: string) => Number((await t.db('tag').where('name', 'like', `${prefix}-%`).count({ n: '*' }))[0].n);

for (const store of STORES) {
  const env = () => ({ ...store.env, RATE_LIMIT_PREFIX: `bulk_${randomBytes(4).toString('hex')}` });
  const limited = async () => {
    const app = apps.create({ env: env() });
    await app.ready();
    return app;
  };

  test(`${store.name}: each item counts as a request; a bulk the limit cannot take is a 429 and writes nothing`, async () => {
    const app = await limited();
    const prefix = `rl-${randomBytes(3).toString('hex')}`;
    const first = await app.http.post('/api/tags/bulk').set(owner.auth).send(tags(`${prefix}a`, 60));
    assert.is(first.status, 201, JSON.stringify(first.body));
    assert.is(countsOf(first).get('POST /api/*')?.r, 40, first.headers.ratelimit);
    assert.is(first.headers['x-ratelimit-remaining'], '40');

    const over = await app.http.post('/api/tags/bulk').set(owner.auth).send(tags(`${prefix}b`, 41));
    assertError(over, 429, /counts as 41 requests .* "POST \/api\/\*" .* had 40 left/);
    assert.ok(Number(over.headers['retry-after']) >= 1);
    assert.is(await tagCount(`${prefix}b`), 0, 'nothing written');

    // The refused request still counted once, as any refused request does: 39 left.
    const rest = await app.http.post('/api/tags/bulk').set(owner.auth).send(tags(`${prefix}c`, 39));
    assert.is(rest.status, 201, JSON.stringify(rest.body));
    assert.is(countsOf(rest).get('POST /api/*')?.r, 0);
    assertError(await app.http.post('/api/tags').set(owner.auth).send({ name: `${prefix}-single`, color: '#123456' }), 429);
    assert.is(await tagCount(`${prefix}a`) + (await tagCount(`${prefix}c`)), 99);
  });

  test(`${store.name}: a bulk larger than the limit itself is told to send fewer items; PATCH and DELETE count too`, async () => {
    const app = await limited();
    const prefix = `rl-${randomBytes(3).toString('hex')}`;
    assertError(await app.http.post('/api/tags/bulk').set(owner.auth).send(tags(prefix, 101)), 429, /send at most 100 items per request/);
    assert.is(await tagCount(prefix), 0);
    const made = await app.http.post('/api/tags/bulk').set(owner.auth).send(tags(prefix, 60));
    assert.is(made.status, 201);
    const ids = made.body.items.map((i: { id: string }) => i.id);
    // DELETE /api/* allows 50 a minute.
    assertError(await app.http.delete('/api/tags/bulk').set(owner.auth).send({ ids }), 429, /"DELETE \/api\/\*"/);
    assert.is(await tagCount(prefix), 60, 'nothing deleted');
    const patched = await app.http.patch('/api/tags/bulk').set(owner.auth).send(ids.map((id: string) => ({ id, color: '#654321' })));
    assert.is(patched.status, 200);
    assert.is(countsOf(patched).get('PUT /api/*')?.r, 40, 'PATCH counts as PUT, one per item');
  });
}

test('RATE_LIMITS=off: a bulk write is not counted at all', async () => {
  const res = await t.http.post('/api/tags/bulk').set(owner.auth).send(tags(`off-${randomBytes(3).toString('hex')}`, 150));
  assert.is(res.status, 201);
  assert.is(res.headers['x-ratelimit-remaining'], undefined);
});

test.run();
