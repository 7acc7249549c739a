// A body on a path no route answers is the router's answer (404, or 405 where the path exists for
// other methods), never a 415 for a body nobody would read. A route that exists still refuses a
// body of the wrong type (or charset) with 415.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { newTenant, type Session } from '../helpers/accounts.js';
import { createTestApp, type TestApp } from '../helpers/app.js';
import { assertError } from '../helpers/error-envelope.js';
import { MULTIPART, multipartBody } from '../helpers/upload.js';

let t: TestApp;
let a: Session & { organizationId: string };

test.before(async () => {
  t = await createTestApp();
  a = await newTenant(t);
});
test.after(async () => {
  await t.close();
});

const form = multipartBody({ name: 'file', filename: 'a.csv', type: 'text/csv', data: Buffer.from('name\nx\n') });

test('multipart, text or another charset on an unknown path: 404 in the envelope, not 415', async () => {
  for (const method of ['post', 'put', 'patch'] as const) {
    const path = '/api/no-such-resource';
    assertError(await t.http[method](path).set(a.auth).set('Content-Type', MULTIPART).send(form), 404, `Cannot ${method.toUpperCase()} ${path}`);
    assertError(await t.http[method](path).set(a.auth).set('Content-Type', 'text/plain').send('hello'), 404, `Cannot ${method.toUpperCase()} ${path}`);
    assertError(await t.http[method](path).set(a.auth).set('Content-Type', 'application/json; charset=latin1').send('{}'), 404);
  }
  // Deeper paths, and paths beside real routes.
  assertError(await t.http.post('/api/tags/a/b/c').set(a.auth).set('Content-Type', 'text/plain').send('x'), 404);
  assertError(await t.http.post('/nowhere').set('Content-Type', MULTIPART).send(form), 404);
});

test('a path that exists for other methods: 405 with Allow, not 415', async () => {
  const res = await t.http.patch('/api/tags').set(a.auth).set('Content-Type', 'text/plain').send('x');
  assertError(res, 405);
  assert.ok(String(res.headers.allow).includes('POST'), String(res.headers.allow));
});

test('a route that exists still answers 415 for a body of another type or charset; nothing written', async () => {
  const before = Number((await t.db('tag').where({ tenantId: a.tenantId }).count({ n: '*' }))[0].n);
  assertError(await t.http.post('/api/tags').set(a.auth).set('Content-Type', MULTIPART).send(form), 415, 'Unsupported media type: send application/json');
  assertError(await t.http.post('/api/tags').set(a.auth).set('Content-Type', 'text/plain').send('{"name":"x","color":"#1"}'), 415);
  assertError(await t.http.put(`/api/tags/${a.organizationId}`).set(a.auth).set('Content-Type', 'text/plain').send('x'), 415);
  assertError(await t.http.post('/api/tags').set(a.auth).set('Content-Type', 'application/json; charset=latin1').send('{"name":"x","color":"#1"}'), 415, 'Unsupported charset latin1: send UTF-8 text');
  assert.is(Number((await t.db('tag').where({ tenantId: a.tenantId }).count({ n: '*' }))[0].n), before);
});

test.run();
