// The mailer itself: SMTP through a real server on loopback, and the log line without SMTP_URL.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { loadConfig } from '../../engine/config/config.js';
import { createMailer } from '../../engine/mail.js';
import { TEST_ENV } from '../helpers/app.js';
import { startSmtp, type SmtpCapture } from '../helpers/smtp.js';

let smtp: SmtpCapture;

test.before(async () => {
  smtp = await startSmtp();
});

test.after(async () => {
  await smtp.close();
});

test('with SMTP_URL a message reaches the SMTP server with its recipient, subject and text intact', async () => {
  const config = loadConfig({ ...TEST_ENV, SMTP_URL: smtp.url, MAIL_FROM: 'Sender <sender@example.com>' });
  const mailer = createMailer(config);
  // Long lines, non-ASCII and a line starting with a dot: the usual ways a body gets mangled.
  const text = `Grüße!\n\n123456\n\n.dot line\n${'x'.repeat(200)}\nhttp://localhost:4200/#/reset?token=abc=def&x=1`;
  await mailer.send({ to: 'someone@example.com', subject: 'Your code — ünïcode', text });
  const message = await smtp.waitFor((m) => m.to.includes('someone@example.com'));
  assert.equal(message.to, ['someone@example.com']);
  assert.is(message.subject, 'Your code — ünïcode');
  assert.is(message.text.replace(/\r\n/g, '\n'), text);
  await mailer.close();
});

test('a failing SMTP server makes send reject (the caller decides what that means)', async () => {
  const dead = await startSmtp();
  const url = dead.url;
  await dead.close();
  const mailer = createMailer(loadConfig({ ...TEST_ENV, SMTP_URL: url }));
  let failed = false;
  await mailer.send({ to: 'x@example.com', subject: 's', text: 't' }).catch(() => (failed = true));
  assert.ok(failed);
  await mailer.close();
});

test('without SMTP_URL each message is one JSON log line with to, subject and text', async () => {
  const lines: string[] = [];
  const mailer = createMailer(loadConfig({ ...TEST_ENV }), { log: (line) => lines.push(line) });
  await mailer.send({ to: 'a@example.com', subject: 'Hello', text: 'line one\n654321' });
  assert.is(lines.length, 1);
  const entry = JSON.parse(lines[0]);
  assert.is(entry.msg, 'mail');
  assert.is(entry.to, 'a@example.com');
  assert.is(entry.subject, 'Hello');
  assert.is(entry.text, 'line one\n654321');
  assert.is(entry.from, 'Workforce <no-reply@localhost>');
  await mailer.close();
});

test('by default the log line goes to stdout, except under NODE_ENV=test where tests read an SMTP capture instead', async () => {
  const printed: unknown[] = [];
  const original = console.log;
  console.log = (...args: unknown[]) => void printed.push(args.join(' '));
  try {
    await createMailer(loadConfig({ ...TEST_ENV, NODE_ENV: 'development' })).send({ to: 'dev@example.com', subject: 'S', text: 'T' });
    await createMailer(loadConfig({ ...TEST_ENV })).send({ to: 'test@example.com', subject: 'S', text: 'T' });
  } finally {
    console.log = original;
  }
  assert.is(printed.length, 1);
  assert.is(JSON.parse(String(printed[0])).to, 'dev@example.com');
});

test('waitFor rejects with what was received when nothing matches in time', async () => {
  let error: Error | undefined;
  await smtp.waitFor((m) => m.to.includes('nobody@example.com'), 50).catch((err) => (error = err));
  assert.match(String(error?.message), /no matching mail/);
});

test.run();
