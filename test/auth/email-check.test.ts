// POST /api/email-check/validate: whether an address has an account, without a token.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { newTenant, uniqueEmail } from '../helpers/accounts.js';
import { createTestApp, type TestApp } from '../helpers/app.js';
import { assertError } from '../helpers/error-envelope.js';

let t: TestApp;
let owner: Awaited<ReturnType<typeof newTenant>>;

test.before(async () => {
  t = await createTestApp();
  owner = await newTenant(t);
});

test.after(async () => {
  await t?.close();
});

const check = (body: unknown) => t.http.post('/api/email-check/validate').send(body as object);

test('a registered address exists in any case; the answer is the same with a token', async () => {
  assert.ok(await t.db('user').where({ email: owner.email }).first());
  for (const email of [owner.email, owner.email.toUpperCase()]) {
    const res = await check({ email });
    assert.is(res.status, 200, JSON.stringify(res.body));
    assert.equal(res.body, { exists: true });
  }
  const withToken = await t.http.post('/api/email-check/validate').set(owner.auth).send({ email: owner.email });
  assert.equal(withToken.body, { exists: true });
});

test('an unknown address does not exist', async () => {
  const email = uniqueEmail('unknown');
  const res = await check({ email });
  assert.is(res.status, 200, JSON.stringify(res.body));
  assert.equal(res.body, { exists: false });
  assert.is(await t.db('user').where({ email }).first(), undefined);
});

test('what is not an email is a 400 naming the problem', async () => {
  assertError(await check({ email: 'not-an-email' }), 400, 'email must be an email');
  assertError(await check({}), 400, 'email should not be empty');
  assertError(await check({ email: 42 }), 400, 'email must be a string');
  assertError(await check({ email: `${'a'.repeat(250)}@example.com` }), 400, 'email must be shorter than or equal to 254 characters');
  assertError(await check({ email: owner.email, extra: 1 }), 400, 'property extra should not exist');
  assertError(await t.http.post('/api/email-check/validate').send('"x"').set('Content-Type', 'application/json'), 400);
  assertError(await t.http.post('/api/email-check/validate'), 400);
});

test.run();
