// The rate-limit settings of loadConfig: their defaults, what each accepts,
// and a message naming the variable for every value it refuses, so a typo stops start-up instead
// of leaving the service unlimited or limited by a number nobody meant.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { ConfigError, loadConfig } from '../../engine/config/config.js';

const rateLimitsOf = (env: Record<string, string>) => loadConfig(env).rateLimits;

/** The message of the ConfigError loadConfig throws for this environment (fails if it throws none). */
function refusal(env: Record<string, string>): string {
  try {
    loadConfig(env);
  } catch (err) {
    assert.instance(err, ConfigError, `${JSON.stringify(env)} throws a ConfigError`);
    return (err as Error).message;
  }
  assert.unreachable(`loadConfig accepted ${JSON.stringify(env)}`);
  return '';
}

function assertRefused(name: string, values: string[], said?: RegExp) {
  for (const value of values) {
    const message = refusal({ [name]: value });
    assert.ok(message.startsWith(`${name} `), `the message names ${name}: ${message}`);
    if (said) assert.match(message, said);
  }
}

test('defaults: limits on, scale 1, window scale 1, at most 250000 keys, prefix "ratelimit", a 500 ms store wait, memory store, no trusted proxy', () => {
  const config = loadConfig({});
  assert.equal(config.rateLimits, { enabled: true, scale: 1, windowScale: 1, maxKeys: 250_000, prefix: 'ratelimit', storeTimeoutMs: 500 });
  assert.is(config.redisUrl, undefined);
  assert.equal(config.trustedProxies, []);
  // An empty value is an unset one.
  assert.equal(rateLimitsOf({ RATE_LIMITS: '', RATE_LIMIT_SCALE: '', RATE_LIMIT_WINDOW_SCALE: '', RATE_LIMIT_MAX_KEYS: '', RATE_LIMIT_PREFIX: '', RATE_LIMIT_STORE_TIMEOUT_MS: '' }), config.rateLimits);
});

test('RATE_LIMITS: on or off, nothing else', () => {
  assert.is(rateLimitsOf({ RATE_LIMITS: 'off' }).enabled, false);
  assert.is(rateLimitsOf({ RATE_LIMITS: 'on' }).enabled, true);
  assertRefused('RATE_LIMITS', ['yes', 'true', '1', 'disabled', ' off'], /on or off/);
});

test('RATE_LIMIT_SCALE and RATE_LIMIT_WINDOW_SCALE: positive decimal numbers', () => {
  for (const name of ['RATE_LIMIT_SCALE', 'RATE_LIMIT_WINDOW_SCALE'] as const) {
    const key = name === 'RATE_LIMIT_SCALE' ? 'scale' : 'windowScale';
    assert.is(rateLimitsOf({ [name]: '0.5' })[key], 0.5);
    assert.is(rateLimitsOf({ [name]: '10' })[key], 10);
    assert.is(rateLimitsOf({ [name]: '0.02' })[key], 0.02);
    assertRefused(name, ['0', '0.0', '-1', 'abc', '1e3', 'Infinity', 'NaN', '1,5', '2x'], /positive number/);
  }
});

test('RATE_LIMIT_STORE_TIMEOUT_MS: whole milliseconds from 10 to 60000', () => {
  assert.is(rateLimitsOf({ RATE_LIMIT_STORE_TIMEOUT_MS: '10' }).storeTimeoutMs, 10);
  assert.is(rateLimitsOf({ RATE_LIMIT_STORE_TIMEOUT_MS: '60000' }).storeTimeoutMs, 60_000);
  assertRefused('RATE_LIMIT_STORE_TIMEOUT_MS', ['9', '0', '60001', '-5', '1e3', '500.5', 'soon'], /whole number from 10 to 60000/);
});

test('RATE_LIMIT_MAX_KEYS: a whole number of at least 1000', () => {
  assert.is(rateLimitsOf({ RATE_LIMIT_MAX_KEYS: '1000' }).maxKeys, 1000);
  assert.is(rateLimitsOf({ RATE_LIMIT_MAX_KEYS: '5000000' }).maxKeys, 5_000_000);
  assertRefused('RATE_LIMIT_MAX_KEYS', ['999', '0', '-5', '1e6', '2500.5', 'many'], /whole number from 1000/);
});

test('RATE_LIMIT_PREFIX: 1 to 64 letters, digits, _ : . or -', () => {
  assert.is(rateLimitsOf({ RATE_LIMIT_PREFIX: 'staging:api-2.limits_v1' }).prefix, 'staging:api-2.limits_v1');
  assert.is(rateLimitsOf({ RATE_LIMIT_PREFIX: 'x'.repeat(64) }).prefix, 'x'.repeat(64));
  assertRefused('RATE_LIMIT_PREFIX', ['has space', 'x'.repeat(65), 'a{b}', 'key*', 'prefix/'], /1 to 64/);
});

test('REDIS_URL: a redis:// or rediss:// URL', () => {
  assert.is(loadConfig({ REDIS_URL: 'redis://127.0.0.1:6379' }).redisUrl, 'redis://127.0.0.1:6379');
  assert.is(loadConfig({ REDIS_URL: 'rediss://user:secret@cache.internal:6380/2' }).redisUrl, 'rediss://user:secret@cache.internal:6380/2');
  assertRefused('REDIS_URL', ['http://127.0.0.1:6379', 'postgres://127.0.0.1/db'], /redis:\/\/ or rediss:\/\//);
  assertRefused('REDIS_URL', ['127.0.0.1:6379x', 'not a url'], /must be a URL/);
});

test('TRUST_PROXY: a comma list of addresses, CIDR ranges or proxy-addr names', () => {
  assert.equal(loadConfig({ TRUST_PROXY: 'loopback' }).trustedProxies, ['loopback']);
  assert.equal(loadConfig({ TRUST_PROXY: ' loopback, 10.0.0.0/8 ,192.168.1.1,fd00::/8,uniquelocal ' }).trustedProxies, ['loopback', '10.0.0.0/8', '192.168.1.1', 'fd00::/8', 'uniquelocal']);
  assertRefused('TRUST_PROXY', ['bogus', 'loopback, 10.0.0.0/33', '999.1.1.1', 'everyone'], /IP addresses, CIDR ranges, loopback/);
});

test.run();
