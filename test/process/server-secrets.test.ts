// Sessions survive a restart on the embedded default: without JWT_SECRET and JWT_REFRESH_SECRET
// (outside production) the first start generates both, keeps them in the data folder readable by
// its owner only, and says so in one line; a later start reads them, so a token signed before the
// restart stays valid. A damaged file stops the start with one sentence naming it.
import { chmodSync, mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { KEPT_SECRETS_FILE } from '../../engine/config/kept-secrets.js';
import { migratedDataFolder } from '../helpers/migrated-folder.js';
import { killServers, runServerToExit, startServer, startupFailure } from '../helpers/server-process.js';

const scratch = mkdtempSync(path.join(tmpdir(), 'server-secrets-'));
/** The test run's own secrets left out: the service is started as a newcomer starts it. */
const NO_SECRETS = { JWT_SECRET: undefined, JWT_REFRESH_SECRET: undefined };

test.after(() => {
  killServers();
  rmSync(scratch, { recursive: true, force: true });
});

const secretsLine = (line: Record<string, any>) => typeof line.msg === 'string' && line.msg.startsWith('JWT_SECRET / JWT_REFRESH_SECRET not set');

async function json(url: string, init: RequestInit & { body?: string } = {}, token?: string) {
  const headers: Record<string, string> = { 'content-type': 'application/json' };
  if (token) headers.authorization = `Bearer ${token}`;
  const res = await fetch(url, { ...init, headers });
  return { status: res.status, body: await res.json() };
}

test('secrets generated on the first start are kept owner-only in the data folder: tokens outlive a restart', async () => {
  const dataDir = await migratedDataFolder(path.join(scratch, 'kept'));
  const file = path.join(dataDir, KEPT_SECRETS_FILE);
  const env = { ...NO_SECRETS, DATA_DIR: dataDir };

  const first = await startServer(env);
  const made = await first.waitForLog(secretsLine);
  assert.is(made.level, 'info');
  assert.match(made.msg, 'generated now and kept in the data folder (owner-only), so they stay valid across restarts');
  assert.is(made.file, file);
  assert.is(first.logs.filter(secretsLine).length, 1, 'one start-up line');
  assert.is(statSync(file).mode & 0o777, 0o600);
  const kept = JSON.parse(readFileSync(file, 'utf8'));
  assert.ok(kept.secret.length >= 32 && kept.refreshSecret.length >= 32 && kept.secret !== kept.refreshSecret, JSON.stringify(Object.keys(kept)));

  const account = { email: 'kept@example.com', password: 'Str0ng!pass' };
  const registered = await json(`${first.url}/api/auth/register`, {
    method: 'POST',
    body: JSON.stringify({ user: { firstName: 'Kept', lastName: 'Secrets', email: account.email }, password: account.password, confirmPassword: account.password }),
  });
  assert.is(registered.status, 201, JSON.stringify(registered.body));
  const login = await json(`${first.url}/api/auth/login`, { method: 'POST', body: JSON.stringify(account) });
  assert.is(login.status, 200);
  assert.is((await json(`${first.url}/api/user/me`, {}, login.body.token)).status, 200);
  assert.is(await first.stop(), 0);

  // A copy of the folder may have lost the mode: the next start puts it back.
  chmodSync(file, 0o644);
  const second = await startServer(env);
  const read = await second.waitForLog(secretsLine);
  assert.match(read.msg, 'tokens are signed with secrets kept in the data folder (owner-only)');
  assert.not.match(read.msg, 'generated now');
  assert.is(statSync(file).mode & 0o777, 0o600);
  assert.equal(JSON.parse(readFileSync(file, 'utf8')), kept, 'the same secrets');
  const me = await json(`${second.url}/api/user/me`, {}, login.body.token);
  assert.is(me.status, 200, 'the access token signed before the restart');
  assert.is(me.body.email, account.email);
  const refreshed = await json(`${second.url}/api/auth/refresh-token`, { method: 'POST', body: JSON.stringify({ refresh_token: login.body.refresh_token }) });
  assert.is(refreshed.status, 200, 'the refresh token signed before the restart');
  assert.is(await second.stop(), 0);
});

test('configured secrets are used as they are: nothing is kept in the data folder', async () => {
  const dataDir = await migratedDataFolder(path.join(scratch, 'configured'));
  const server = await startServer({ DATA_DIR: dataDir });
  assert.is(server.logs.filter(secretsLine).length, 0);
  assert.throws(() => statSync(path.join(dataDir, KEPT_SECRETS_FILE)), /ENOENT/);
  assert.is(await server.stop(), 0);
});

test('a damaged file of kept secrets stops the start with one sentence naming it', async () => {
  const dataDir = await migratedDataFolder(path.join(scratch, 'damaged'));
  const file = path.join(dataDir, KEPT_SECRETS_FILE);
  writeFileSync(file, '{"secret": "short"}\n', { mode: 0o600 });
  const fatal = startupFailure(await runServerToExit({ ...NO_SECRETS, DATA_DIR: dataDir }));
  const sentence = `${file} does not hold two different secrets of at least 32 characters as JSON (secret, refreshSecret): delete it to have new ones made (tokens signed with the old ones are then refused), or set JWT_SECRET and JWT_REFRESH_SECRET`;
  assert.is(fatal.msg, sentence);
  // JSON.parse's own message would quote the text around the error: a part of a secret.
  writeFileSync(file, '{"secret": 0123456789abcdef0123456789abcdef0123, "refreshSecret": 1}');
  const unparsed = await runServerToExit({ ...NO_SECRETS, DATA_DIR: dataDir });
  assert.is(startupFailure(unparsed).msg, sentence);
  assert.not.match(unparsed.stdout + unparsed.stderr, '0123456789');
});

test('production still requires configured secrets: none is generated or kept', async () => {
  const dataDir = path.join(scratch, 'production');
  const fatal = startupFailure(await runServerToExit({ ...NO_SECRETS, NODE_ENV: 'production', DATA_DIR: dataDir }));
  assert.is(fatal.msg, 'JWT_SECRET and JWT_REFRESH_SECRET must be set when NODE_ENV=production');
  assert.throws(() => statSync(path.join(dataDir, KEPT_SECRETS_FILE)), /ENOENT/);
});

test.run();
