// Email verification: the code mailed at registration and on resend, and POST /api/auth/email/verify/code.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { login, PASSWORD, uniqueEmail, type Session } from '../helpers/accounts.js';
import { createTestApp, type TestApp } from '../helpers/app.js';
import { assertError, assertUnauthorized } from '../helpers/error-envelope.js';
import { codeIn, startSmtp, type CapturedMail, type SmtpCapture } from '../helpers/smtp.js';

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

/** A new account and the verification code mailed to it. */
async function registered(): Promise<{ email: string; userId: string; code: string; mail: CapturedMail }> {
  const email = uniqueEmail('verify');
  const res = await t.http.post('/api/auth/register').send({ user: { email, firstName: 'Vera' }, password: PASSWORD, confirmPassword: PASSWORD });
  assert.is(res.status, 201, JSON.stringify(res.body));
  const mail = await smtp.waitFor((m) => m.to.includes(email));
  return { email, userId: res.body.id, code: codeIn(mail), mail };
}

const verify = (body: unknown) => t.http.post('/api/auth/email/verify/code').send(body as object);
const isVerified = async (userId: string) => (await t.db('user').where({ id: userId }).first()).isEmailVerified as boolean;
const codeRow = (userId: string) => t.db('email_code').where({ userId, purpose: 'verify-email' }).first();
const resend = (session: Session, path = '/api/auth/email/verify/resend-verification-code') => t.http.post(path).set(session.auth);
const TOO_MANY_CODES = 'Too many codes were asked for: try again later';
const TOO_MANY_WRONG = 'Too many wrong codes were entered: try again later';

/** Codes issued, or wrong tries made, for the user's email verification within the last hour. */
async function events(userId: string, kind: 'issued' | 'wrong'): Promise<number> {
  const rows = await t.db('email_code_event').where({ userId, purpose: 'verify-email', kind }).andWhere('createdAt', '>', new Date(Date.now() - 3_600_000));
  return rows.length;
}
/** Moves the user's code events into the past, as if that many minutes went by. */
const ageEvents = (userId: string, minutes: number) =>
  t.db('email_code_event').where({ userId }).update({ createdAt: new Date(Date.now() - minutes * 60_000) });

/** A wrong code for sure: the right one plus one (wrapping inside the six-digit range). */
const wrong = (code: string) => String(Number(code) >= 999_999 ? 100_000 : Number(code) + 1);

test('registration mails a six-digit code on a line of its own; only a hash of it is stored', async () => {
  const { email, userId, code, mail } = await registered();
  assert.equal(mail.to, [email]);
  assert.is(mail.subject, 'Your email verification code');
  assert.ok(Number(code) >= 100_000 && Number(code) <= 999_999);
  assert.ok(mail.text.split('\n').map((l) => l.trim()).includes(code));
  const row = await codeRow(userId);
  assert.ok(row);
  assert.is(row.attempts, 0);
  assert.is(row.email, null);
  assert.not.ok(row.codeHash.includes(code));
  const minutesLeft = (new Date(row.expiresAt).getTime() - Date.now()) / 60_000;
  assert.ok(minutesLeft > 8 && minutesLeft <= 10, `expires in ${minutesLeft} minutes`);
  assert.is(await isVerified(userId), false);
});

test('the code as a string verifies the email, once', async () => {
  const { email, userId, code } = await registered();
  const res = await verify({ email, code });
  assert.is(res.status, 200, JSON.stringify(res.body));
  assert.equal(res.body, OK);
  assert.is(await isVerified(userId), true);
  assert.is(await codeRow(userId), undefined);
  // Used: the same code again fails.
  assertError(await verify({ email, code }), 400, INVALID);
  // And login shows the verified account.
  const session = await t.http.post('/api/auth/login').send({ email, password: PASSWORD });
  assert.is(session.body.user.isEmailVerified, true);
});

test('the code as a number verifies; the address is matched whatever its case', async () => {
  const { email, userId, code } = await registered();
  const res = await verify({ email: email.toUpperCase(), code: Number(code) });
  assert.is(res.status, 200, JSON.stringify(res.body));
  assert.is(await isVerified(userId), true);
});

test('a wrong code is a 400, counts one try, and leaves the email unverified', async () => {
  const { email, userId, code } = await registered();
  assertError(await verify({ email, code: wrong(code) }), 400, INVALID);
  assert.is((await codeRow(userId)).attempts, 1);
  assert.is(await isVerified(userId), false);
  // The right code still works after one wrong try.
  assert.is((await verify({ email, code })).status, 200);
  assert.is(await isVerified(userId), true);
});

test('after four wrong tries the right code still works; after five it is dead', async () => {
  const four = await registered();
  for (let i = 0; i < 4; i++) assertError(await verify({ email: four.email, code: wrong(four.code) }), 400, INVALID);
  assert.is((await verify({ email: four.email, code: four.code })).status, 200);
  assert.is(await isVerified(four.userId), true);

  const five = await registered();
  for (let i = 0; i < 5; i++) assertError(await verify({ email: five.email, code: wrong(five.code) }), 400, INVALID);
  assertError(await verify({ email: five.email, code: five.code }), 400, INVALID);
  assert.is(await isVerified(five.userId), false);
  assert.is((await codeRow(five.userId)).attempts, 5);
});

test('concurrent wrong tries cannot get past the limit of five', async () => {
  const { email, userId, code } = await registered();
  const answers = await Promise.all(Array.from({ length: 12 }, () => verify({ email, code: wrong(code) })));
  for (const res of answers) assertError(res, 400, INVALID);
  assert.is((await codeRow(userId)).attempts, 5);
  assertError(await verify({ email, code }), 400, INVALID);
  assert.is(await isVerified(userId), false);
});

test('an expired code is refused, even the right one', async () => {
  const { email, userId, code } = await registered();
  await t.db('email_code').where({ userId }).update({ expiresAt: new Date(Date.now() - 1000) });
  assertError(await verify({ email, code }), 400, INVALID);
  assert.is(await isVerified(userId), false);
});

test('an unknown address, or another tenant than the account\'s, fails exactly like a wrong code', async () => {
  const { email, userId, code } = await registered();
  assertError(await verify({ email: uniqueEmail('nobody'), code }), 400, INVALID);
  assertError(await verify({ email, code, tenantId: '00000000-0000-4000-8000-000000000000' }), 400, INVALID);
  assert.is(await isVerified(userId), false);
  // The account's own tenant (as Ever Gauzy clients send it) is accepted.
  const { tenantId } = await t.db('user').where({ id: userId }).first();
  const res = await verify({ email, code, tenantId });
  assert.is(res.status, 200, JSON.stringify(res.body));
  assert.is(await isVerified(userId), true);
});

test('malformed bodies are 400s that name the problem and spend no try', async () => {
  const { email, userId, code } = await registered();
  assertError(await verify({ email }), 400, 'code should not be empty');
  assertError(await verify({ code }), 400, 'email should not be empty');
  assertError(await verify({ email: 'not-an-email', code }), 400, 'email must be an email');
  assertError(await verify({ email, code: true }), 400, /^code must be/);
  assertError(await verify({ email, code: 12.5 }), 400, /^code must be/);
  assertError(await verify({ email, code, isEmailVerified: true }), 400, 'property isEmailVerified should not exist');
  assertError(await verify({ email, code, tenantId: 'x' }), 400, 'tenantId must be a UUID');
  for (const bad of ['12345', '1234567', 'abcdef', 99_999, 1_000_000, '', '-12345']) {
    assertError(await verify({ email, code: bad }), 400, INVALID);
  }
  assertError(await t.http.post('/api/auth/email/verify/code').send([]), 400);
  assert.is((await codeRow(userId)).attempts, 0);
  assert.is(await isVerified(userId), false);
});

test('resend: a new code replaces the old one, under both paths; no token is a 401', async () => {
  const { email, userId, code: first } = await registered();
  const session: Session = await login(t, email);
  let code = first;
  // Two codes in a row may (once in 900,000) be equal; ask again until they differ.
  for (let i = 0; i < 3 && code === first; i++) {
    const before = mailsTo(email).length;
    const res = await t.http.post('/api/auth/email/verify/resend-verification-code').set(session.auth);
    assert.is(res.status, 200, JSON.stringify(res.body));
    assert.equal(res.body, OK);
    assert.is(mailsTo(email).length, before + 1);
    code = codeIn(mailsTo(email).at(-1)!);
  }
  assert.is.not(code, first);
  assert.is((await t.db('email_code').where({ userId })).length, 1);
  // The replaced code fails (spending a try of the new one), the new one works.
  assertError(await verify({ email, code: first }), 400, INVALID);
  assert.is((await verify({ email, code })).status, 200);
  assert.is(await isVerified(userId), true);

  const other = await registered();
  const otherSession = await login(t, other.email);
  const before = mailsTo(other.email).length;
  const alias = await t.http.post('/api/auth/email/verify/resend-link').set(otherSession.auth);
  assert.is(alias.status, 200, JSON.stringify(alias.body));
  assert.is(mailsTo(other.email).length, before + 1);
  assert.is((await verify({ email: other.email, code: codeIn(mailsTo(other.email).at(-1)!) })).status, 200);

  assertUnauthorized(await t.http.post('/api/auth/email/verify/resend-verification-code'));
  assertUnauthorized(await t.http.post('/api/auth/email/verify/resend-link').set('Authorization', 'Bearer nonsense'));
});

test('a code killed by five wrong tries is replaced by a live one on resend; the wrong tries stay counted', async () => {
  const { email, userId, code } = await registered();
  for (let i = 0; i < 5; i++) await verify({ email, code: wrong(code) });
  const session = await login(t, email);
  assert.is((await resend(session)).status, 200);
  assert.is((await codeRow(userId)).attempts, 0);
  assert.is(await events(userId, 'wrong'), 5);
  assert.is((await verify({ email, code: codeIn(mailsTo(email).at(-1)!) })).status, 200);
});

test('at most five codes an hour: the sixth resend is a 429 with Retry-After and mails nothing, until the hour passes', async () => {
  const { email, userId } = await registered();
  assert.is(await events(userId, 'issued'), 1);
  const session = await login(t, email);
  for (let i = 0; i < 4; i++) assert.is((await resend(session, i % 2 ? '/api/auth/email/verify/resend-link' : undefined)).status, 200);
  assert.is(await events(userId, 'issued'), 5);
  const before = mailsTo(email).length;
  for (const path of ['/api/auth/email/verify/resend-verification-code', '/api/auth/email/verify/resend-link']) {
    const res = await resend(session, path);
    assertError(res, 429, TOO_MANY_CODES);
    const wait = Number(res.headers['retry-after']);
    assert.ok(Number.isInteger(wait) && wait > 0 && wait <= 3600, `Retry-After ${res.headers['retry-after']}`);
  }
  assert.is(mailsTo(email).length, before);
  assert.is(await events(userId, 'issued'), 5);
  // The last code mailed still works meanwhile: the limit is on asking, not on entering.
  const live = codeIn(mailsTo(email).at(-1)!);
  // An hour later the window has passed.
  await ageEvents(userId, 61);
  assert.is((await resend(session)).status, 200);
  assert.is(mailsTo(email).length, before + 1);
  assert.is(await events(userId, 'issued'), 1);
  if (live !== codeIn(mailsTo(email).at(-1)!)) assertError(await verify({ email, code: live }), 400, INVALID);
  assert.is((await verify({ email, code: codeIn(mailsTo(email).at(-1)!) })).status, 200);
});

test('ten wrong tries an hour across resends kill every code of the purpose; strangers cannot lock it past the window', async () => {
  const { email, userId, code: first } = await registered();
  const session = await login(t, email);
  // Anonymous guesses: five on the first code, three on the second, two on the third.
  for (let i = 0; i < 5; i++) assertError(await verify({ email, code: wrong(first) }), 400, INVALID);
  assert.is((await resend(session)).status, 200);
  const second = codeIn(mailsTo(email).at(-1)!);
  for (let i = 0; i < 3; i++) assertError(await verify({ email, code: wrong(second) }), 400, INVALID);
  assert.is((await resend(session)).status, 200);
  const third = codeIn(mailsTo(email).at(-1)!);
  for (let i = 0; i < 2; i++) assertError(await verify({ email, code: wrong(third) }), 400, INVALID);
  assert.is(await events(userId, 'wrong'), 10);
  assert.is((await codeRow(userId)).attempts, 2);
  // The third code has tries left, yet even the right code fails now, and spends nothing.
  assertError(await verify({ email, code: third }), 400, INVALID);
  assert.is(await isVerified(userId), false);
  assert.is((await codeRow(userId)).attempts, 2);
  assert.is(await events(userId, 'wrong'), 10);
  // A new code would be dead as well: the owner is told when to come back.
  const before = mailsTo(email).length;
  const refused = await resend(session);
  assertError(refused, 429, TOO_MANY_WRONG);
  assert.ok(Number(refused.headers['retry-after']) > 0);
  assert.is(mailsTo(email).length, before);
  // The window passes: the same live code works again.
  await ageEvents(userId, 61);
  assert.is((await verify({ email, code: third })).status, 200);
  assert.is(await isVerified(userId), true);
});

test('concurrent wrong tries across the hour limit are each counted once, and never more than a code allows', async () => {
  const { email, userId, code } = await registered();
  await Promise.all(Array.from({ length: 8 }, () => verify({ email, code: wrong(code) })));
  assert.is(await events(userId, 'wrong'), 5);
  const session = await login(t, email);
  assert.is((await resend(session)).status, 200);
  const next = codeIn(mailsTo(email).at(-1)!);
  await Promise.all(Array.from({ length: 8 }, () => verify({ email, code: wrong(next) })));
  assert.is(await events(userId, 'wrong'), 10);
  assert.is((await codeRow(userId)).attempts, 5);
});

test('resend for a verified email answers 200 and mails nothing', async () => {
  const { email, userId, code } = await registered();
  assert.is((await verify({ email, code })).status, 200);
  const session = await login(t, email);
  const before = mailsTo(email).length;
  const res = await t.http.post('/api/auth/email/verify/resend-verification-code').set(session.auth);
  assert.is(res.status, 200);
  assert.is(mailsTo(email).length, before);
  assert.is(await codeRow(userId), undefined);
});

test('a mail server that is down: registration still succeeds (the code can be resent), resend is a 503', async () => {
  const dead = await startSmtp();
  const url = dead.url;
  await dead.close();
  const broken = await createTestApp({ env: { SMTP_URL: url } });
  const quiet = console.error;
  console.error = () => {};
  try {
    const email = uniqueEmail('nomail');
    const reg = await broken.http.post('/api/auth/register').send({ user: { email }, password: PASSWORD });
    assert.is(reg.status, 201, JSON.stringify(reg.body));
    assert.ok(await broken.db('user').where({ email }).first());
    const session = await login(broken, email);
    assertError(await broken.http.post('/api/auth/email/verify/resend-verification-code').set(session.auth), 503, 'The mail could not be sent: try again later');
  } finally {
    console.error = quiet;
    await broken.close();
  }
});

test.run();
