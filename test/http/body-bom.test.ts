// A UTF-8 byte order mark (EF BB BF) before a JSON body is ignored, as RFC 8259 §8.1 allows:
// .NET and PowerShell write one. The body is read as if it began after the mark, on every route
// whose body is JSON (generated resources, auth), compressed or not; what follows the mark is
// refused with the answer it would get alone. Before, any such body was a 400 `body must be an object`.
import { gzipSync } from 'node:zlib';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { newTenant, PASSWORD, uniqueEmail, type Session } from '../helpers/accounts.js';
import { createTestApp, type TestApp } from '../helpers/app.js';
import { assertError } from '../helpers/error-envelope.js';

let t: TestApp;
let admin: Session & { organizationId: string };

const BOM = Buffer.from([0xef, 0xbb, 0xbf]);
const tags = async () => Number((await t.db('tag').where({ tenantId: admin.tenantId }).count({ n: '*' }))[0].n);

/**
 * `body` sent as these exact bytes: superagent would serialize a Buffer as JSON of its own, so
 * the serializer hands it on as it is.
 */
function sendBytes(method: 'post' | 'patch', path: string, body: Buffer, headers: Record<string, string> = {}) {
  return t.http[method](path).set({ 'Content-Type': 'application/json', ...headers }).serialize((bytes: Buffer) => bytes as unknown as string).send(body as never);
}
const withBom = (json: string | Buffer) => Buffer.concat([BOM, Buffer.isBuffer(json) ? json : Buffer.from(json, 'utf8')]);

test.before(async () => {
  t = await createTestApp();
  admin = await newTenant(t);
});
test.after(async () => {
  await t.close();
});

test('the control: the same bytes without a mark are a 201', async () => {
  const plain = await sendBytes('post', '/api/tags', Buffer.from('{"name":"control","color":"#1"}')).set(admin.auth);
  assert.is(plain.status, 201, JSON.stringify(plain.body));
});

test('a create with a BOM before its JSON is a 201 and stored as sent, compressed or not', async () => {
  const before = await tags();
  for (const [i, encode] of [(b: Buffer) => b, (b: Buffer) => gzipSync(b)].entries()) {
    const name = `BOM é 日本 ${i}`;
    const body = withBom(JSON.stringify({ name, color: '#1', description: 'from PowerShell' }));
    const res = await sendBytes('post', '/api/tags', encode(body), i ? { 'Content-Encoding': 'gzip' } : {}).set(admin.auth);
    assert.is(res.status, 201, JSON.stringify(res.body));
    assert.is(res.body.name, name);
    const stored = await t.db('tag').where({ id: res.body.id }).first();
    assert.is(stored.name, name);
    assert.is(stored.tenantId, admin.tenantId);
    assert.is(stored.description, 'from PowerShell');
  }
  assert.is(await tags(), before + 2);
});

test('a change with a BOM before its JSON is applied (PATCH of a generated resource)', async () => {
  const created = await t.http.post('/api/tags').set(admin.auth).send({ name: 'to rename', color: '#1' });
  assert.is(created.status, 201);
  const res = await sendBytes('patch', `/api/tags/${created.body.id}`, withBom(' \n{"name":"renamed"}')).set(admin.auth);
  assert.is(res.status, 200, JSON.stringify(res.body));
  assert.is((await t.db('tag').where({ id: created.body.id }).first()).name, 'renamed');
});

test('auth routes: registration and login with a BOM before the JSON', async () => {
  const email = uniqueEmail('bom');
  const register = { user: { firstName: 'Bo', lastName: 'Mark', email }, password: PASSWORD, confirmPassword: PASSWORD };
  const reg = await sendBytes('post', '/api/auth/register', withBom(JSON.stringify(register)));
  assert.is(reg.status, 201, JSON.stringify(reg.body));
  const user = await t.db('user').where({ email }).first();
  assert.ok(user, 'the user is stored');
  assert.is(user.firstName, 'Bo');
  const login = await sendBytes('post', '/api/auth/login', withBom(JSON.stringify({ email, password: PASSWORD })));
  assert.is(login.status, 200, JSON.stringify(login.body));
  assert.is(login.body.user.id, user.id);
  assert.type(login.body.token, 'string');
});

test('what follows a BOM is refused with the answer it gets alone, and nothing is written', async () => {
  const before = await tags();
  const cases = [
    '{"name":',
    '{name: "x"}',
    '{"name":"x",}',
    '42',
    'null',
    '"text"',
    '[{"name":"x","color":"y"}]',
    '{"__proto__":{"isSystem":true},"name":"p","color":"c"}',
    '{"name":"a\\ud800","color":"#1"}',
    '{"color":"#1"}',
    ' ',
    '',
  ];
  for (const json of cases) {
    const alone = await sendBytes('post', '/api/tags', Buffer.from(json, 'utf8')).set(admin.auth);
    const after = await sendBytes('post', '/api/tags', withBom(json)).set(admin.auth);
    assert.ok(alone.status >= 400 && alone.status < 500, `${json}: ${alone.status}`);
    assert.is(after.status, alone.status, json);
    assert.equal(after.body, alone.body, json);
  }
  assertError(await sendBytes('post', '/api/tags', withBom('{"name":')).set(admin.auth), 400, 'Request body is not valid JSON');
  assertError(await sendBytes('post', '/api/tags', withBom('[1]')).set(admin.auth), 400, 'body must be an object');
  // Bytes that are not UTF-8 after the mark are named as they are without it.
  const damaged = withBom(Buffer.concat([Buffer.from('{"name":"a'), Buffer.from([0xff]), Buffer.from('","color":"#1"}')]));
  assertError(await sendBytes('post', '/api/tags', damaged).set(admin.auth), 400, 'Request body must be UTF-8 text');
  assert.is(await tags(), before);
});

test('only one mark, first, is ignored: a second one, one after whitespace, or its characters as text are refused', async () => {
  const before = await tags();
  assertError(await sendBytes('post', '/api/tags', withBom(withBom('{"name":"x","color":"#1"}'))).set(admin.auth), 400, 'body must be an object');
  // "ï»¿" as UTF-8 text (C3 AF C2 BB C2 BF), what a body read as Latin-1 and saved again holds.
  assertError(await sendBytes('post', '/api/tags', Buffer.from('\u00ef\u00bb\u00bf{"name":"x","color":"#1"}', 'utf8')).set(admin.auth), 400, 'body must be an object');
  assertError(await sendBytes('post', '/api/tags', Buffer.concat([Buffer.from(' '), withBom('{"name":"x","color":"#1"}')])).set(admin.auth), 400, 'body must be an object');
  assert.is(await tags(), before);
});

test.run();
