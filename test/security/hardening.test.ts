// Hardening, through HTTP: security headers on every answer (errors too), CORS from the
// allowlist only, X-Request-Id echoed and in the log lines, structured logs with credentials
// redacted, and JSON bodies bounded in depth and array length.
import { randomBytes } from 'node:crypto';
import { Writable } from 'node:stream';
import { gzipSync } from 'node:zlib';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { createLogger } from '../../engine/log/log.js';
import type { Module } from '../../engine/module.js';
import { modules as projectModules } from '../../resources/modules.js';
import { newTenant, PASSWORD, uniqueEmail, type Session } from '../helpers/accounts.js';
import { createTestApp, type TestApp } from '../helpers/app.js';
import { assertError } from '../helpers/error-envelope.js';
import { head, RawConnection } from '../helpers/raw-connection.js';
import { listen } from '../helpers/upload.js';
import { waitFor } from '../helpers/wait.js';

const ALLOWED = 'https://app.example.com';

/** Every log line the app writes, parsed. */
const lines: Array<Record<string, any>> = [];
/** Who waits for the request line of a request id. */
const awaitedLines = new Map<string, (line: Record<string, any>) => void>();
const sink = new Writable({
  write(chunk, _encoding, done) {
    for (const line of String(chunk).split('\n').filter(Boolean)) {
      const parsed = JSON.parse(line);
      lines.push(parsed);
      if (parsed.msg === 'request') awaitedLines.get(parsed.reqId)?.(parsed);
    }
    done();
  },
});

/** The request line of `reqId`, once written; rejects when none comes within `timeoutMs`. */
function requestLine(reqId: string, timeoutMs = 10_000): Promise<Record<string, any>> {
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`no request line for ${reqId} within ${timeoutMs} ms`)), timeoutMs);
    awaitedLines.set(reqId, (line) => {
      clearTimeout(timer);
      awaitedLines.delete(reqId);
      resolve(line);
    });
  });
}

/** A route that fails like a bug would, to see what a 500 logs. */
const failing: Module = {
  name: 'failing',
  routes: () => [
    {
      method: 'GET',
      path: '/api/test-failure',
      handler: () => {
        throw new Error('an unexpected failure');
      },
      docs: false,
    },
    // What the pool throws when no connection came in time: the database is away, not a bug.
    {
      method: 'GET',
      path: '/api/test-unavailable',
      handler: () => {
        throw Object.assign(new Error('Knex: Timeout acquiring a connection'), { name: 'KnexTimeoutError' });
      },
      docs: false,
    },
  ],
};

let t: TestApp;
let admin: Session & { organizationId: string };

test.before(async () => {
  t = await createTestApp({
    env: { CORS_ORIGINS: `${ALLOWED},http://localhost:4200`, LOG_LEVEL: 'info', JSON_MAX_DEPTH: '6', JSON_MAX_ARRAY: '5' },
    modules: [...projectModules, failing],
    appOptions: { logger: createLogger('info', sink), logError: undefined },
  });
  admin = await newTenant(t);
});
test.after(async () => {
  await t?.close();
});

const header = (res: { headers: Record<string, any> }, name: string) => res.headers[name.toLowerCase()] as string | undefined;

/** The headers that protect every answer, a JSON one as much as a page. */
function assertSecurityHeaders(res: { headers: Record<string, any> }, what: string) {
  assert.is(header(res, 'X-Content-Type-Options'), 'nosniff', what);
  assert.is(header(res, 'X-Frame-Options'), 'DENY', what);
  assert.is(header(res, 'Referrer-Policy'), 'no-referrer', what);
  assert.is(header(res, 'Cross-Origin-Resource-Policy'), 'same-site', what);
  assert.match(header(res, 'Strict-Transport-Security') ?? '', /^max-age=\d+/, what);
  assert.is(header(res, 'X-Powered-By'), undefined, what);
}

/** Headers that only ever govern a page: on the docs page, not on /api answers. */
const PAGE_ONLY = {
  'Cross-Origin-Opener-Policy': 'same-origin',
  'X-XSS-Protection': '0',
  'Origin-Agent-Cluster': '?1',
  'X-DNS-Prefetch-Control': 'off',
  'X-Download-Options': 'noopen',
  'X-Permitted-Cross-Domain-Policies': 'none',
};

test('security headers on answers, errors and the docs; /api answers are never cached', async () => {
  const ok = await t.http.get('/api/employee').set(admin.auth);
  assert.is(ok.status, 200);
  const answers = [
    ['list', ok],
    ['401', await t.http.get('/api/employee')],
    ['404', await t.http.get('/api/no-such-route').set(admin.auth)],
    ['400', await t.http.post('/api/tags').set(admin.auth).send({ nope: 1 })],
    ['500', await t.http.get('/api/test-failure').set(admin.auth)],
    ['health', await t.http.get('/api/health')],
  ] as const;
  for (const [what, res] of answers) {
    assertSecurityHeaders(res, what);
    assert.is(header(res, 'Content-Security-Policy'), "default-src 'none';frame-ancestors 'none'", what);
    assert.is(header(res, 'Cache-Control'), 'no-store', what);
    for (const name of Object.keys(PAGE_ONLY)) assert.is(header(res, name), undefined, `${what}: no ${name}`);
  }
  // The docs page keeps its own policy: Swagger UI needs its inline script and styles, from this host only.
  const docs = await t.http.get('/swg');
  assert.is(docs.status, 200);
  assertSecurityHeaders(docs, 'docs');
  for (const [name, value] of Object.entries(PAGE_ONLY)) assert.is(header(docs, name), value, `docs: ${name}`);
  assert.match(header(docs, 'Content-Security-Policy') ?? '', /^default-src 'self'; script-src 'self' 'unsafe-inline'/);
  assert.is(header(docs, 'Cache-Control'), undefined);
});

test('CORS: an allowed origin may read answers and the headers clients need; any other origin gets nothing', async () => {
  const allowed = await t.http.get('/api/employee').set(admin.auth).set('Origin', ALLOWED);
  assert.is(allowed.status, 200);
  assert.is(header(allowed, 'Access-Control-Allow-Origin'), ALLOWED);
  assert.is(header(allowed, 'Access-Control-Allow-Credentials'), undefined, 'bearer tokens, no cookies: credentials are never allowed');
  const exposed = (header(allowed, 'Access-Control-Expose-Headers') ?? '').split(',');
  for (const name of ['X-Request-Id', 'ETag', 'X-Total-Exact', 'X-RateLimit-Remaining', 'Retry-After', 'Deprecation']) assert.ok(exposed.includes(name), name);
  assert.match(header(allowed, 'Vary') ?? '', /Origin/);

  // An error still tells an allowed page what went wrong.
  const refused = await t.http.get('/api/employee').set('Origin', ALLOWED);
  assertError(refused, 401);
  assert.is(header(refused, 'Access-Control-Allow-Origin'), ALLOWED);

  for (const origin of ['https://evil.example.com', 'https://app.example.com.evil.com', 'http://app.example.com', 'null']) {
    const res = await t.http.get('/api/employee').set(admin.auth).set('Origin', origin);
    assert.is(res.status, 200, 'the server answers; the browser keeps it from the page');
    assert.is(header(res, 'Access-Control-Allow-Origin'), undefined, origin);
    assert.is(header(res, 'Access-Control-Expose-Headers'), undefined, origin);
  }
  // Without Origin (a server, a CLI) nothing about CORS is said.
  assert.is(header(await t.http.get('/api/employee').set(admin.auth), 'Access-Control-Allow-Origin'), undefined);
});

test('CORS preflight: answered for an allowed origin without a token; refused origins get no permission', async () => {
  const preflight = await t.http
    .options('/api/employee')
    .set('Origin', ALLOWED)
    .set('Access-Control-Request-Method', 'POST')
    .set('Access-Control-Request-Headers', 'authorization,content-type');
  assert.is(preflight.status, 204);
  assert.is(header(preflight, 'Access-Control-Allow-Origin'), ALLOWED);
  assert.is(header(preflight, 'Access-Control-Allow-Methods'), 'GET,HEAD,PUT,POST,DELETE,PATCH');
  const allowedHeaders = (header(preflight, 'Access-Control-Allow-Headers') ?? '').toLowerCase().split(',');
  for (const name of ['authorization', 'content-type', 'tenant-id', 'organization-id', 'x-request-id', 'if-match', 'if-none-match']) assert.ok(allowedHeaders.includes(name), name);
  assert.is(header(preflight, 'Access-Control-Max-Age'), '600');

  const other = await t.http.options('/api/employee').set('Origin', 'https://evil.example.com').set('Access-Control-Request-Method', 'DELETE');
  assert.is(header(other, 'Access-Control-Allow-Origin'), undefined);
  assert.is(header(other, 'Access-Control-Allow-Methods'), undefined);
});

test('X-Request-Id: a new id for each request, a plain one given by the client kept, a hostile one replaced', async () => {
  const first = await t.http.get('/api/health');
  const second = await t.http.get('/api/health');
  const uuid = /^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/;
  assert.match(header(first, 'X-Request-Id') ?? '', uuid);
  assert.is.not(header(first, 'X-Request-Id'), header(second, 'X-Request-Id'));
  assert.is(header(await t.http.get('/api/health').set('X-Request-Id', 'lb-7f3a.2026:req_1'), 'X-Request-Id'), 'lb-7f3a.2026:req_1');
  for (const hostile of ['a b', 'x'.repeat(129), 'id"}{"level":"fatal', 'é']) {
    const res = await t.http.get('/api/health').set('X-Request-Id', hostile);
    assert.match(header(res, 'X-Request-Id') ?? '', uuid, hostile);
  }
  // Errors carry it too, so a client can quote it.
  const refused = await t.http.get('/api/employee').set('X-Request-Id', 'client-123');
  assert.is(refused.status, 401);
  assert.is(header(refused, 'X-Request-Id'), 'client-123');
});

test('the OpenAPI document lists X-Request-Id on every answer of every operation', () => {
  let answers = 0;
  for (const item of Object.values(t.openapi.paths as Record<string, Record<string, any>>)) {
    for (const op of Object.values(item)) {
      for (const [status, response] of Object.entries((op.responses ?? {}) as Record<string, any>)) {
        const resolved = response.$ref ? (t.openapi as any).components.responses[response.$ref.split('/').pop()] : response;
        assert.ok(resolved.headers?.['X-Request-Id'], `${op.operationId} ${status}`);
        answers++;
      }
    }
  }
  assert.ok(answers > 100, `${answers} answers`);
});

test('logs: one JSON line per request (id, method, path, status, caller), never the query string', async () => {
  lines.length = 0;
  const res = await t.http.get('/api/employee?where[firstName]=secret-value&take=5').set(admin.auth).set('X-Request-Id', 'trace-42');
  assert.is(res.status, 200);
  const line = lines.find((l) => l.reqId === 'trace-42');
  assert.ok(line, JSON.stringify(lines));
  assert.is(line!.msg, 'request');
  assert.is(line!.level, 'info');
  assert.match(line!.time, /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/);
  assert.is(line!.method, 'GET');
  assert.is(line!.path, '/api/employee');
  assert.is(line!.status, 200);
  assert.is(line!.userId, admin.userId);
  assert.is(line!.tenantId, admin.tenantId);
  assert.type(line!.ms, 'number');
  assert.not.ok(JSON.stringify(lines).includes('secret-value'), 'the query string stays out of the log');
});

test('logs: a streamed answer (an export) is logged once it has been sent whole', async () => {
  lines.length = 0;
  const res = await t.http.get('/api/export/tag?format=json').set(admin.auth).set('X-Request-Id', 'export-1');
  assert.is(res.status, 200);
  // The line is written when the stream ends, a moment after the client has read it.
  await waitFor(() => lines.some((l) => l.reqId === 'export-1'), 'the request line');
  const line = lines.find((l) => l.reqId === 'export-1');
  assert.is(line!.status, 200);
  assert.is(line!.incomplete, undefined);
  assert.is(lines.filter((l) => l.reqId === 'export-1').length, 1);
});

test('logs: a 500 is logged with its request id and stack; the client gets the bare envelope', async () => {
  lines.length = 0;
  const res = await t.http.get('/api/test-failure').set(admin.auth).set('X-Request-Id', 'boom-1');
  assertError(res, 500, 'Internal server error');
  const failure = lines.find((l) => l.msg === 'request failed');
  assert.ok(failure, JSON.stringify(lines));
  assert.is(failure!.level, 'error');
  assert.is(failure!.reqId, 'boom-1');
  assert.match(failure!.error, /an unexpected failure/);
  assert.is(lines.find((l) => l.msg === 'request')?.status, 500);
});

test('logs: a 503 of an unavailable database is a warning naming why, without a stack', async () => {
  lines.length = 0;
  const res = await t.http.get('/api/test-unavailable').set(admin.auth).set('X-Request-Id', 'away-1');
  assertError(res, 503, 'The database is not available');
  const warning = lines.find((l) => l.reqId === 'away-1' && l.msg !== 'request');
  assert.ok(warning, JSON.stringify(lines));
  assert.is(warning!.level, 'warn');
  assert.is(warning!.msg, 'request not served');
  assert.is(warning!.status, 503);
  assert.is(warning!.error, 'Knex: Timeout acquiring a connection');
  assert.not.ok(JSON.stringify(lines).includes('.ts:'), 'no stack');
});

test('logs: a client gone in the middle of a JSON body, compressed or not: the request ends, a 400', async () => {
  const { server, port } = await listen(t);
  try {
    const gzipped = gzipSync(JSON.stringify({ name: 'n', color: '#1', description: randomBytes(100_000).toString('base64') }));
    for (const [reqId, coding, part] of [
      ['gone-plain', 'identity', Buffer.from('{"name":"half')],
      ['gone-gzip', 'gzip', gzipped.subarray(0, gzipped.length / 2)],
    ] as const) {
      const logged = requestLine(reqId);
      const connection = new RawConnection(port);
      const headers = { ...admin.auth, 'X-Request-Id': reqId, 'Content-Type': 'application/json', 'Content-Encoding': coding, 'Content-Length': 1_000_000 };
      await connection.write(Buffer.concat([head('POST', '/api/tags', headers), part]));
      connection.close();
      // A compressed body's reader waited for the rest for ever: no answer, no line.
      assert.is((await logged).status, 400, reqId);
    }
  } finally {
    server.close();
  }
});

test('logs: passwords, tokens and codes are redacted wherever a line carries them', () => {
  const captured: Array<Record<string, any>> = [];
  const logger = createLogger('info', { write: (line: string) => void captured.push(JSON.parse(line)) });
  const fields = {
    password: PASSWORD,
    user: { email: 'a@example.com', confirmPassword: PASSWORD, refresh_token: 'r.t.x' },
    headers: { Authorization: 'Bearer a.b.c', cookie: 'sid=1' },
    verification: { body: { code: 123456 } },
    attempts: [{ token: 'array.t.k' }],
    token: 'x.y.z',
  };
  const given = structuredClone(fields);
  logger.info(fields, 'sign-in');
  const [line] = captured;
  const text = JSON.stringify(line);
  for (const secret of [PASSWORD, 'r.t.x', 'a.b.c', 'sid=1', '123456', 'array.t.k', 'x.y.z']) assert.not.ok(text.includes(secret), `${secret} in ${text}`);
  assert.is(line.user.email, 'a@example.com', 'what is not a credential stays');
  assert.is(line.password, '[redacted]');
  assert.is(line.headers.Authorization, '[redacted]', 'whatever the case of the key');
  assert.equal(fields, given, "the caller's object is not changed");
});

test('a JSON body nested deeper than JSON_MAX_DEPTH, or with a longer array, is a 400 and nothing is written', async () => {
  const before = await t.db('tag').where('tenantId', admin.tenantId).count({ n: '*' });
  let deep: unknown = 'leaf';
  for (let i = 0; i < 6; i++) deep = { nested: deep };
  const tooDeep = await t.http.post('/api/tags').set(admin.auth).send({ name: 'deep', color: 'red', description: deep });
  assertError(tooDeep, 400, 'body must not be nested deeper than 6 levels');
  const array = await t.http.post('/api/tags/search').set(admin.auth).send({ where: { id: ['a', 'b', 'c', 'd', 'e', 'f'] } });
  assertError(array, 400, 'body: an array must not have more than 5 items');
  // A huge depth is refused as quickly, without exhausting the stack of whatever reads the body next.
  const bomb = `${'['.repeat(50_000)}${']'.repeat(50_000)}`;
  const deepArray = await t.http.post('/api/tags').set(admin.auth).set('Content-Type', 'application/json').send(bomb);
  assertError(deepArray, 400, 'body must not be nested deeper than 6 levels');
  const after = await t.db('tag').where('tenantId', admin.tenantId).count({ n: '*' });
  assert.equal(after, before);
  // At the limits, bodies pass on to their route's own rules.
  const fine = await t.http.post('/api/tags').set(admin.auth).send({ name: 'within-limits', color: 'red' });
  assert.is(fine.status, 201, JSON.stringify(fine.body));
  const fiveIds = await t.http.post('/api/tags/search').set(admin.auth).send({ where: { name: ['a', 'b', 'c', 'd', 'e'] } });
  assert.ok(fiveIds.status === 200 || fiveIds.status === 400, JSON.stringify(fiveIds.body));
  assert.not.ok(JSON.stringify(fiveIds.body).includes('more than 5 items'));
});

test('mail without SMTP: the log line shows the code in development, never in production', async () => {
  const { createMailer } = await import('../../engine/mail.js');
  const { loadConfig } = await import('../../engine/config/config.js');
  const logged: string[] = [];
  const message = { to: 'who@example.com', subject: 'Your code', text: 'Your code:\n482913\n' };
  await createMailer(loadConfig({ NODE_ENV: 'development' }), { log: (line) => logged.push(line) }).send(message);
  assert.ok(logged[0].includes('482913'));
  const production = loadConfig({ NODE_ENV: 'production', JWT_SECRET: 'f1e2d3c4b5a69788796a5b4c3d2e1f00aa11bb22', JWT_REFRESH_SECRET: '0f1e2d3c4b5a69788796a5b4c3d2e1ff99887766' });
  await createMailer(production, { log: (line) => logged.push(line) }).send(message);
  const line = JSON.parse(logged[1]);
  assert.is(line.to, 'who@example.com');
  assert.is(line.subject, 'Your code');
  assert.is(line.text, '[redacted]');
  assert.not.ok(logged[1].includes('482913'));
});

// A registration body carries the password twice; none of it may reach a log line.
test('a request carrying a password leaves no trace of it in the log', async () => {
  lines.length = 0;
  const email = uniqueEmail('logged');
  const res = await t.http.post('/api/auth/register').send({ user: { email, firstName: 'L', lastName: 'G' }, password: PASSWORD, confirmPassword: PASSWORD });
  assert.is(res.status, 201);
  assert.ok(lines.some((l) => l.path === '/api/auth/register' && l.status === 201));
  assert.not.ok(JSON.stringify(lines).includes(PASSWORD));
});

test.run();
