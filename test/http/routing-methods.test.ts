// Routing over HTTP: fixed sub-paths (search, count, pagination, getByName,
// upload, the timesheet/time-log alias…) never fall into a generated /:id; a method a path does
// not have, OPTIONS and methods the router does not know included, is a 405 in the envelope with
// an Allow header naming exactly the methods the OpenAPI document gives that path (an alias: the
// path item listing it in x-aliases); a nameless
// query parameter (`?=x`) is answered like any unknown one.
import { randomUUID } from 'node:crypto';
import net from 'node:net';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { createStoppableServer } from '../../engine/http/stoppable-server.js';
import { newTenant, type Session } from '../helpers/accounts.js';
import { createTestApp, type TestApp } from '../helpers/app.js';
import { assertError } from '../helpers/error-envelope.js';
import { servedOperationsOf } from '../helpers/openapi.js';

let t: TestApp;
let admin: Session & { organizationId: string };

test.before(async () => {
  t = await createTestApp();
  admin = await newTenant(t, 'Routing Co');
});
test.after(async () => {
  await t?.close();
});

type Response = Awaited<ReturnType<TestApp['http']['get']>>;

/** Any method, the ones supertest has no helper for included. */
const send = (method: string, path: string) => (t.http as any)[method.toLowerCase()](path).set(admin.auth) as Promise<Response>;

/** A 405 envelope whose Allow header is exactly `allow`, in any order. */
function assertNotAllowed(res: Response, allow: string[], where: string) {
  assertError(res, 405);
  const listed = String(res.headers.allow ?? '').split(',').map((m) => m.trim()).filter(Boolean).sort();
  assert.equal(listed, [...allow].sort(), `${where}: Allow ${res.headers.allow}`);
  assert.match(res.body.message, /is not allowed on/, where);
}

/** The methods the document gives a path (an alias: its path item's), as Allow names them (a GET answers HEAD too). */
function documentedMethods(path: string): string[] {
  const methods = servedOperationsOf(t.openapi as Record<string, any>).filter((o) => o.path === path).map((o) => o.method.toUpperCase());
  return methods.includes('GET') ? [...methods, 'HEAD'] : methods;
}

/** A concrete request path for a documented one: every parameter a fresh UUID (never a fixed segment). */
const concrete = (path: string) => path.replace(/\{[^}]+\}/g, () => randomUUID());

const UNKNOWN_TO_ROUTER = ['TRACE', 'QUERY', 'PROPFIND', 'MKCOL', 'OPTIONS'];

test('every documented /api path and alias: a method it does not have is a 405 naming exactly its documented methods', async () => {
  const paths = [...new Set(servedOperationsOf(t.openapi as Record<string, any>).map((o) => o.path))].filter((p) => p.startsWith('/api/'));
  assert.ok(paths.length > 100, `${paths.length} paths`);
  for (const path of paths) {
    const allowed = documentedMethods(path);
    const missing = ['GET', 'POST', 'PUT', 'PATCH', 'DELETE'].filter((m) => !allowed.includes(m));
    // One method the router knows and one it does not, per path (every path, every kind of method).
    for (const method of [missing[0], UNKNOWN_TO_ROUTER[paths.indexOf(path) % UNKNOWN_TO_ROUTER.length]]) {
      if (!method) continue;
      const url = concrete(path);
      assertNotAllowed(await send(method, url), allowed, `${method} ${url}`);
    }
  }
});

test('fixed sub-paths of every resource and alias never reach /:id (no "id must be a UUID")', async () => {
  const resources = [...t.engine.registry.values()].filter((r) => r.routes || r.name === 'event-type');
  for (const r of resources) {
    for (const path of r.paths) {
      const base = `/api/${path}`;
      for (const method of ['GET', 'PUT', 'PATCH', 'DELETE', 'OPTIONS']) assertNotAllowed(await send(method, `${base}/search`), ['POST'], `${method} ${base}/search`);
      for (const sub of ['count', 'pagination']) {
        for (const method of ['POST', 'PUT', 'PATCH', 'DELETE', 'OPTIONS']) assertNotAllowed(await send(method, `${base}/${sub}`), ['GET', 'HEAD'], `${method} ${base}/${sub}`);
      }
      // A trailing slash is the same path.
      assertNotAllowed(await send('GET', `${base}/search/`), ['POST'], `GET ${base}/search/`);
    }
  }
});

test('the hand-written fixed paths: getByName on every tag path, upload on every image-asset path, the time-log alias', async () => {
  for (const path of t.engine.registry.get('tag')!.paths) {
    assertNotAllowed(await send('POST', `/api/${path}/getByName`), ['GET', 'HEAD'], `POST /api/${path}/getByName`);
    assertNotAllowed(await send('DELETE', `/api/${path}/getByName`), ['GET', 'HEAD'], `DELETE /api/${path}/getByName`);
    assertNotAllowed(await send('OPTIONS', `/api/${path}/getByName`), ['GET', 'HEAD'], `OPTIONS /api/${path}/getByName`);
    // The lookup itself answers on the alias too (404 for a name the tenant does not have).
    assertError(await send('GET', `/api/${path}/getByName/Nothing`), 404);
  }
  for (const path of t.engine.registry.get('image-asset')!.paths) {
    for (const method of ['GET', 'PUT', 'DELETE', 'OPTIONS']) assertNotAllowed(await send(method, `/api/${path}/upload`), ['POST'], `${method} /api/${path}/upload`);
  }
  assertNotAllowed(await send('DELETE', '/api/timesheet/time-log'), ['GET', 'HEAD', 'POST'], 'DELETE /api/timesheet/time-log');
  assertNotAllowed(await send('PUT', '/api/timesheet/time-log'), ['GET', 'HEAD', 'POST'], 'PUT /api/timesheet/time-log');
  assertNotAllowed(await send('GET', '/api/timesheet/time-log/search'), ['POST'], 'GET /api/timesheet/time-log/search');
  // The alias's list still answers, and the timesheet's own /:id still takes an id.
  assert.is((await send('GET', '/api/timesheet/time-log')).status, 200);
  assertError(await send('GET', '/api/timesheet/not-an-id'), 400, 'id must be a UUID');
});

test('methods the router does not know are 405 on a known path and 404 on an unknown one; never a 5xx', async () => {
  for (const method of ['TRACE', 'QUERY', 'PROPFIND', 'PROPPATCH', 'MKCOL', 'COPY', 'MOVE', 'LOCK', 'UNLOCK', 'SEARCH', 'REPORT', 'PURGE', 'LINK']) {
    assertNotAllowed(await send(method, '/api/employee'), ['GET', 'HEAD', 'POST'], `${method} /api/employee`);
    assertNotAllowed(await send(method, `/api/employee/${randomUUID()}`), ['GET', 'HEAD', 'PUT', 'PATCH', 'DELETE'], `${method} /api/employee/{id}`);
    assertError(await send(method, '/api/no-such-thing'), 404);
  }
  // Without a token a protected path is still a 401, whatever the method.
  assertError(await (t.http as any).propfind('/api/employee'), 401);
  // OPTIONS outside a CORS preflight is a method like the others: 405, nothing answered as 200.
  assertNotAllowed(await send('OPTIONS', '/api/employee'), ['GET', 'HEAD', 'POST'], 'OPTIONS /api/employee');
});

/** One raw request over a socket to the real HTTP server (engine/http/stoppable-server.ts): what came back before it closed. */
function rawExchange(port: number, request: string): Promise<string> {
  return new Promise((resolve, reject) => {
    const socket = net.connect(port, '127.0.0.1', () => socket.write(request));
    let received = '';
    socket.on('data', (chunk) => (received += chunk.toString()));
    socket.on('error', () => {});
    socket.on('close', () => resolve(received));
    setTimeout(() => {
      socket.destroy();
      reject(new Error(`no answer within 10 s; received: ${JSON.stringify(received)}`));
    }, 10_000).unref();
  });
}

test('on the real HTTP server: CONNECT (never handed to the app) and TRACE are 405s in the envelope', async () => {
  const { server, stop } = createStoppableServer(t.koa.callback(), { requestTimeoutMs: 10_000 });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  try {
    const port = (server.address() as net.AddressInfo).port;
    const connect = await rawExchange(port, 'CONNECT example.com:443 HTTP/1.1\r\nHost: example.com:443\r\n\r\n');
    assert.match(connect, /^HTTP\/1\.1 405 Method Not Allowed\r\n/);
    const body = JSON.parse(connect.slice(connect.indexOf('\r\n\r\n') + 4));
    assert.equal(body, { statusCode: 405, message: 'CONNECT is not allowed on this server', error: 'Method Not Allowed' });
    const trace = await rawExchange(port, `TRACE /api/employee HTTP/1.1\r\nHost: x\r\nAuthorization: ${admin.auth.Authorization}\r\nConnection: close\r\n\r\n`);
    assert.match(trace, /^HTTP\/1\.1 405 Method Not Allowed\r\n/);
    assert.match(trace, /\r\nallow: GET, HEAD, POST\r\n/i);
  } finally {
    await stop(1000);
  }
});

test('?=x: a parameter without a name is a 400 where unknown parameters are, and ignored where parameters are', async () => {
  const nameless = 'a parameter without a name';
  assertError(await send('GET', '/api/employee?=x'), 400, /^a parameter without a name is not a supported list parameter of employee/);
  assertError(await send('GET', '/api/employee?take=5&=x'), 400, /^a parameter without a name is not a supported list parameter/);
  assertError(await send('GET', '/api/employee/count?='), 400, /^a parameter without a name is not a supported list parameter/);
  assertError(await send('GET', `/api/employee/${randomUUID()}?=x`), 400, `${nameless} is not a supported parameter when reading one record; supported: relations, select`);
  assertError(await send('GET', '/api/report?=x'), 400, /^a parameter without a name is not a supported parameter of \/api\/report/);
  assertError(await send('GET', '/api/export/employee?=x'), 400, /^a parameter without a name is not a supported parameter/);
  assertError(await send('GET', '/api/tags/getByName?name=a&=x'), 400, /^a parameter without a name is not a supported parameter/);
  // Routes that take no query parameters at all ignore it, as they ignore any other.
  const me = await send('GET', '/api/user/me?=x');
  assert.is(me.status, 200, JSON.stringify(me.body));
  assert.is((await send('GET', '/api/auth/check?=x')).status, 200);
  // A name made only of brackets is a name qs reads as an index: unknown, a 400 too.
  assertError(await send('GET', '/api/employee?[]=x'), 400, /^0 is not a supported list parameter/);
});

test.run();
