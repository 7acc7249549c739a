// loadConfig: the default of every variable, and a message naming the variable for every bad value.
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { ConfigError, loadConfig } from '../engine/config.js';

const SECRET = 'a'.repeat(32);
const REFRESH = 'b'.repeat(32);
const scratch = mkdtempSync(path.join(tmpdir(), 'config-test-'));
test.after(() => rmSync(scratch, { recursive: true, force: true }));

/** The ConfigError loadConfig throws for this environment (fails the test if it throws none). */
function refusal(env: Record<string, string>): string {
  try {
    loadConfig(env);
  } catch (err) {
    assert.instance(err, ConfigError);
    return (err as Error).message;
  }
  assert.unreachable(`loadConfig accepted ${JSON.stringify(env)}`);
  return '';
}

test('an empty environment gives the documented defaults', () => {
  const config = loadConfig({});
  assert.is(config.env, 'development');
  assert.is(config.port, 3000);
  assert.is(config.host, '0.0.0.0');
  assert.is(config.databaseUrl, undefined);
  assert.is(config.databaseSchema, undefined);
  assert.is(config.dataDir, path.resolve('data'), 'DATA_DIR defaults to ./data of the working directory');
  assert.is(config.jwt.expiresIn, 86_400);
  assert.is(config.jwt.refreshExpiresIn, 604_800);
  assert.is(config.bodyLimit, 1024 * 1024);
  assert.is(config.healthTimeoutMs, 2000);
  assert.equal(config.extraResourceDirs, []);
});

test('without secrets outside production, distinct secrets are generated per process and flagged', () => {
  const a = loadConfig({});
  const b = loadConfig({});
  assert.ok(a.jwt.generated);
  assert.ok(a.jwt.secret.length >= 32 && a.jwt.refreshSecret.length >= 32);
  assert.is.not(a.jwt.secret, a.jwt.refreshSecret);
  assert.is.not(a.jwt.secret, b.jwt.secret, 'each process makes its own');
  // Only one of the two set still means generated secrets (the other one is made up).
  assert.ok(loadConfig({ JWT_SECRET: SECRET }).jwt.generated);
});

test('every variable is read', () => {
  const extra = mkdtempSync(path.join(scratch, 'extra-'));
  const other = mkdtempSync(path.join(scratch, 'other-'));
  const config = loadConfig({
    NODE_ENV: 'production',
    PORT: '8080',
    HOST: '127.0.0.1',
    DATABASE_URL: 'postgresql://app:pw@db.internal:5433/work',
    DATABASE_SCHEMA: 'tenant_data',
    DATA_DIR: 'var/db',
    JWT_SECRET: SECRET,
    JWT_REFRESH_SECRET: REFRESH,
    JWT_EXPIRES_IN: '900',
    JWT_REFRESH_EXPIRES_IN: '1209600',
    BODY_LIMIT: '2048',
    HEALTH_TIMEOUT_MS: '150',
    EXTRA_RESOURCES_DIR: [extra, other].join(path.delimiter),
  });
  assert.is(config.env, 'production');
  assert.is(config.port, 8080);
  assert.is(config.host, '127.0.0.1');
  assert.is(config.databaseUrl, 'postgresql://app:pw@db.internal:5433/work');
  assert.is(config.databaseSchema, 'tenant_data');
  assert.is(config.dataDir, path.resolve('var/db'));
  assert.equal(config.jwt, { secret: SECRET, refreshSecret: REFRESH, generated: false, expiresIn: 900, refreshExpiresIn: 1_209_600 });
  assert.is(config.bodyLimit, 2048);
  assert.is(config.healthTimeoutMs, 150);
  assert.equal(config.extraResourceDirs, [extra, other]);
});

test('PORT=0 asks the system for a free port; an absolute DATA_DIR is kept as it is', () => {
  assert.is(loadConfig({ PORT: '0' }).port, 0);
  assert.is(loadConfig({ DATA_DIR: scratch }).dataDir, scratch);
});

test('empty values count as unset', () => {
  const config = loadConfig({ PORT: '', DATABASE_URL: '', DATA_DIR: '', HEALTH_TIMEOUT_MS: '', EXTRA_RESOURCES_DIR: '' });
  assert.is(config.port, 3000);
  assert.is(config.databaseUrl, undefined);
  assert.is(config.dataDir, path.resolve('data'));
  assert.is(config.healthTimeoutMs, 2000);
  assert.equal(config.extraResourceDirs, []);
});

test('whole-number settings refuse anything else, naming the variable and the value', () => {
  for (const [name, value] of [
    ['PORT', 'abc'],
    ['PORT', '65536'],
    ['PORT', '-1'],
    ['PORT', '80.5'],
    ['PORT', ' 80'],
    ['JWT_EXPIRES_IN', '1d'],
    ['JWT_EXPIRES_IN', '0'],
    ['JWT_REFRESH_EXPIRES_IN', '7d'],
    ['BODY_LIMIT', '1mb'],
    ['BODY_LIMIT', '0'],
    ['HEALTH_TIMEOUT_MS', '0'],
    ['HEALTH_TIMEOUT_MS', 'soon'],
  ]) {
    const message = refusal({ [name]: value });
    assert.ok(message.startsWith(`${name} must be a whole number`), message);
    assert.ok(message.includes(`"${value}"`), message);
  }
});

test('DATABASE_URL must be a postgres URL', () => {
  assert.match(refusal({ DATABASE_URL: 'not a url' }), /^DATABASE_URL must be a URL/);
  assert.match(refusal({ DATABASE_URL: 'mysql://root@localhost/db' }), /^DATABASE_URL must use postgres:\/\/ or postgresql:\/\/, got "mysql:"/);
  assert.is(loadConfig({ DATABASE_URL: 'postgres://u@h/d' }).databaseUrl, 'postgres://u@h/d');
});

test('DATABASE_SCHEMA needs DATABASE_URL and a plain lower-case SQL name', () => {
  assert.match(refusal({ DATABASE_SCHEMA: 'app' }), /^DATABASE_SCHEMA applies to PostgreSQL only/);
  for (const bad of ['App', 'my-schema', '1st', 'a;drop', 'x'.repeat(64)]) {
    assert.match(refusal({ DATABASE_URL: 'postgres://u@h/d', DATABASE_SCHEMA: bad }), /^DATABASE_SCHEMA must be a lower-case SQL name/);
  }
});

test('production refuses to start without both JWT secrets', () => {
  for (const env of [{}, { JWT_SECRET: SECRET }, { JWT_REFRESH_SECRET: REFRESH }] as Array<Record<string, string>>) {
    const message = refusal({ NODE_ENV: 'production', ...env });
    assert.ok(message.includes('JWT_SECRET') && message.includes('JWT_REFRESH_SECRET') && message.includes('NODE_ENV=production'), message);
  }
});

test('JWT secrets must be long enough and differ from each other', () => {
  assert.is(refusal({ JWT_SECRET: 'short', JWT_REFRESH_SECRET: REFRESH }), 'JWT_SECRET must be at least 32 characters long');
  assert.is(refusal({ JWT_SECRET: SECRET, JWT_REFRESH_SECRET: 'short' }), 'JWT_REFRESH_SECRET must be at least 32 characters long');
  assert.is(refusal({ JWT_SECRET: SECRET, JWT_REFRESH_SECRET: SECRET }), 'JWT_SECRET and JWT_REFRESH_SECRET must differ');
});


test('EXTRA_RESOURCES_DIR names existing folders only', () => {
  const file = path.join(scratch, 'a-file.yaml');
  writeFileSync(file, 'name: x\n');
  assert.is(refusal({ EXTRA_RESOURCES_DIR: path.join(scratch, 'missing') }), `EXTRA_RESOURCES_DIR: "${path.join(scratch, 'missing')}" is not a folder`);
  assert.is(refusal({ EXTRA_RESOURCES_DIR: file }), `EXTRA_RESOURCES_DIR: "${file}" is not a folder`);
});

test('mail, client and API addresses: defaults, and a bad value names its variable', () => {
  const config = loadConfig({ PORT: '4100' });
  assert.equal(config.mail, { smtpUrl: undefined, from: 'Workforce <no-reply@localhost>' });
  assert.is(config.clientBaseUrl, 'http://localhost:4200');
  assert.is(config.apiBaseUrl, 'http://localhost:4100');
  const set = loadConfig({ SMTP_URL: 'smtps://u:p@mail.example.com:465', MAIL_FROM: 'Ops <ops@example.com>', CLIENT_BASE_URL: 'https://app.example.com/', API_BASE_URL: 'https://api.example.com' });
  assert.equal(set.mail, { smtpUrl: 'smtps://u:p@mail.example.com:465', from: 'Ops <ops@example.com>' });
  assert.is(set.clientBaseUrl, 'https://app.example.com');
  assert.is(set.apiBaseUrl, 'https://api.example.com');
  assert.is(refusal({ SMTP_URL: 'http://mail.example.com' }), 'SMTP_URL must use smtp:// or smtps://, got "http:"');
  assert.is(refusal({ SMTP_URL: 'not a url' }), 'SMTP_URL must be a URL such as smtp://user:pass@host:587 or smtps://host:465');
  assert.is(refusal({ CLIENT_BASE_URL: 'ftp://x' }), 'CLIENT_BASE_URL must be an http(s) URL, got "ftp://x"');
  assert.is(refusal({ API_BASE_URL: 'nope' }), 'API_BASE_URL must be an http(s) URL, got "nope"');
});

test('social providers: off without credentials, both credentials or neither, endpoints overridable', () => {
  const off = loadConfig({});
  assert.equal(Object.values(off.social), [undefined, undefined, undefined, undefined]);
  assert.is(refusal({ GITHUB_CLIENT_ID: 'id' }), 'GITHUB_CLIENT_ID and GITHUB_CLIENT_SECRET go together: set both, or neither to switch github login off');
  const on = loadConfig({ PORT: '4100', GOOGLE_CLIENT_ID: 'gid', GOOGLE_CLIENT_SECRET: 'gsecret', GOOGLE_TOKEN_URL: 'http://127.0.0.1:9/token' });
  assert.equal(on.social.google, {
    clientId: 'gid',
    clientSecret: 'gsecret',
    authorizeUrl: 'https://accounts.google.com/o/oauth2/v2/auth',
    tokenUrl: 'http://127.0.0.1:9/token',
    profileUrl: 'https://openidconnect.googleapis.com/v1/userinfo',
    callbackUrl: 'http://localhost:4100/api/auth/google/callback',
  });
  assert.is(on.social.github, undefined);
  assert.is(refusal({ FACEBOOK_CLIENT_ID: 'a', FACEBOOK_CLIENT_SECRET: 'b', FACEBOOK_PROFILE_URL: 'graph' }), 'FACEBOOK_PROFILE_URL must be an http(s) URL, got "graph"');
});

test.run();
