// loadConfig: the default of every variable, and a message naming the variable for every bad value.
import { existsSync, mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { ConfigError, loadConfig } from '../../engine/config/config.js';
import { KEPT_SECRETS_FILE, keepGeneratedSecrets } from '../../engine/config/kept-secrets.js';

const SECRET = 'a'.repeat(32);
const REFRESH = 'b'.repeat(32);
/** Secrets as a deployment makes them (openssl rand -hex 32): what production accepts. */
const STRONG = '3f9c0a7e5b21d84c6e0f97a3b5d2c18e4a6f0b9d7c3e2a15f8b4d6c0e9a7b3f1';
const STRONG_REFRESH = '8e2d4b6a0c9f7e3d1b5a8c6e4f2d0b9a7c5e3f1d8b6a4c2e0f9d7b5a3c1e8f6d';
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

test('generated secrets are kept in DATA_DIR on the embedded database: made once, read after, only the missing ones', () => {
  const dataDir = path.join(scratch, 'kept');
  const file = path.join(dataDir, KEPT_SECRETS_FILE);
  const first = keepGeneratedSecrets(loadConfig({ DATA_DIR: dataDir }));
  assert.is(first.kept, 'made');
  assert.is(first.file, file);
  assert.is(statSync(file).mode & 0o777, 0o600);
  const kept = JSON.parse(readFileSync(file, 'utf8'));
  assert.equal([first.config.jwt.secret, first.config.jwt.refreshSecret, first.config.jwt.generated], [kept.secret, kept.refreshSecret, false]);
  const second = keepGeneratedSecrets(loadConfig({ DATA_DIR: dataDir }));
  assert.equal([second.kept, second.config.jwt.secret, second.config.jwt.refreshSecret], ['read', kept.secret, kept.refreshSecret]);
  // A configured secret stays; only the missing one comes from the file.
  const half = keepGeneratedSecrets(loadConfig({ DATA_DIR: dataDir, JWT_SECRET: SECRET })).config.jwt;
  assert.equal([half.secret, half.refreshSecret], [SECRET, kept.refreshSecret]);
  // Both configured, PostgreSQL, or production: nothing is read or made.
  const elsewhere = path.join(scratch, 'not-kept');
  for (const env of [{ JWT_SECRET: SECRET, JWT_REFRESH_SECRET: REFRESH }, { DATABASE_URL: 'postgres://user@host:5432/db' }, { NODE_ENV: 'production', JWT_SECRET: STRONG, JWT_REFRESH_SECRET: STRONG_REFRESH }]) {
    const config = loadConfig({ DATA_DIR: elsewhere, ...env });
    assert.equal(keepGeneratedSecrets(config), { config });
  }
  assert.not.ok(existsSync(elsewhere));
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
    JWT_SECRET: STRONG,
    JWT_REFRESH_SECRET: STRONG_REFRESH,
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
  assert.equal(config.jwt, {
    secret: STRONG,
    refreshSecret: STRONG_REFRESH,
    generated: false,
    secretGenerated: false,
    refreshSecretGenerated: false,
    previousSecret: undefined,
    previousRefreshSecret: undefined,
    expiresIn: 900,
    refreshExpiresIn: 1_209_600,
  });
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

test('DATABASE_POOLER: auto by default; transaction or none need DATABASE_URL; nothing else', () => {
  assert.is(loadConfig({}).databasePooler, 'auto');
  assert.is(loadConfig({ DATABASE_URL: 'postgres://u@h/d', DATABASE_POOLER: 'transaction' }).databasePooler, 'transaction');
  assert.match(refusal({ DATABASE_POOLER: 'none' }), /^DATABASE_POOLER applies to PostgreSQL only/);
  assert.match(refusal({ DATABASE_URL: 'postgres://u@h/d', DATABASE_POOLER: 'session' }), /^DATABASE_POOLER must be auto, transaction or none, got "session"/);
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


test('production refuses placeholder secrets: words of documentation or tests, too few different characters', () => {
  const cases: Array<[Record<string, string>, string]> = [
    [{ JWT_SECRET: SECRET, JWT_REFRESH_SECRET: STRONG_REFRESH }, 'JWT_SECRET has fewer than 10 different characters'],
    [{ JWT_SECRET: STRONG, JWT_REFRESH_SECRET: 'change-me-to-a-long-random-value-0123456789' }, 'JWT_REFRESH_SECRET contains "change-me"'],
    [{ JWT_SECRET: 'test-access-secret-0123456789abcdef0123456789', JWT_REFRESH_SECRET: STRONG_REFRESH }, 'JWT_SECRET contains "test"'],
    [{ JWT_SECRET: STRONG, JWT_REFRESH_SECRET: STRONG_REFRESH, JWT_SECRET_PREVIOUS: 'an-example-value-for-the-readme-0123456789' }, 'JWT_SECRET_PREVIOUS contains "example"'],
  ];
  for (const [env, start] of cases) {
    const message = refusal({ NODE_ENV: 'production', ...env });
    assert.ok(message.startsWith(start), message);
    assert.ok(message.includes('openssl rand -hex 32'), message);
  }
  // The same values are fine for development and tests, and strong ones are fine everywhere.
  assert.is(loadConfig({ JWT_SECRET: SECRET, JWT_REFRESH_SECRET: REFRESH }).jwt.secret, SECRET);
  assert.is(loadConfig({ NODE_ENV: 'production', JWT_SECRET: STRONG, JWT_REFRESH_SECRET: STRONG_REFRESH }).jwt.secret, STRONG);
  // A random secret may hold a word's letters among others (base64 of random bytes, say): only a word standing apart is a placeholder.
  const random = 'q7Rk2TestZp9mXv4DefaultWn8sLc3Secrety5Hb';
  assert.is(loadConfig({ NODE_ENV: 'production', JWT_SECRET: random, JWT_REFRESH_SECRET: STRONG_REFRESH }).jwt.secret, random);
});

test('rotation: previous secrets are read, need the current ones, and differ from every other', () => {
  const rotated = loadConfig({ JWT_SECRET: SECRET, JWT_REFRESH_SECRET: REFRESH, JWT_SECRET_PREVIOUS: STRONG, JWT_REFRESH_SECRET_PREVIOUS: STRONG_REFRESH });
  assert.is(rotated.jwt.previousSecret, STRONG);
  assert.is(rotated.jwt.previousRefreshSecret, STRONG_REFRESH);
  assert.is(loadConfig({ JWT_SECRET: SECRET, JWT_REFRESH_SECRET: REFRESH, JWT_SECRET_PREVIOUS: '' }).jwt.previousSecret, undefined);
  assert.match(refusal({ JWT_SECRET_PREVIOUS: STRONG }), /^JWT_SECRET_PREVIOUS and JWT_REFRESH_SECRET_PREVIOUS need the current/);
  assert.is(refusal({ JWT_SECRET: SECRET, JWT_REFRESH_SECRET: REFRESH, JWT_SECRET_PREVIOUS: 'short' }), 'JWT_SECRET_PREVIOUS must be at least 32 characters long');
  assert.match(refusal({ JWT_SECRET: SECRET, JWT_REFRESH_SECRET: REFRESH, JWT_SECRET_PREVIOUS: SECRET }), /^A _PREVIOUS secret must differ from the current one/);
  assert.match(refusal({ JWT_SECRET: SECRET, JWT_REFRESH_SECRET: REFRESH, JWT_SECRET_PREVIOUS: REFRESH }), /^The access secrets .* must all differ$/);
  assert.match(refusal({ JWT_SECRET: SECRET, JWT_REFRESH_SECRET: REFRESH, JWT_REFRESH_SECRET_PREVIOUS: SECRET }), /^The access secrets .* must all differ$/);
});

test('hardening settings: defaults, values and refusals', () => {
  const defaults = loadConfig({});
  assert.is(defaults.databaseTimeoutMs, 10_000);
  assert.is(defaults.requestTimeoutMs, 30_000);
  assert.is(defaults.shutdownGraceMs, 10_000);
  assert.equal(defaults.json, { maxDepth: 32, maxArray: 1000 });
  assert.equal(defaults.corsOrigins, ['http://localhost:4200'], 'the web client of CLIENT_BASE_URL by default');
  assert.is(defaults.logLevel, 'info');
  assert.is(loadConfig({ NODE_ENV: 'test' }).logLevel, 'warn');
  const set = loadConfig({
    DATABASE_TIMEOUT_MS: '2500',
    REQUEST_TIMEOUT_MS: '5000',
    SHUTDOWN_GRACE_MS: '0',
    JSON_MAX_DEPTH: '8',
    JSON_MAX_ARRAY: '20',
    CORS_ORIGINS: 'https://app.example.com, http://localhost:4200/',
    LOG_LEVEL: 'debug',
    CLIENT_BASE_URL: 'https://client.example.com/app',
  });
  assert.is(set.databaseTimeoutMs, 2500);
  assert.is(set.requestTimeoutMs, 5000);
  assert.is(set.shutdownGraceMs, 0);
  assert.equal(set.json, { maxDepth: 8, maxArray: 20 });
  assert.equal(set.corsOrigins, ['https://app.example.com', 'http://localhost:4200']);
  assert.is(set.logLevel, 'debug');
  assert.equal(loadConfig({ CLIENT_BASE_URL: 'https://client.example.com:8443/app/' }).corsOrigins, ['https://client.example.com:8443']);
  for (const bad of ['*', 'app.example.com', 'https://app.example.com/path', 'ftp://files.example.com']) {
    assert.match(refusal({ CORS_ORIGINS: bad }), /^CORS_ORIGINS must list origins such as https:\/\/app\.example\.com/, bad);
  }
  assert.is(refusal({ LOG_LEVEL: 'verbose' }), 'LOG_LEVEL must be one of fatal, error, warn, info, debug, trace, silent, got "verbose"');
  for (const [name, value] of [['DATABASE_TIMEOUT_MS', '50'], ['REQUEST_TIMEOUT_MS', '999'], ['JSON_MAX_DEPTH', '1'], ['JSON_MAX_ARRAY', '0'], ['SHUTDOWN_GRACE_MS', '-1']]) {
    assert.ok(refusal({ [name]: value }).startsWith(`${name} must be a whole number`), name);
  }
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

test.run();
