// The limits in force, compared row by row with the limits the service promises: its tiers and
// its per-endpoint table are written below by hand, so a change to config/limits.yaml that
// drifts from the promised numbers fails here. Also: a resource's own `limits:`
// (test/fixtures/limits), a limits file with a mistake stopping start-up with its place, and
// RATE_LIMIT_SCALE / RATE_LIMIT_WINDOW_SCALE.
import { randomUUID } from 'node:crypto';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { PolicyMatcher, type EndpointPolicy, type LimitTable } from '../../engine/ratelimit/policy.js';
import { RESOURCES_DIR } from '../../app/paths.js';
import { DefinitionError } from '../../engine/resource/load.js';
import { newTenant, userWithRole, type Session } from '../helpers/accounts.js';
import { createTestApp, type TestApp } from '../helpers/app.js';
import { assertLimitHeaders, assertTooMany, countsOf, policiesOf, siblingApps } from '../helpers/ratelimit.js';

const FIXTURES = fileURLToPath(new URL('../fixtures/limits/', import.meta.url));
const GADGET_DIR = path.join(FIXTURES, 'resources');
const OVERRIDE_FILE = path.join(FIXTURES, 'override.yaml');

// The promised limits: three tiers by role (anonymous, any signed-in role, the two admin roles)
// and per-endpoint limits, each with its reason; plus `per`, whose count a request goes to
// (limits.yaml): the caller (the user of a valid token, else the client address), or the address
// always on the routes that take a password or mail one, where each account held must buy no allowance.
const PROMISED_TIERS = [
  { name: 'anonymous', roles: [], per: 'caller', requests: 100, window: 60 }, // the default tier
  { name: 'authenticated', roles: [], per: 'caller', requests: 1000, window: 60 },
  { name: 'admin', roles: ['ADMIN', 'SUPER_ADMIN'], per: 'caller', requests: 5000, window: 60 },
];
const PROMISED_ENDPOINTS = [
  { method: 'POST', path: '/api/auth/login', per: 'address', requests: 5, window: 60, reason: 'brute-force protection' },
  { method: 'POST', path: '/api/auth/register', per: 'caller', requests: 3, window: 300, reason: 'abuse prevention' },
  { method: 'POST', path: '/api/auth/reset-password', per: 'address', requests: 3, window: 300, reason: 'abuse prevention' },
  { method: 'GET', path: '/api/*', per: 'caller', requests: 1000, window: 60, reason: undefined },
  { method: 'POST', path: '/api/*', per: 'caller', requests: 100, window: 60, reason: undefined },
  { method: 'PUT', path: '/api/*', per: 'caller', requests: 100, window: 60, reason: undefined },
  { method: 'DELETE', path: '/api/*', per: 'caller', requests: 50, window: 60, reason: undefined },
  { method: 'POST', path: '/api/image-asset/upload', per: 'caller', requests: 10, window: 60, reason: 'resource intensive' },
  { method: 'GET', path: '/api/export/*', per: 'caller', requests: 5, window: 300, reason: 'CPU intensive' },
  { method: 'POST', path: '/api/import/*', per: 'caller', requests: 5, window: 300, reason: 'CPU intensive' },
];
/** Other spellings of a limited route (the aliases the API answers too) that share its count. */
const ALIASES: Record<string, string[]> = {
  '/api/auth/reset-password': ['/api/auth/request-password'],
  '/api/image-asset/upload': ['/api/image-assets/upload'],
};

let t: TestApp;
let owner: Session & { organizationId: string };
let employee: Session;
const apps = siblingApps(() => t);

test.before(async () => {
  // The project's resources only (the gadget's table is there for the apps that load it).
  t = await createTestApp({ migrationDirs: [path.join(FIXTURES, 'migrations')] });
  owner = await newTenant(t);
  employee = await userWithRole(t, owner, 'EMPLOYEE');
});
test.after.each(() => apps.closeAll());
test.after(async () => {
  await t.close();
});

/** The one row of a table that limits `method` on `path`. */
function rowFor(table: LimitTable, method: string, routePath: string): EndpointPolicy {
  const rows = table.endpoints.filter((e) => e.method === method && e.paths.includes(routePath));
  assert.is(rows.length, 1, `rows for ${method} ${routePath}: ${rows.map((r) => r.name).join(', ') || 'none'}`);
  return rows[0];
}

/** Every promised row, with `requests` and `window` as `tune` makes them, and nothing else unless named. */
function assertPromisedRows(table: LimitTable, tune: { requests: (n: number) => number; window: (n: number) => number } = { requests: (n) => n, window: (n) => n }) {
  assert.equal(
    table.tiers.map((tier) => ({ name: tier.name, roles: [...tier.roles].sort(), per: tier.per, requests: tier.requests, window: tier.windowSeconds })),
    PROMISED_TIERS.map((tier) => ({ ...tier, requests: tune.requests(tier.requests), window: tune.window(tier.window) })),
  );
  for (const promised of PROMISED_ENDPOINTS) {
    const row = rowFor(table, promised.method, promised.path);
    assert.equal(
      { method: row.method, paths: row.paths, per: row.per, requests: row.requests, window: row.windowSeconds, reason: row.reason },
      { method: promised.method, paths: [promised.path, ...(ALIASES[promised.path] ?? [])], per: promised.per, requests: tune.requests(promised.requests), window: tune.window(promised.window), reason: promised.reason },
      `${promised.method} ${promised.path}`,
    );
  }
}

test('the tiers are the promised ones: anonymous 100, authenticated 1000, admin (ADMIN, SUPER_ADMIN) 5000 per 60 s; every other role is authenticated', () => {
  const { table } = t.rateLimiting;
  assertPromisedRows(table);
  const matcher = new PolicyMatcher(table);
  assert.is(matcher.tierOf(undefined).name, 'anonymous');
  const roles = [...t.engine.roles.grants.keys()];
  assert.ok(roles.length >= 8, 'roles.yaml has its roles');
  for (const role of roles) assert.is(matcher.tierOf(role).name, ['ADMIN', 'SUPER_ADMIN'].includes(role) ? 'admin' : 'authenticated', role);
});

test('the endpoint limits are the promised table row by row, with its numbers, and there is no other', () => {
  const { table } = t.rateLimiting;
  assertPromisedRows(table);
  const unexpected = table.endpoints.filter((row) => !PROMISED_ENDPOINTS.some((promised) => promised.method === row.method && row.paths[0] === promised.path));
  assert.equal(unexpected.map((row) => row.name), []);
  assert.is(table.endpoints.length, PROMISED_ENDPOINTS.length);
});

test('PATCH is counted as PUT and HEAD as the GET it mirrors; no limit is declared for either', () => {
  const { table } = t.rateLimiting;
  assert.equal(table.sameAs, { PATCH: 'PUT', HEAD: 'GET' });
  assert.equal(table.endpoints.filter((e) => ['PATCH', 'HEAD'].includes(e.method)), []);
  const matcher = new PolicyMatcher(table);
  const names = (method: string, routePath: string) => matcher.endpointPolicies(method, routePath).map((p) => p.name).sort();
  assert.equal(names('PATCH', `/api/tags/${randomUUID()}`), ['PUT /api/*']);
  assert.equal(names('HEAD', '/api/export/x'), ['GET /api/*', 'GET /api/export/*']);
  // Which rows a few requests meet: the method's row and the endpoint's own.
  assert.equal(names('POST', '/api/auth/login/'), ['POST /api/*', 'POST /api/auth/login']);
  assert.equal(names('POST', '/api/auth/request-password'), ['POST /api/*', 'POST /api/auth/reset-password']);
  assert.equal(names('GET', '/api/export'), ['GET /api/*', 'GET /api/export/*']);
  assert.equal(names('GET', '/api/exports'), ['GET /api/*']);
  assert.equal(names('POST', '/api/import/a/b'), ['POST /api/*', 'POST /api/import/*']);
  assert.equal(names('DELETE', '/api/tags/x'), ['DELETE /api/*']);
});

test('GET of the health probes (HEAD, a trailing slash) is exempt, and nothing else', () => {
  const { table } = t.rateLimiting;
  assert.equal(table.exempt, [{ method: 'GET', paths: ['/api/health', '/api/health/live', '/api/health/ready'] }]);
  const matcher = new PolicyMatcher(table);
  for (const [method, routePath] of [['GET', '/api/health'], ['HEAD', '/api/health'], ['GET', '/api/health/'], ['GET', '/api/health/live'], ['HEAD', '/api/health/ready/']]) assert.ok(matcher.isExempt(method, routePath), `${method} ${routePath}`);
  for (const [method, routePath] of [['POST', '/api/health'], ['GET', '/api/healthz'], ['GET', '/api/health/x'], ['GET', '/api/auth/check']]) assert.not.ok(matcher.isExempt(method, routePath), `${method} ${routePath}`);
});

test('a resource\'s own limits add a row for its path and every alias, counted as one', async () => {
  const app = apps.create({ resourceDirs: [RESOURCES_DIR, GADGET_DIR] });
  const { table } = app.rateLimiting;
  assertPromisedRows(table); // untouched
  assert.is(table.endpoints.length, PROMISED_ENDPOINTS.length + 2);
  const list = rowFor(table, 'GET', '/api/gadgets');
  assert.equal(
    { name: list.name, paths: list.paths, per: list.per, requests: list.requests, window: list.windowSeconds },
    { name: 'GET /api/gadget', paths: ['/api/gadget', '/api/gadgets'], per: 'caller', requests: 3, window: 60 },
  );
  assert.ok(list.source.endsWith('gadget.yaml'), list.source);
  const upload = rowFor(table, 'POST', '/api/gadget/upload');
  assert.equal(
    { paths: upload.paths, per: upload.per, requests: upload.requests, window: upload.windowSeconds },
    { paths: ['/api/gadget/upload', '/api/gadgets/upload'], per: 'address', requests: 4, window: 30 },
  );

  // Through HTTP: both spellings draw on one count of 3.
  for (const [i, routePath] of ['/api/gadget', '/api/gadgets', '/api/gadget?take=5'].entries()) {
    const res = await app.http.get(routePath).set(owner.auth);
    assert.is(res.status, 200, routePath);
    assertLimitHeaders(res, { admin: { q: 5000, w: 60, r: 4999 - i }, 'GET /api/*': { q: 1000, w: 60, r: 999 - i }, 'GET /api/gadget': { q: 3, w: 60, r: 2 - i } });
  }
  assertTooMany(await app.http.get('/api/gadgets').set(owner.auth), 'GET /api/gadget', 60);
  assertTooMany(await app.http.get('/api/gadget/').set(owner.auth), 'GET /api/gadget', 60);
  // The row is for the path itself, not what is below it.
  const one = await app.http.get(`/api/gadget/${randomUUID()}`).set(owner.auth);
  assert.is(one.status, 404);
  assert.equal([...policiesOf(one).keys()].sort(), ['GET /api/*', 'admin']);
});

test('a resource\'s own limit replaces the limits file\'s row for the same method and path', async () => {
  // The file alone limits the upload to 10 a minute ...
  const fileOnly = apps.create({ appOptions: { limitsFile: OVERRIDE_FILE } }).rateLimiting.table;
  const declared = rowFor(fileOnly, 'POST', '/api/gadget/upload');
  assert.equal({ per: declared.per, requests: declared.requests, window: declared.windowSeconds, source: declared.source }, { per: 'caller', requests: 10, window: 60, source: OVERRIDE_FILE });

  // ... the gadget's definition says 4 per 30 s per address, for both its spellings, and wins.
  const app = apps.create({ resourceDirs: [RESOURCES_DIR, GADGET_DIR], appOptions: { limitsFile: OVERRIDE_FILE } });
  const { table } = app.rateLimiting;
  const upload = rowFor(table, 'POST', '/api/gadget/upload');
  assert.equal(
    { name: upload.name, paths: upload.paths, per: upload.per, requests: upload.requests, window: upload.windowSeconds },
    { name: 'POST /api/gadget/upload', paths: ['/api/gadget/upload', '/api/gadgets/upload'], per: 'address', requests: 4, window: 30 },
  );
  assert.ok(upload.source.endsWith('gadget.yaml'), upload.source);
  assert.is(rowFor(table, 'POST', '/api/gadgets/upload'), upload);
  assert.equal(table.endpoints.map((e) => e.name).sort(), ['GET /api/gadget', 'POST /api/*', 'POST /api/gadget/upload']);

  // Per address: two users and no token from one address draw on one count of 4.
  for (const [i, auth] of [owner.auth, employee.auth, {}, owner.auth].entries()) {
    const res = await app.http.post(i % 2 ? '/api/gadgets/upload' : '/api/gadget/upload').set(auth).send({});
    // Counted, then refused: without a token by the authentication, with one by the router (/api/gadget/:id takes no POST).
    assert.is(res.status, Object.keys(auth).length ? 405 : 401);
    assert.equal(policiesOf(res).get('POST /api/gadget/upload'), { q: 4, w: 30 });
    assert.is(countsOf(res).get('POST /api/gadget/upload')?.r, 3 - i);
  }
  for (const auth of [employee.auth, owner.auth, {}]) assertTooMany(await app.http.post('/api/gadgets/upload').set(auth).send({}), 'POST /api/gadget/upload', 30);
});

test('a limits file with a mistake stops start-up, pointing at the mistake', () => {
  const cases: Array<[file: string, place: string, fault: RegExp]> = [
    ['unknown-role.yaml', ':10:20 tiers.2.roles.1: ', /"OVERLORD" is not a role of roles\.yaml/],
    ['no-anonymous.yaml', ':3:3 tiers: ', /a tier named "anonymous" is required/],
    ['patch-endpoint.yaml', ':14:13 endpoints.1.method: ', /PATCH is counted as PUT \(sameAs\); limit PUT/],
    ['bad-path.yaml', ':11:11 endpoints.0.path: ', /must match pattern/],
    ['bad-per.yaml', ':12:10 endpoints.0.per: ', /must be one of: caller, address/],
    ['bad-anonymous.yaml', ':11:1 anonymous: ', /is not a known property/],
  ];
  for (const [name, place, fault] of cases) {
    const file = path.join(FIXTURES, 'bad', name);
    let error: unknown;
    try {
      apps.create({ appOptions: { limitsFile: file } });
    } catch (err) {
      error = err;
    }
    assert.instance(error, DefinitionError, `${name} is refused`);
    assert.ok((error as Error).message.startsWith('Invalid rate limits:\n'), (error as Error).message);
    const { problems } = error as DefinitionError;
    assert.is(problems.length, 1, problems.join('\n'));
    assert.ok(problems[0].startsWith(`${file}${place}`), `${problems[0]} points at ${place}`);
    assert.match(problems[0], fault);
  }
});

test('RATE_LIMIT_SCALE multiplies every limit\'s requests (rounded, at least 1); RATE_LIMIT_WINDOW_SCALE every window', async () => {
  const scaled = (env: Record<string, string>) => apps.create({ env }).rateLimiting.table;
  for (const scale of [0.5, 0.05, 0.001, 3]) {
    assertPromisedRows(scaled({ RATE_LIMIT_SCALE: String(scale) }), { requests: (n) => Math.max(1, Math.round(n * scale)), window: (n) => n });
  }
  assertPromisedRows(scaled({ RATE_LIMIT_WINDOW_SCALE: '0.5' }), { requests: (n) => n, window: (n) => n / 2 });
  // Spot checks of the rounding: 5 × 0.5 = 2.5 → 3, 3 × 0.5 = 1.5 → 2, 5 × 0.001 → 1.
  assert.is(rowFor(scaled({ RATE_LIMIT_SCALE: '0.5' }), 'POST', '/api/auth/login').requests, 3);
  assert.is(rowFor(scaled({ RATE_LIMIT_SCALE: '0.5' }), 'POST', '/api/auth/register').requests, 2);
  assert.is(rowFor(scaled({ RATE_LIMIT_SCALE: '0.001' }), 'POST', '/api/auth/login').requests, 1);

  // And the scaled numbers are the ones enforced and reported.
  const app = apps.create({ env: { RATE_LIMIT_SCALE: '0.5' } });
  const res = await app.http.get('/api/auth/authenticated');
  assertLimitHeaders(res, { anonymous: { q: 50, w: 60, r: 49 }, 'GET /api/*': { q: 500, w: 60, r: 499 } });
});

test.run();
