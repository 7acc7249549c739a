// Changing the account's email: POST /api/email-reset/request-change mails a code to the new
// address, POST /api/email-reset/verify makes the change (and their Ever Gauzy aliases).
import { Ajv } from 'ajv';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { login, PASSWORD, uniqueEmail, type Session } from '../helpers/accounts.js';
import { createTestApp, type TestApp } from '../helpers/app.js';
import { assertError, assertUnauthorized } from '../helpers/error-envelope.js';
import { codeIn, startSmtp, type SmtpCapture } from '../helpers/smtp.js';
import { clearPendingCodes } from '../../auth/email/codes.js';

const INVALID = 'The code is invalid or has expired: ask for a new one';
const OK = { status: 200, message: 'OK' };

let t: TestApp;
let smtp: SmtpCapture;

test.before(async () => {
  smtp = await startSmtp();
  t = await createTestApp({ env: { SMTP_URL: smtp.url } });
});

test.after(async () => {
  await t?.close();
  await smtp?.close();
});

const mailsTo = (email: string) => smtp.messages.filter((m) => m.to.includes(email));

async function account(): Promise<Session> {
  const email = uniqueEmail('change');
  const res = await t.http.post('/api/auth/register').send({ user: { email }, password: PASSWORD });
  assert.is(res.status, 201, JSON.stringify(res.body));
  return login(t, email);
}

const requestChange = (session: Session, email: unknown, path = '/api/email-reset/request-change') =>
  t.http.post(path).set(session.auth).send({ email });
const verifyChange = (session: Session, code: unknown, path = '/api/email-reset/verify') =>
  t.http.post(path).set(session.auth).send({ code });
const emailOf = async (userId: string) => (await t.db('user').where({ id: userId }).first()).email as string;
const changeRow = (userId: string) => t.db('email_code').where({ userId, purpose: 'change-email' }).first();

/** Asks for the change and returns the code mailed to the new address. */
async function codeFor(session: Session, email: string): Promise<string> {
  const res = await requestChange(session, email);
  assert.is(res.status, 200, JSON.stringify(res.body));
  return codeIn(mailsTo(email.toLowerCase()).at(-1)!);
}

const TOO_MANY_CODES = 'Too many codes were asked for: try again later';
const TOO_MANY_WRONG = 'Too many wrong codes were entered: try again later';

/** Events of the user's email change (codes issued, wrong tries) within the last hour. */
async function events(userId: string, kind: 'issued' | 'wrong', purpose = 'change-email'): Promise<number> {
  const rows = await t.db('email_code_event').where({ userId, purpose, kind }).andWhere('createdAt', '>', new Date(Date.now() - 3_600_000));
  return rows.length;
}
const ageEvents = (userId: string, minutes: number) =>
  t.db('email_code_event').where({ userId }).update({ createdAt: new Date(Date.now() - minutes * 60_000) });

const wrong = (code: string) => String(Number(code) >= 999_999 ? 100_000 : Number(code) + 1);

test('request-change mails a code to the new address only, and stores it with that address', async () => {
  const me = await account();
  const target = uniqueEmail('new');
  const toOldBefore = mailsTo(me.email).length;
  const res = await requestChange(me, target);
  assert.is(res.status, 200, JSON.stringify(res.body));
  assert.equal(res.body, OK);
  const mails = mailsTo(target);
  assert.is(mails.length, 1);
  assert.is(mails[0].subject, 'Confirm your new email address');
  codeIn(mails[0]);
  assert.is(mailsTo(me.email).length, toOldBefore);
  const row = await changeRow(me.userId);
  assert.is(row.email, target);
  assert.is(row.attempts, 0);
  // Nothing changes before the code is entered.
  assert.is(await emailOf(me.userId), me.email);
});

test('verify with the code changes the email (verified), logs in under the new address only, and is single-use', async () => {
  const me = await account();
  const target = uniqueEmail('new');
  const code = await codeFor(me, target.toUpperCase());
  const res = await verifyChange(me, code);
  assert.is(res.status, 200, JSON.stringify(res.body));
  assert.equal(res.body, OK);
  const user = await t.db('user').where({ id: me.userId }).first();
  assert.is(user.email, target);
  assert.is(user.isEmailVerified, true);
  assert.is(await t.db('email_code').where({ userId: me.userId }).first(), undefined);
  assert.is((await t.http.post('/api/auth/login').send({ email: target, password: PASSWORD })).status, 200);
  assertUnauthorized(await t.http.post('/api/auth/login').send({ email: me.email, password: PASSWORD }));
  assertError(await verifyChange(me, code), 400, INVALID);
  assert.is(await emailOf(me.userId), target);
});

test('the Ever Gauzy aliases do the same, with the code as a number', async () => {
  const me = await account();
  const target = uniqueEmail('alias');
  const res = await requestChange(me, target, '/api/email-reset/request-change-email');
  assert.is(res.status, 200, JSON.stringify(res.body));
  const code = codeIn(mailsTo(target).at(-1)!);
  const done = await verifyChange(me, Number(code), '/api/email-reset/verify-change-email');
  assert.is(done.status, 200, JSON.stringify(done.body));
  assert.is(await emailOf(me.userId), target);
});

test('request-change refuses what is not an email, the current address (400) and a taken one (409), mailing nothing', async () => {
  const me = await account();
  const other = await account();
  const before = smtp.messages.length;
  assertError(await requestChange(me, 'not-an-email'), 400, 'email must be an email');
  assertError(await requestChange(me, undefined), 400, 'email should not be empty');
  assertError(await requestChange(me, 7), 400, 'email must be a string');
  assertError(await t.http.post('/api/email-reset/request-change').set(me.auth).send({ email: uniqueEmail(), extra: true }), 400, 'property extra should not exist');
  assertError(await requestChange(me, me.email.toUpperCase()), 400, 'email must differ from the current email');
  assertError(await requestChange(me, other.email), 409, 'This email is already registered');
  assertError(await requestChange(me, other.email.toUpperCase()), 409, 'This email is already registered');
  assert.is(smtp.messages.length, before);
  assert.is(await changeRow(me.userId), undefined);
  assert.is(await emailOf(me.userId), me.email);
});

test('both routes (and their aliases) need a token', async () => {
  for (const path of ['/api/email-reset/request-change', '/api/email-reset/request-change-email']) {
    assertUnauthorized(await t.http.post(path).send({ email: uniqueEmail() }));
  }
  for (const path of ['/api/email-reset/verify', '/api/email-reset/verify-change-email']) {
    assertUnauthorized(await t.http.post(path).send({ code: '123456' }));
  }
});

test('verify refuses a wrong code (counting a try), an expired one, and has nothing to check without a request', async () => {
  const me = await account();
  assertError(await verifyChange(me, '123456'), 400, INVALID);
  const target = uniqueEmail('wrong');
  const code = await codeFor(me, target);
  assertError(await verifyChange(me, wrong(code)), 400, INVALID);
  assert.is((await changeRow(me.userId)).attempts, 1);
  await t.db('email_code').where({ userId: me.userId }).update({ expiresAt: new Date(Date.now() - 1000) });
  assertError(await verifyChange(me, code), 400, INVALID);
  assert.is(await emailOf(me.userId), me.email);
});

test('verify: after five wrong tries even the right code fails', async () => {
  const me = await account();
  const code = await codeFor(me, uniqueEmail('dead'));
  for (let i = 0; i < 5; i++) assertError(await verifyChange(me, wrong(code)), 400, INVALID);
  assertError(await verifyChange(me, code), 400, INVALID);
  assert.is(await emailOf(me.userId), me.email);
});

test('verify: malformed codes are 400s and spend no try', async () => {
  const me = await account();
  await codeFor(me, uniqueEmail('malformed'));
  assertError(await t.http.post('/api/email-reset/verify').set(me.auth).send({}), 400, 'code should not be empty');
  assertError(await verifyChange(me, null), 400, /^code must be/);
  assertError(await verifyChange(me, { code: 1 }), 400, /^code must be/);
  for (const bad of ['12345', 'abcdef', 1_000_000, 99_999]) assertError(await verifyChange(me, bad), 400, INVALID);
  assertError(await t.http.post('/api/email-reset/verify').set(me.auth).send({ code: '123456', email: uniqueEmail() }), 400, 'property email should not exist');
  assert.is((await changeRow(me.userId)).attempts, 0);
});

test("a new request replaces the earlier one; one user's code never changes another's email", async () => {
  const me = await account();
  const first = uniqueEmail('first');
  const second = uniqueEmail('second');
  const firstCode = await codeFor(me, first);
  const secondCode = await codeFor(me, second);
  assert.is((await t.db('email_code').where({ userId: me.userId, purpose: 'change-email' })).length, 1);
  assert.is((await changeRow(me.userId)).email, second);

  const other = await account();
  assertError(await verifyChange(other, secondCode), 400, INVALID);
  assert.is(await emailOf(other.userId), other.email);

  if (firstCode !== secondCode) assertError(await verifyChange(me, firstCode), 400, INVALID);
  assert.is((await verifyChange(me, secondCode)).status, 200);
  assert.is(await emailOf(me.userId), second);
});

test("the verification code of registration is no email-change code", async () => {
  const email = uniqueEmail('purpose');
  await t.http.post('/api/auth/register').send({ user: { email }, password: PASSWORD });
  const registrationCode = codeIn(mailsTo(email).at(-1)!);
  const me = await login(t, email);
  await codeFor(me, uniqueEmail('purpose-new'));
  // Make sure the two codes differ, then try the registration code for the change.
  const changeCode = codeIn(smtp.messages.at(-1)!);
  if (changeCode !== registrationCode) assertError(await verifyChange(me, registrationCode), 400, INVALID);
  assert.is(await emailOf(me.userId), email);
  // After the change, the pending verification code of the old address is gone.
  assert.is((await verifyChange(me, changeCode)).status, 200);
  assert.is(await t.db('email_code').where({ userId: me.userId }).first(), undefined);
  assertError(await t.http.post('/api/auth/email/verify/code').send({ email, code: registrationCode }), 400, INVALID);
});

test('an address taken by someone else after the code was sent: verify is a 409 and nothing changes', async () => {
  const me = await account();
  const target = uniqueEmail('race');
  const code = await codeFor(me, target);
  const reg = await t.http.post('/api/auth/register').send({ user: { email: target }, password: PASSWORD });
  assert.is(reg.status, 201, JSON.stringify(reg.body));
  assertError(await verifyChange(me, code), 409, 'This email is already registered');
  assert.is(await emailOf(me.userId), me.email);
  assert.is((await t.db('user').where({ email: target })).length, 1);
});

test('a mail server that is down: request-change is a 503 with a clear message', async () => {
  const dead = await startSmtp();
  const url = dead.url;
  await dead.close();
  const broken = await createTestApp({ env: { SMTP_URL: url } });
  const quiet = console.error;
  console.error = () => {};
  try {
    const email = uniqueEmail('nomail');
    assert.is((await broken.http.post('/api/auth/register').send({ user: { email }, password: PASSWORD })).status, 201);
    const session = await login(broken, email);
    const res = await broken.http.post('/api/email-reset/request-change').set(session.auth).send({ email: uniqueEmail() });
    assertError(res, 503, 'The mail could not be sent: try again later');
    assert.is((await broken.db('user').where({ id: session.userId }).first()).email, email);
  } finally {
    console.error = quiet;
    await broken.close();
  }
});

test('the old address is told of the change, with the new address and no code', async () => {
  const me = await account();
  const target = uniqueEmail('moved');
  const code = await codeFor(me, target);
  const before = mailsTo(me.email).length;
  assert.is((await verifyChange(me, code)).status, 200);
  const notice = await smtp.waitFor((m) => m.to.includes(me.email) && m.subject === 'The email of your account was changed');
  assert.equal(notice.to, [me.email]);
  assert.ok(notice.text.includes(target), notice.text);
  assert.ok(notice.text.includes(me.email), notice.text);
  assert.throws(() => codeIn(notice));
  assert.is(mailsTo(me.email).length, before + 1);
  // Nothing is mailed to the old address for a refused code.
  const other = await account();
  const otherCode = await codeFor(other, uniqueEmail('refused'));
  const otherBefore = mailsTo(other.email).length;
  assertError(await verifyChange(other, wrong(otherCode)), 400, INVALID);
  assert.is(mailsTo(other.email).length, otherBefore);
});

test('at most five change codes an hour: the sixth request is a 429 with Retry-After, mails nothing, and stores nothing', async () => {
  const me = await account();
  const targets = Array.from({ length: 5 }, (_, i) => uniqueEmail(`limit${i}`));
  for (const [i, target] of targets.entries()) {
    assert.is((await requestChange(me, target, i % 2 ? '/api/email-reset/request-change-email' : undefined)).status, 200);
  }
  assert.is(await events(me.userId, 'issued'), 5);
  const before = smtp.messages.length;
  for (const path of ['/api/email-reset/request-change', '/api/email-reset/request-change-email']) {
    const late = uniqueEmail('late');
    const res = await requestChange(me, late, path);
    assertError(res, 429, TOO_MANY_CODES);
    const wait = Number(res.headers['retry-after']);
    assert.ok(Number.isInteger(wait) && wait > 0 && wait <= 3600, `Retry-After ${res.headers['retry-after']}`);
  }
  assert.is(smtp.messages.length, before);
  assert.is(await events(me.userId, 'issued'), 5);
  assert.is((await changeRow(me.userId)).email, targets[4]);
  // Each purpose counts on its own: verifying the current address can still be asked for.
  assert.is((await t.http.post('/api/auth/email/verify/resend-verification-code').set(me.auth)).status, 200);
  // The hour passes.
  await ageEvents(me.userId, 61);
  const code = await codeFor(me, uniqueEmail('after'));
  assert.is(await events(me.userId, 'issued'), 1);
  assert.is((await verifyChange(me, code)).status, 200);
});

test('ten wrong change codes an hour, across new requests, kill the purpose until the window passes', async () => {
  const me = await account();
  const first = await codeFor(me, uniqueEmail('guess1'));
  for (let i = 0; i < 5; i++) assertError(await verifyChange(me, wrong(first)), 400, INVALID);
  const target = uniqueEmail('guess2');
  const second = await codeFor(me, target);
  assert.is((await changeRow(me.userId)).attempts, 0);
  for (let i = 0; i < 5; i++) assertError(await verifyChange(me, wrong(second)), 400, INVALID);
  assert.is(await events(me.userId, 'wrong'), 10);
  const refused = await requestChange(me, uniqueEmail('guess3'));
  assertError(refused, 429, TOO_MANY_WRONG);
  assert.ok(Number(refused.headers['retry-after']) > 0);
  assert.is(await events(me.userId, 'issued'), 2);
  assert.is((await changeRow(me.userId)).email, target);
  await ageEvents(me.userId, 61);
  const third = await codeFor(me, target);
  assert.is((await verifyChange(me, third)).status, 200);
  assert.is(await emailOf(me.userId), target);
});

test('a Tenant-Id naming another tenant is a 403 on every bearer email route, and changes nothing', async () => {
  const me = await account();
  const foreign = { 'Tenant-Id': '00000000-0000-4000-8000-000000000000' };
  const before = smtp.messages.length;
  for (const path of ['/api/auth/email/verify/resend-verification-code', '/api/auth/email/verify/resend-link']) {
    assertError(await t.http.post(path).set(me.auth).set(foreign), 403);
  }
  for (const path of ['/api/email-reset/request-change', '/api/email-reset/request-change-email']) {
    assertError(await t.http.post(path).set(me.auth).set(foreign).send({ email: uniqueEmail() }), 403);
  }
  const code = await codeFor(me, uniqueEmail('foreign'));
  for (const path of ['/api/email-reset/verify', '/api/email-reset/verify-change-email']) {
    assertError(await t.http.post(path).set(me.auth).set(foreign).send({ code }), 403);
  }
  assert.is(smtp.messages.length, before + 1);
  assert.is(await events(me.userId, 'issued'), 1);
  assert.is((await changeRow(me.userId)).attempts, 0);
  assert.is(await emailOf(me.userId), me.email);
});

test('clearPendingCodes deletes every pending code of the user, and of that user only; the hourly counts stay', async () => {
  const me = await account();
  await codeFor(me, uniqueEmail('pending'));
  const other = await account();
  await codeFor(other, uniqueEmail('kept'));
  assert.is((await t.db('email_code').where({ userId: me.userId })).length, 2);
  await clearPendingCodes(t.db, me.userId);
  assert.is((await t.db('email_code').where({ userId: me.userId })).length, 0);
  assert.is((await t.db('email_code').where({ userId: other.userId })).length, 2);
  assert.is(await events(me.userId, 'issued'), 1);
  assert.is(await events(me.userId, 'issued', 'verify-email'), 1);
});

test('the OpenAPI document lists every email route with its body, security and answers, and the answers fit it', async () => {
  const doc = t.openapi as Record<string, any>;
  const op = (path: string) => doc.paths[path]?.post;
  // A signed-in route states no security of its own: the document-wide bearer requirement applies.
  const bearer = undefined;
  const expected: Record<string, { security: object[] | undefined; statuses: string[]; body?: string[] }> = {
    '/api/auth/email/verify/resend-verification-code': { security: bearer, statuses: ['200', '400', '401', '403', '413', '415', '429', '500', '503'] },
    '/api/auth/email/verify/resend-link': { security: bearer, statuses: ['200', '400', '401', '403', '413', '415', '429', '500', '503'] },
    '/api/auth/email/verify/code': { security: [], statuses: ['200', '400', '413', '415', '429', '500', '503'], body: ['email', 'code'] },
    '/api/email-check/validate': { security: [], statuses: ['200', '400', '413', '415', '429', '500', '503'], body: ['email'] },
    '/api/email-reset/request-change': { security: bearer, statuses: ['200', '400', '401', '403', '409', '413', '415', '429', '500', '503'], body: ['email'] },
    '/api/email-reset/request-change-email': { security: bearer, statuses: ['200', '400', '401', '403', '409', '413', '415', '429', '500', '503'], body: ['email'] },
    '/api/email-reset/verify': { security: bearer, statuses: ['200', '400', '401', '403', '409', '413', '415', '429', '500', '503'], body: ['code'] },
    '/api/email-reset/verify-change-email': { security: bearer, statuses: ['200', '400', '401', '403', '409', '413', '415', '429', '500', '503'], body: ['code'] },
  };
  const operationIds = new Set<string>();
  for (const [path, want] of Object.entries(expected)) {
    const operation = op(path);
    assert.ok(operation, `${path} is documented`);
    assert.equal(operation.security, want.security, path);
    assert.equal(Object.keys(operation.responses).sort(), [...want.statuses].sort(), path);
    assert.equal(operation.requestBody?.content['application/json'].schema.required, want.body, path);
    assert.not.ok(operationIds.has(operation.operationId), `${path}: operationId ${operation.operationId} is unique`);
    operationIds.add(operation.operationId);
  }
  // The 429 names its Retry-After header.
  for (const path of ['/api/auth/email/verify/resend-verification-code', '/api/email-reset/request-change']) {
    assert.equal(op(path).responses['429'].headers['Retry-After'].schema, { type: 'integer', minimum: 1 }, path);
  }
  // The code is documented as a number or a string, as the route accepts it.
  const code = op('/api/email-reset/verify').requestBody.content['application/json'].schema.properties.code;
  assert.equal(code.oneOf, [{ type: 'integer' }, { type: 'string' }]);

  // What the server answers fits the documented 200 schemas.
  const fits = (path: string, body: unknown) => {
    const validate = new Ajv({ strict: false }).compile(op(path).responses['200'].content['application/json'].schema);
    assert.ok(validate(body), `${path}: ${JSON.stringify(body)} ${JSON.stringify(validate.errors)}`);
  };
  const me = await account();
  fits('/api/email-check/validate', (await t.http.post('/api/email-check/validate').send({ email: me.email })).body);
  const target = uniqueEmail('doc');
  const requested = await requestChange(me, target);
  fits('/api/email-reset/request-change', requested.body);
  fits('/api/email-reset/verify', (await verifyChange(me, codeIn(mailsTo(target).at(-1)!))).body);
});

test.run();
