// The engine as a library: a second, tiny application built from engine/ alone (no auth/, no
// resources/, no config/ of this repository): one YAML resource in a folder of its own, a role
// table with an owner rule, and a stub authenticator that takes the caller from a header. Create,
// list and read work through HTTP on the embedded database, tenants stay apart, and the owner rule
// is the one this application configured.
import { randomUUID } from 'node:crypto';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import type { Context, Next } from 'koa';
import request from 'supertest';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { createApp, type App } from '../../engine/app.js';
import type { Authenticator } from '../../engine/authenticator.js';
import type { Caller, RoleTable } from '../../engine/caller.js';
import { loadConfig } from '../../engine/config/config.js';
import { openDatabase, type Database } from '../../engine/db/database.js';
import { unauthorized } from '../../engine/errors.js';

const NOTE = `
name: note
description: A note of a team.
scope: tenant
owner: writerId
permissions: { read: NOTES_READ, write: NOTES_WRITE }
fields:
  title: { type: string, required: true, maxLength: 100 }
  writerId: { type: uuid }
filters: [title]
sort: [title]
`;

const LIMITS = `
tiers:
  - { name: anonymous, requests: 100, window: 60 }
  - { name: authenticated, requests: 1000, window: 60 }
endpoints: []
`;

const BOTH = new Set(['NOTES_READ', 'NOTES_WRITE']);
const ROLES: RoleTable = {
  permissions: BOTH,
  grants: new Map([
    ['EDITOR', BOTH],
    ['WRITER', BOTH],
  ]),
  owner: { role: 'WRITER', claim: 'personId', ownerIs: 'the person it signs in as' },
};

/** `X-Caller: <tenantId> <role> [<personId>]`: who is asking, as this application's stub says it. */
function stubAuthenticator(): Authenticator {
  const callerOf = (ctx: Context): Caller | undefined => {
    const [tenantId, role, personId] = String(ctx.get('x-caller') || '').split(' ');
    const permissions = ROLES.grants.get(role);
    return tenantId && permissions ? { userId: randomUUID(), tenantId, role, permissions, claims: { personId } } : undefined;
  };
  return {
    identify: (_ctx: Context, next: Next) => next(),
    holder: () => undefined,
    authenticate: (isPublic) => (ctx: Context, next: Next) => {
      const caller = callerOf(ctx);
      if (!caller && !isPublic(ctx)) throw unauthorized();
      ctx.state.caller = caller;
      return next();
    },
  };
}

let folder: string;
let database: Database;
let app: App;
let http: ReturnType<typeof request>;

test.before(async () => {
  folder = mkdtempSync(path.join(tmpdir(), 'engine-standalone-'));
  writeFileSync(path.join(folder, 'note.yaml'), NOTE);
  writeFileSync(path.join(folder, 'limits.yaml'), LIMITS);
  database = await openDatabase({});
  await database.knex.schema.createTable('note', (t) => {
    t.uuid('id').primary().defaultTo(database.knex.raw('gen_random_uuid()'));
    t.uuid('tenantId').notNullable();
    t.string('title', 100).notNullable();
    t.uuid('writerId');
    t.timestamp('createdAt', { useTz: true }).notNullable().defaultTo(database.knex.fn.now());
    t.timestamp('updatedAt', { useTz: true }).notNullable().defaultTo(database.knex.fn.now());
  });
  app = createApp({
    config: loadConfig({ NODE_ENV: 'test', RATE_LIMITS: 'off', JWT_SECRET: 'standalone-access-secret-0123456789abcdef01', JWT_REFRESH_SECRET: 'standalone-refresh-secret-0123456789abcdef0' }),
    db: database.knex,
    resourceDirs: [folder],
    roles: ROLES,
    authenticator: stubAuthenticator,
    limitsFile: path.join(folder, 'limits.yaml'),
    log: () => {},
    logError: () => {},
  });
  http = request(app.koa.callback());
});

test.after(async () => {
  await app?.close();
  await database?.close();
  rmSync(folder, { recursive: true, force: true });
});

const tenantA = randomUUID();
const tenantB = randomUUID();
const alice = randomUUID();
const bob = randomUUID();

test('create, list and read a record of the one resource', async () => {
  const created = await http.post('/api/note').set('X-Caller', `${tenantA} EDITOR`).send({ title: 'First', writerId: bob });
  assert.is(created.status, 201, JSON.stringify(created.body));
  assert.is(created.body.title, 'First');
  assert.is(created.body.tenantId, tenantA);
  const list = await http.get('/api/note').set('X-Caller', `${tenantA} EDITOR`);
  assert.is(list.status, 200);
  assert.equal(list.body.items.map((n: { title: string }) => n.title), ['First']);
  const one = await http.get(`/api/note/${created.body.id}`).set('X-Caller', `${tenantA} EDITOR`);
  assert.is(one.status, 200);
  assert.is(one.body.id, created.body.id);
});

test('tenants stay apart: another tenant neither lists nor reads the record', async () => {
  const created = await http.post('/api/note').set('X-Caller', `${tenantA} EDITOR`).send({ title: 'Of A' });
  assert.is(created.status, 201);
  const list = await http.get('/api/note').set('X-Caller', `${tenantB} EDITOR`);
  assert.is(list.status, 200);
  assert.equal(list.body.items, []);
  const one = await http.get(`/api/note/${created.body.id}`).set('X-Caller', `${tenantB} EDITOR`);
  assert.is(one.status, 404);
});

test("the configured owner rule: the owner-scoped role reaches its own records, filled from its claim", async () => {
  const mine = await http.post('/api/note').set('X-Caller', `${tenantA} WRITER ${alice}`).send({ title: 'Alice writes' });
  assert.is(mine.status, 201, JSON.stringify(mine.body));
  assert.is(mine.body.writerId, alice);
  const forOther = await http.post('/api/note').set('X-Caller', `${tenantA} WRITER ${alice}`).send({ title: 'For Bob', writerId: bob });
  assert.is(forOther.status, 403);
  const list = await http.get('/api/note').set('X-Caller', `${tenantA} WRITER ${alice}`);
  assert.equal(list.body.items.map((n: { title: string }) => n.title), ['Alice writes']);
  const bobs = await http.get('/api/note').set('X-Caller', `${tenantA} WRITER ${bob}`);
  assert.equal(bobs.body.items.map((n: { title: string }) => n.title), ['First']);
});

test('no caller: 401 in the error envelope', async () => {
  const res = await http.get('/api/note');
  assert.is(res.status, 401);
  assert.is(res.body.statusCode, 401);
});

test("the OpenAPI document words the owner rule as this application configured it", () => {
  const list = (app.openapi.paths as Record<string, Record<string, { description?: string }>>)['/api/note'].get;
  assert.match(String(list.description), 'The WRITER role reaches only records whose writerId is the person it signs in as.');
});

test.run();
