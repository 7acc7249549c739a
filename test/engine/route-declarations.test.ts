// Route declarations (engine/route.ts), on a tiny app built from engine/ alone: one module
// declares a public route, a route with a permission and a body schema, and a route that reads
// its own body. Authentication, the body parser, the checks before the handler, the rate limits,
// the request log and the OpenAPI document each act on what the declaration says, and a
// declaration the document cannot take stops start-up.
import { randomUUID } from 'node:crypto';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import type { Context, Next } from 'koa';
import request from 'supertest';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { createApp, type App, type AppOptions } from '../../engine/app.js';
import type { Caller, RoleTable } from '../../engine/caller.js';
import { loadConfig } from '../../engine/config/config.js';
import { openDatabase, type Database } from '../../engine/db/database.js';
import { unauthorized } from '../../engine/errors.js';
import { callerOf } from '../../engine/http/context.js';
import { createLogger } from '../../engine/log/log.js';
import type { Module } from '../../engine/module.js';
import { validBody, type Route } from '../../engine/route.js';

const LIMITS = `
tiers:
  - { name: anonymous, requests: 100, window: 60 }
  - { name: authenticated, requests: 1000, window: 60 }
endpoints: []
`;

const ROLES: RoleTable = {
  permissions: new Set(['NOTES_WRITE']),
  grants: new Map([
    ['EDITOR', new Set(['NOTES_WRITE'])],
    ['VIEWER', new Set<string>()],
  ]),
  owner: { role: 'NOBODY', claim: 'none', ownerIs: 'no one' },
};

const NOTE_SCHEMA = { type: 'object', additionalProperties: false, required: ['title'], properties: { title: { type: 'string', minLength: 1 } } };

/** Counts the stream a route reads itself, byte by byte, whatever its type. */
async function bytesOf(ctx: Context): Promise<number> {
  let length = 0;
  for await (const chunk of ctx.req) length += (chunk as Buffer).length;
  return length;
}

const ROUTES: Route[] = [
  {
    method: 'GET',
    path: '/api/open/:secret',
    access: 'public',
    rateLimit: 'anonymous',
    logPath: (p) => p.replace(/[^/]+$/, ':secret'),
    handler: (ctx) => {
      ctx.body = { caller: ctx.state.caller?.role ?? null };
    },
    docs: { operationId: 'open', responses: { '200': { description: 'Open' } } },
  },
  {
    method: 'POST',
    path: '/api/notes/check',
    permission: 'NOTES_WRITE',
    schemas: { body: NOTE_SCHEMA },
    handler: (ctx) => {
      ctx.body = { by: callerOf(ctx).role, title: validBody<{ title: string }>(ctx).title };
    },
    docs: { operationId: 'checkNote', responses: { '200': { description: 'Checked' } } },
  },
  {
    method: 'POST',
    path: '/api/raw',
    body: 'own',
    handler: async (ctx) => {
      ctx.body = { bytes: await bytesOf(ctx), parsed: ctx.request.body ?? null };
    },
    docs: { operationId: 'raw', responses: { '200': { description: 'Read' } } },
  },
];

const moduleOf = (routes: Route[]): Module => ({ name: 'declared', routes: () => routes });

/** `X-Caller: <role>`: who is asking, as this application's stub says it. */
const stubAuthenticator: AppOptions['authenticator'] = () => ({
  identify: (_ctx: Context, next: Next) => next(),
  holder: (ctx) => (ctx.get('x-caller') ? { userId: 'u1', role: ctx.get('x-caller') } : undefined),
  authenticate: (isPublic) => (ctx: Context, next: Next) => {
    const role = ctx.get('x-caller');
    const permissions = ROLES.grants.get(role);
    const caller: Caller | undefined = permissions ? { userId: randomUUID(), tenantId: randomUUID(), role, permissions, claims: {} } : undefined;
    if (!isPublic(ctx)) {
      if (!caller) throw unauthorized();
      ctx.state.caller = caller;
    }
    return next();
  },
});

let folder: string;
let database: Database;
let app: App;
let http: ReturnType<typeof request>;
const logLines: Array<Record<string, unknown>> = [];

function options(routes: Route[]): AppOptions {
  return {
    config: loadConfig({ NODE_ENV: 'test', LOG_LEVEL: 'info', JWT_SECRET: 'declared-access-secret-0123456789abcdef0123', JWT_REFRESH_SECRET: 'declared-refresh-secret-0123456789abcdef012' }),
    db: database.knex,
    resourceDirs: [folder],
    modules: [moduleOf(routes)],
    roles: ROLES,
    authenticator: stubAuthenticator,
    limitsFile: path.join(folder, 'limits.yaml'),
    logger: createLogger('info', { write: (line: string) => void logLines.push(JSON.parse(line)) }),
    log: () => {},
    logError: () => {},
  };
}

test.before(async () => {
  folder = mkdtempSync(path.join(tmpdir(), 'engine-routes-'));
  writeFileSync(path.join(folder, 'limits.yaml'), LIMITS);
  database = await openDatabase({});
  app = createApp(options(ROUTES));
  http = request(app.koa.callback());
});

test.after(async () => {
  await app?.close();
  await database?.close();
  rmSync(folder, { recursive: true, force: true });
});

test('a public route answers without a caller; another method on its path is a 405, not a 401', async () => {
  const res = await http.get('/api/open/abc');
  assert.is(res.status, 200);
  assert.equal(res.body, { caller: null });
  const other = await http.delete('/api/open/abc');
  assert.is(other.status, 405);
  assert.is(other.headers.allow, 'GET, HEAD');
  assert.ok(app.isPublic('/api/open/abc'));
  assert.not.ok(app.isPublic('/api/notes/check'));
});

test('a route without access needs a caller; an unknown path under /api is a 401, outside it a 404', async () => {
  assert.is((await http.post('/api/notes/check').send({ title: 'x' })).status, 401);
  assert.is((await http.get('/api/nothing-here')).status, 401);
  assert.is((await http.get('/nothing-here')).status, 404);
});

test("a path no route matches is logged with the masks of the routes under its prefix", async () => {
  logLines.length = 0;
  assert.is((await http.get('/api/open/s3cr3t/more')).status, 401);
  assert.is((await http.get('/api/notes/other')).status, 401);
  // This route's logPath masks the last segment.
  assert.equal(logLines.filter((l) => l.msg === 'request').map((l) => l.path), ['/api/open/s3cr3t/:secret', '/api/notes/other']);
});

test('the declared permission is checked before the handler (403), then the body schema (400), then the handler runs', async () => {
  const forbidden = await http.post('/api/notes/check').set('X-Caller', 'VIEWER').send({ nonsense: true });
  assert.is(forbidden.status, 403);
  const invalid = await http.post('/api/notes/check').set('X-Caller', 'EDITOR').send({ title: '', extra: 1 });
  assert.is(invalid.status, 400);
  assert.equal(invalid.body.message, ['property extra should not exist', 'title should not be empty']);
  const ok = await http.post('/api/notes/check').set('X-Caller', 'EDITOR').send({ title: 'Fine' });
  assert.is(ok.status, 200);
  assert.equal(ok.body, { by: 'EDITOR', title: 'Fine' });
});

test("a route that reads its own body gets the stream untouched: no 415, no parsed body", async () => {
  const res = await http.post('/api/raw').set('X-Caller', 'VIEWER').set('Content-Type', 'text/csv').send('a,b\n1,2\n');
  assert.is(res.status, 200);
  assert.equal(res.body, { bytes: 8, parsed: null });
  // The JSON parser still refuses what a JSON route would not read.
  const json = await http.post('/api/notes/check').set('X-Caller', 'EDITOR').set('Content-Type', 'text/csv').send('a,b');
  assert.is(json.status, 415);
});

test("the request log shows the declared logPath, also for another method on the path", async () => {
  logLines.length = 0;
  await http.get('/api/open/s3cr3t');
  await http.put('/api/open/s3cr3t');
  const paths = logLines.filter((l) => l.msg === 'request').map((l) => `${l.method} ${l.path}`);
  assert.equal(paths, ['GET /api/open/:secret', 'PUT /api/open/:secret']);
  assert.not.ok(JSON.stringify(logLines).includes('s3cr3t'));
});

test("a route counted as anonymous ignores the caller's token: the anonymous tier, by address, on each of the path's methods", async () => {
  const limitOf = (res: { headers: Record<string, string> }) => res.headers['x-ratelimit-limit'];
  assert.is(limitOf(await http.get('/api/open/abc').set('X-Caller', 'EDITOR')), '100');
  assert.is(limitOf(await http.delete('/api/open/abc').set('X-Caller', 'EDITOR')), '100');
  assert.is(limitOf(await http.post('/api/notes/check').set('X-Caller', 'EDITOR').send({ title: 'x' })), '1000');
});

test('the document: security from access, the request body from the schema, the anonymous tier from rateLimit', () => {
  const paths = app.openapi.paths as Record<string, Record<string, Record<string, any>>>;
  const open = paths['/api/open/{secret}'].get;
  assert.equal(open.security, []);
  assert.match(open.description, /the `anonymous` tier, 100 per 60 s, per client address whatever token/);
  const check = paths['/api/notes/check'].post;
  assert.is(check.security, undefined);
  assert.equal(check.requestBody.content['application/json'].schema.required, ['title']);
  assert.match(check.description, /the caller's tier/);
  assert.is(paths['/api/raw'].post.requestBody, undefined);
});

test('a route declared twice, documenting its own security, or a HEAD unlike its GET stops start-up', () => {
  assert.throws(() => createApp(options([...ROUTES, ROUTES[0]])), /GET \/api\/open\/\{secret\} is declared twice/);
  const selfSecured: Route = { ...ROUTES[1], path: '/api/other', docs: { operationId: 'other', security: [], responses: {} } };
  assert.throws(() => createApp(options([selfSecured])), /documents security itself/);
  // A HEAD beside a GET is answered by the GET's route: a permission of its own would go unchecked.
  const head: Route = { ...ROUTES[0], method: 'HEAD', access: 'caller', docs: { operationId: 'openHead', responses: {} } };
  assert.throws(() => createApp(options([ROUTES[0], head])), /HEAD \/api\/open\/:secret is answered by its GET/);
});

/** POST /api/notes/verify: /api/notes/check under another spelling. */
const ALIAS: Route = { ...ROUTES[1], path: '/api/notes/verify', docs: false, aliasOf: '/api/notes/check' };

test('an alias is served as its route, left out of paths and listed in the x-aliases of the path it aliases', async () => {
  const aliased = createApp(options([...ROUTES, ALIAS]));
  try {
    const paths = aliased.openapi.paths as Record<string, Record<string, any>>;
    assert.is(paths['/api/notes/verify'], undefined);
    assert.equal(paths['/api/notes/check']['x-aliases'], ['/api/notes/verify']);
    assert.equal(Object.keys(paths['/api/open/{secret}']), ['get'], 'a path without aliases has no x-aliases');
    const description = String((aliased.openapi.info as Record<string, unknown>).description);
    assert.match(description, /- \*\*Aliases\*\* .*`x-aliases`.*: \/api\/notes\/verify → \/api\/notes\/check\./);
    // The engine's own words link no page: this app serves none.
    assert.not.match(description, /\]\(\/docs\//);
    const via = request(aliased.koa.callback());
    const res = await via.post('/api/notes/verify').set('x-caller', 'EDITOR').send({ title: 'T' });
    assert.is(res.status, 200);
    assert.equal(res.body, { by: 'EDITOR', title: 'T' });
    const refused = await via.get('/api/notes/verify').set('x-caller', 'EDITOR');
    assert.is(refused.status, 405);
    assert.is(refused.headers.allow, 'POST');
  } finally {
    await aliased.close();
  }
  assert.not.ok('x-aliases' in (app.openapi.paths as Record<string, object>)['/api/notes/check'], 'no alias, no x-aliases');
});

test('an alias that documents itself, of an undocumented route, with other access, or not of every method of its path stops start-up', async () => {
  assert.throws(() => createApp(options([...ROUTES, { ...ALIAS, docs: { operationId: 'verify', responses: {} } }])), /is an alias: declare it with docs: false/);
  assert.throws(() => createApp(options([...ROUTES, { ...ALIAS, aliasOf: '/api/notes/nope' }])), /POST \/api\/notes\/verify is an alias of POST \/api\/notes\/nope, which is not documented/);
  assert.throws(() => createApp(options([...ROUTES, { ...ALIAS, access: 'public' }])), /declare it with the same access and rate-limit keying/);
  // /api/pair has GET and POST; an alias path with only its GET would answer POST with a 405 the document does not promise.
  const pair: Route[] = ['GET', 'POST'].map((method) => ({ ...ROUTES[2], method: method as Route['method'], path: '/api/pair', docs: { operationId: `pair${method}`, responses: {} } }));
  const half: Route = { ...pair[0], path: '/api/pairs', docs: false, aliasOf: '/api/pair' };
  assert.throws(() => createApp(options([...pair, half])), /\/api\/pairs \(get\) is an alias of \/api\/pair \(get, post\): it must alias every method of it and no other/);
  await createApp(options([...pair, half, { ...half, method: 'POST' }])).close();
});

test('a document that links a reference page the docs folder lacks stops start-up; one it holds is served as text', async () => {
  const pages = { conventions: 'conventions', authentication: 'conventions', queryLanguage: 'conventions', rateLimits: 'limits' };
  const info = { title: 'Notes', version: '1.0.0', summary: 'Notes.', signIn: 'Send a token', tokenOrigin: 'A token.', pages };
  const docs = mkdtempSync(path.join(tmpdir(), 'engine-pages-'));
  try {
    writeFileSync(path.join(docs, 'conventions.md'), '# Conventions\n');
    assert.throws(() => createApp({ ...options(ROUTES), documentInfo: info, docsDir: docs }), /links \/docs\/limits\.md, but .* holds no limits\.md/);
    writeFileSync(path.join(docs, 'limits.md'), '# Limits\n');
    const linked = createApp({ ...options(ROUTES), documentInfo: info, docsDir: docs });
    try {
      assert.match(String((linked.openapi.info as Record<string, unknown>).description), /\[Rate limits\]\(\/docs\/limits\.md\)/);
      const page = await request(linked.koa.callback()).get('/docs/limits.md');
      assert.is(page.status, 200);
      assert.is(page.headers['content-type'], 'text/plain; charset=utf-8');
      assert.is(page.text, '# Limits\n');
    } finally {
      await linked.close();
    }
  } finally {
    rmSync(docs, { recursive: true, force: true });
  }
});

test.run();
