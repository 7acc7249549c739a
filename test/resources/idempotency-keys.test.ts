// Idempotency-Key on creates: a retry replays the first success and writes nothing; the same key
// with another request is a 422; a retry while the first runs is a 409; failures keep nothing;
// keys are per caller; expired ones run again and are swept. Every rule against each store: the
// database (always) and Redis (when REDIS_URL is set). Then two server processes on one
// PostgreSQL database racing with one key, for each store.
import { randomBytes } from 'node:crypto';
import { Redis } from 'ioredis';
import knex, { type Knex } from 'knex';
import request from 'supertest';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { databaseStore } from '../../engine/idempotency/database-store.js';
import { fingerprintOf } from '../../engine/idempotency/request.js';
import { IDEMPOTENCY_TABLE } from '../../engine/idempotency/table.js';
import { newTenant, PASSWORD, uniqueEmail, userWithRole, type Session } from '../helpers/accounts.js';
import { createTestApp, type TestApp } from '../helpers/app.js';
import type { Module } from '../../engine/module.js';
import { modules as projectModules } from '../../resources/modules.js';
import { assertError } from '../helpers/error-envelope.js';
import { dropSchema, killServers, startServer, type ServerProcess } from '../helpers/server-process.js';

const { DATABASE_URL, REDIS_URL } = process.env;

type Admin = Session & { organizationId: string };

/** What a test needs to stage of a store: an entry still running, or one past its expiry. */
interface Staging {
  running(owner: Session, key: string, fingerprint: string, claimedAgoMs: number): Promise<void>;
  expire(owner: Session, key: string): Promise<void>;
  close(): Promise<void>;
}

interface Store {
  name: string;
  env: Record<string, string>;
  staging(t: TestApp, prefix: string): Staging;
}

const STORES: Store[] = [
  {
    name: 'database',
    env: {},
    staging: (t) => ({
      running: async (owner, key, fingerprint, claimedAgoMs) => {
        await t.db.raw(
          `insert into ${IDEMPOTENCY_TABLE} ("tenantId", "userId", "key", "fingerprint", "state", "token", "claimedAt", "expiresAt") values (?, ?, ?, ?, 'running', 'staged', now() - ? * interval '1 millisecond', now() + interval '1 day')`,
          [owner.tenantId, owner.userId, key, fingerprint, claimedAgoMs],
        );
      },
      expire: async (owner, key) => {
        await t.db(IDEMPOTENCY_TABLE).where({ tenantId: owner.tenantId, userId: owner.userId, key }).update({ expiresAt: t.db.raw("now() - interval '1 second'") });
      },
      close: async () => {},
    }),
  },
];
if (REDIS_URL) {
  STORES.push({
    name: 'redis',
    env: { REDIS_URL, RATE_LIMIT_PREFIX: `idem_${randomBytes(4).toString('hex')}` },
    staging: (_t, prefix) => {
      const redis = new Redis(REDIS_URL);
      const entry = (owner: Session, key: string) => `${prefix}:idempotency:${owner.tenantId}:${owner.userId}:${key}`;
      return {
        running: async (owner, key, fingerprint, claimedAgoMs) => {
          const [seconds, micros] = await redis.time();
          const now = Number(seconds) * 1000 + Math.floor(Number(micros) / 1000);
          await redis.hset(entry(owner, key), 'fingerprint', fingerprint, 'state', 'running', 'token', 'staged', 'claimedAt', String(now - claimedAgoMs));
          await redis.pexpire(entry(owner, key), 86_400_000);
        },
        expire: async (owner, key) => {
          await redis.del(entry(owner, key));
        },
        close: async () => {
          const keys = await redis.keys(`${prefix}*`);
          if (keys.length) await redis.del(...keys);
          redis.disconnect();
        },
      };
    },
  });
} else console.log('idempotency-keys.test.ts: the Redis store is not tried, REDIS_URL is not set');

for (const store of STORES) {
  let t: TestApp;
  let admin: Admin;
  let staging: Staging;
  const name = (what: string) => `${store.name}: ${what}`;
  const tagsNamed = async (tag: string) => Number((await t.db('tag').where({ name: tag, tenantId: admin.tenantId }).count({ n: '*' }))[0].n);
  // A tag needs a colour: one is added to every tag body that has none (before its fingerprint is taken).
  const asTag = (body: Record<string, unknown>) => ({ color: '#123456', ...body });
  /** A tag create's fingerprint as the service takes it: its organization header (not sent here) is part of it. */
  const tagFingerprint = (body: Record<string, unknown>) => fingerprintOf('POST', '/api/tags', asTag(body), t.engine.registry.get('tag')!.organizationHeader ? [''] : []);
  const post = (session: Session, key: string | undefined, body: Record<string, unknown>, path = '/api/tags') => {
    const req = t.http.post(path).set(session.auth);
    if (key !== undefined) req.set('Idempotency-Key', key);
    return req.send(path === '/api/tags' ? asTag(body) : body);
  };
  const newKey = () => `key-${randomBytes(6).toString('hex')}`;

  test(name('set up'), async () => {
    t = await createTestApp({ env: store.env });
    admin = await newTenant(t);
    staging = store.staging(t, store.env.RATE_LIMIT_PREFIX ?? '');
  });

  test(name('a retry with the same key and body replays the first answer and writes nothing'), async () => {
    const key = newKey();
    const body = { name: `once-${key}`, color: '#112233' };
    const first = await post(admin, key, body);
    assert.is(first.status, 201, JSON.stringify(first.body));
    assert.is(first.headers['idempotent-replayed'], undefined, 'the first answer is no replay');
    for (const again of [body, { color: '#112233', name: `once-${key}` }]) {
      const retry = await post(admin, key, again);
      assert.is(retry.status, 201);
      assert.is(retry.headers['idempotent-replayed'], 'true');
      assert.equal(retry.body, first.body, 'the same record, the same id');
      assert.is(retry.headers.etag, first.headers.etag);
      assert.match(retry.headers['content-type'], /^application\/json/);
    }
    assert.is(await tagsNamed(`once-${key}`), 1, 'one row, whatever the retries');
  });

  test(name('a replay is the first answer to the byte, for a create of one record and for one with links'), async () => {
    const key = newKey();
    const first = await post(admin, key, { name: `exact-${key}` });
    assert.is(first.status, 201);
    const retry = await post(admin, key, { name: `exact-${key}` });
    assert.is(retry.headers['idempotent-replayed'], 'true');
    assert.is(retry.text, first.text, 'the same JSON text: fields in the same order, the same timestamps');
    // A project with tags (links): its key is claimed before the transaction, its answer kept after.
    const linked = newKey();
    const project = { name: `Linked ${linked}`, organizationId: admin.organizationId, tags: [{ id: first.body.id }] };
    const created = await post(admin, linked, project, '/api/organization-projects');
    assert.is(created.status, 201, JSON.stringify(created.body));
    const again = await post(admin, linked, project, '/api/organization-projects');
    assert.is(again.status, 201);
    assert.is(again.headers['idempotent-replayed'], 'true');
    assert.is(again.text, created.text);
    assert.is(again.headers.etag, created.headers.etag);
    assert.is(Number((await t.db('organization_project').where({ name: project.name }).count({ n: '*' }))[0].n), 1);
    assert.is(Number((await t.db('tag_organization_project').where({ tagId: first.body.id }).count({ n: '*' }))[0].n), 1);
  });

  if (store.name === 'database') {
    test(name('a create of one record writes its key in its own statement: no statement more than without a key'), async () => {
      const statements: string[] = [];
      const listen = (q: { sql: string }) => statements.push(q.sql);
      t.db.on('query', listen);
      try {
        const counted = async (key: string | undefined, tag: string) => {
          statements.length = 0;
          const res = await post(admin, key, { name: tag });
          assert.is(res.status, 201, JSON.stringify(res.body));
          return statements.length;
        };
        const plain = await counted(undefined, `plain-${newKey()}`);
        const key = newKey();
        assert.is(await counted(key, `keyed-${key}`), plain, 'the key costs the create no statement');
        assert.ok(statements.some((sql) => sql.includes(IDEMPOTENCY_TABLE) && sql.includes('insert into "tag"')), 'one statement writes the record and its key');
      } finally {
        t.db.off('query', listen);
      }
      const [entry] = await t.db(IDEMPOTENCY_TABLE).where({ tenantId: admin.tenantId, userId: admin.userId }).orderBy('claimedAt', 'desc').limit(1);
      assert.is(entry.state, 'done', 'kept done by the statement that created the record');
    });
  }

  if (store.name === 'database' && DATABASE_URL) {
    test(name("a create whose statement meets the key's entry being written (a racing request committing) replays it"), async () => {
      const key = newKey();
      const body = { name: `raced-${key}` };
      const kept = { status: 201, headers: { 'content-type': 'application/json; charset=utf-8' }, body: '{"kept":"by the racing request"}' };
      const racing = await t.db.transaction();
      try {
        await racing(IDEMPOTENCY_TABLE).insert({
          tenantId: admin.tenantId,
          userId: admin.userId,
          key,
          fingerprint: tagFingerprint(body),
          state: 'done',
          token: '',
          answer: JSON.stringify(kept),
          claimedAt: t.db.raw('now()'),
          expiresAt: t.db.raw("now() + interval '1 hour'"),
        });
        let settled = false;
        const pending = post(admin, key, body).then((res) => ((settled = true), res));
        // The create's statement sees no entry (not committed), inserts its tag, then waits on the key's primary key.
        for (let waited = 0; ; waited += 20) {
          const { rows } = await t.db.raw(`select count(*)::int as n from pg_stat_activity where wait_event_type = 'Lock' and query like '%idempotency_kept%'`);
          if (rows[0].n >= 1) break;
          if (settled || waited > 10_000) throw new Error('the create never waited on the key');
          await new Promise((resolve) => setTimeout(resolve, 20));
        }
        await racing.commit();
        const res = await pending;
        assert.is(res.status, 201);
        assert.is(res.headers['idempotent-replayed'], 'true');
        assert.is(res.text, kept.body, 'the racing request\'s answer');
        assert.is(await tagsNamed(body.name), 0, 'the tag this statement inserted went with it');
      } finally {
        if (!racing.isCompleted()) await racing.rollback();
      }
    });
  }

  test(name('the same key with another body or another path is a 422, and nothing is written'), async () => {
    const key = newKey();
    assert.is((await post(admin, key, { name: `first-${key}` })).status, 201);
    assertError(await post(admin, key, { name: `second-${key}` }), 422, /another request/);
    assertError(await post(admin, key, { name: `first-${key}` }, '/api/skill'), 422);
    assert.is(await tagsNamed(`second-${key}`), 0);
    assert.is(Number((await t.db('skill').where({ name: `first-${key}` }).count({ n: '*' }))[0].n), 0);
  });

  test(name('the organization header is part of the request: another one with the same key and body is a 422'), async () => {
    const key = newKey();
    const elsewhere = await t.http.post('/api/organization').set(admin.auth).send({ name: `Elsewhere ${key}`, currency: 'EUR' });
    assert.is(elsewhere.status, 201);
    const body = { name: `org-${key}`, color: '#123456' };
    const first = await t.http.post('/api/tags').set(admin.auth).set('Idempotency-Key', key).set('Organization-Id', admin.organizationId).send(body);
    assert.is(first.status, 201, JSON.stringify(first.body));
    assertError(await t.http.post('/api/tags').set(admin.auth).set('Idempotency-Key', key).set('Organization-Id', elsewhere.body.id).send(body), 422);
    const again = await t.http.post('/api/tags').set(admin.auth).set('Idempotency-Key', key).set('Organization-Id', admin.organizationId).send(body);
    assert.is(again.headers['idempotent-replayed'], 'true');
  });

  test(name('a failed request keeps nothing: the key then runs the corrected request'), async () => {
    const key = newKey();
    assertError(await post(admin, key, { name: '' }), 400);
    const fixed = await post(admin, key, { name: `fixed-${key}` });
    assert.is(fixed.status, 201, 'the key is free again');
    // A unique violation is a failure too: the key of a 409 runs again once the conflict is gone.
    const taken = newKey();
    assertError(await post(admin, taken, { name: `fixed-${key}` }), 409);
    await t.http.delete(`/api/tags/${fixed.body.id}`).set(admin.auth).expect(204);
    const retried = await post(admin, taken, { name: `fixed-${key}` });
    assert.is(retried.status, 201);
    assert.is(retried.headers['idempotent-replayed'], undefined);
  });

  test(name('keys belong to their caller: another user, another tenant, run their own request'), async () => {
    const key = newKey();
    const colleague = await userWithRole(t, admin, 'ADMIN');
    const stranger = await newTenant(t, 'Stranger');
    const mine = await post(admin, key, { name: `mine-${key}` });
    const theirs = await post(colleague, key, { name: `mine-${key}-2` });
    const foreign = await post(stranger, key, { name: `mine-${key}` });
    for (const res of [mine, theirs, foreign]) {
      assert.is(res.status, 201, JSON.stringify(res.body));
      assert.is(res.headers['idempotent-replayed'], undefined);
    }
    assert.is.not(foreign.body.id, mine.body.id);
    assert.is(foreign.body.tenantId, stranger.tenantId, "another tenant's key never replays this tenant's record");
  });

  test(name('a key of the wrong form is a 400 and nothing is written; an empty one counts as none'), async () => {
    for (const key of ['x'.repeat(256), 'has space', 'tab\there', 'ünï']) {
      assertError(await t.http.post('/api/tags').set(admin.auth).set('Idempotency-Key', Buffer.from(key).toString('latin1')).send({ name: `bad-${key.length}` }), 400, /Idempotency-Key/);
    }
    assert.is(await tagsNamed('bad-256'), 0);
    assert.is((await post(admin, '', { name: `empty-${newKey()}` })).status, 201);
    assert.is((await post(admin, 'k'.repeat(255), { name: `long-${newKey()}` })).status, 201, '255 characters are allowed');
  });

  test(name('while the first request runs a retry is a 409 with Retry-After; an abandoned claim is taken over'), async () => {
    const key = newKey();
    const body = { name: `running-${key}` };
    await staging.running(admin, key, tagFingerprint(body), 0);
    const busy = await post(admin, key, body);
    assertError(busy, 409, /still running/);
    assert.is(busy.headers['retry-after'], '1');
    assert.is(await tagsNamed(`running-${key}`), 0);
    // Another body with that key is still another request.
    assertError(await post(admin, key, { name: 'other' }), 422);

    const stale = newKey();
    await staging.running(admin, stale, tagFingerprint({ name: `stale-${key}` }), 10 * 60_000);
    const taken = await post(admin, stale, { name: `stale-${key}` });
    assert.is(taken.status, 201, 'a claim older than the running time limit was abandoned');
    assert.is(await tagsNamed(`stale-${key}`), 1);
  });

  test(name('an expired key runs its request again'), async () => {
    const key = newKey();
    const body = { name: `expiring-${key}` };
    const first = await post(admin, key, body);
    assert.is(first.status, 201);
    await staging.expire(admin, key);
    await t.http.delete(`/api/tags/${first.body.id}`).set(admin.auth).expect(204);
    const again = await post(admin, key, body);
    assert.is(again.status, 201);
    assert.is(again.headers['idempotent-replayed'], undefined);
    assert.is.not(again.body.id, first.body.id);
  });

  test(name('creates of every generated resource and of event types take keys; the document says so'), async () => {
    const key = newKey();
    const eventType = { title: `Call ${key}`, duration: 30, durationUnit: 'Minute(s)' };
    const first = await post(admin, key, eventType, '/api/event-type');
    assert.is(first.status, 201, JSON.stringify(first.body));
    assert.is((await post(admin, key, eventType, '/api/event-type')).headers['idempotent-replayed'], 'true');
    const doc = t.openapi as any;
    for (const path of ['/api/tags', '/api/event-type', '/api/employee']) {
      const op = doc.paths[path].post;
      assert.ok(op.parameters.some((p: any) => p.name === 'Idempotency-Key'), path);
      assert.ok(op.responses['201'].headers['Idempotent-Replayed'], path);
      assert.ok(op.responses['409'] && op.responses['422'], path);
    }
    assert.not.ok(doc.paths['/api/tags/search'].post.parameters.some((p: any) => p.name === 'Idempotency-Key'), 'search writes nothing');
  });

  test(name('tear down'), async () => {
    await staging.close();
    await t.close();
  });
}

test('database store: expired entries are swept, live ones kept', async () => {
  const t = await createTestApp();
  try {
    const owner = { tenantId: '00000000-0000-4000-8000-000000000001', userId: '00000000-0000-4000-8000-000000000002' };
    const rows = ['old-1', 'old-2', 'live'].map((key) => ({
      ...owner,
      key,
      fingerprint: 'f',
      state: 'done',
      token: 't',
      answer: JSON.stringify({ status: 201, headers: {}, body: '' }),
      claimedAt: t.db.raw('now()'),
      expiresAt: t.db.raw(key === 'live' ? "now() + interval '1 hour'" : "now() - interval '1 second'"),
    }));
    await t.db(IDEMPOTENCY_TABLE).insert(rows);
    const store = databaseStore(t.db, { ttlMs: 60_000, runningMs: 60_000 }, () => {});
    assert.is(await store.sweep(), 2);
    assert.equal((await t.db(IDEMPOTENCY_TABLE).select('key')).map((r: any) => r.key), ['live']);
  } finally {
    await t.close();
  }
});

test('a route declaring replay whose handler ignores its key: served, and the mistake logged as an error', async () => {
  let runs = 0;
  const careless: Module = {
    name: 'careless',
    routes: () => [
      {
        method: 'POST',
        path: '/api/careless',
        idempotent: { headers: [], replay: () => {} },
        docs: false,
        handler: async (ctx) => {
          runs += 1;
          ctx.status = 201;
          ctx.body = { run: runs };
        },
      },
    ],
  };
  const logged: Array<[string, string]> = [];
  const t = await createTestApp({ modules: [...projectModules, careless], appOptions: { log: (level, message) => void logged.push([level, message]) } });
  try {
    const admin = await newTenant(t);
    const first = await t.http.post('/api/careless').set(admin.auth).set('Idempotency-Key', 'careless-1').send({});
    assert.equal([first.status, first.body], [201, { run: 1 }]);
    assert.ok(logged.some(([level, message]) => level === 'error' && /without taking its key/.test(message)), JSON.stringify(logged));
    assert.is(Number((await t.db(IDEMPOTENCY_TABLE).where({ key: 'careless-1' }).count({ n: '*' }))[0].n), 0, 'no key kept: none was taken');
  } finally {
    await t.close();
  }
});

test('Redis store that does not answer: a create with a key is a 503 and writes nothing; one without a key is served', async () => {
  // Nothing listens on port 1: the store never connects (the app waits for it briefly at start-up).
  const t = await createTestApp({ env: { REDIS_URL: 'redis://127.0.0.1:1' } });
  try {
    const admin = await newTenant(t);
    const name = `unkept-${randomBytes(3).toString('hex')}`;
    const keyed = await t.http.post('/api/tags').set(admin.auth).set('Idempotency-Key', 'k-1').send({ name, color: '#123456' });
    assertError(keyed, 503, /Idempotency keys cannot be checked/);
    assert.is(Number((await t.db('tag').where({ name }).count({ n: '*' }))[0].n), 0);
    const plain = await t.http.post('/api/tags').set(admin.auth).send({ name, color: '#123456' });
    assert.is(plain.status, 201, JSON.stringify(plain.body));
  } finally {
    await t.close();
  }
});

// Two server processes on one PostgreSQL database: a request with a key held in its insert on one
// (a transaction of the test holds the tag's name, so the insert waits on the unique index, its
// key already taken), the same request on the other is a 409; once the first answers, a retry
// anywhere replays it.
for (const store of STORES) {
  (DATABASE_URL ? test : test.skip)(`two processes racing with one key (${store.name} store): one creates, the other is told to wait, then replays`, async () => {
    const schema = `idem_race_${randomBytes(4).toString('hex')}`;
    const env = { DATABASE_URL, DATABASE_SCHEMA: schema, WEB_CONCURRENCY: '1', REDIS_URL: undefined, ...store.env };
    let a: ServerProcess | undefined;
    let b: ServerProcess | undefined;
    const db = knex({ client: 'pg', connection: DATABASE_URL, searchPath: [schema], pool: { min: 0, max: 2 } });
    let hold: Knex.Transaction | undefined;
    try {
      a = await startServer(env);
      b = await startServer(env);
      const [httpA, httpB] = [request(a.url), request(b.url)];
      const email = uniqueEmail('race');
      const reg = await httpA.post('/api/auth/register').send({ user: { firstName: 'Ra', lastName: 'Ce', email }, password: PASSWORD, confirmPassword: PASSWORD });
      assert.is(reg.status, 201, JSON.stringify(reg.body));
      const login = await httpA.post('/api/auth/login').send({ email, password: PASSWORD });
      const auth = { Authorization: `Bearer ${login.body.token}` };
      const body = { name: `raced-${randomBytes(3).toString('hex')}`, color: '#123456' };
      const send = (http: typeof httpA) => http.post('/api/tags').set(auth).set('Idempotency-Key', 'race-1').send(body);

      hold = await db.transaction();
      await hold('tag').insert({ tenantId: login.body.user.tenantId, name: body.name, color: '#000000' });
      let settled: request.Response | undefined;
      const first = send(httpA).then((res) => (settled = res));
      const deadline = Date.now() + 10_000;
      for (;;) {
        const [{ n }] = (await db.raw(`select count(*)::int as n from pg_stat_activity where wait_event_type = 'Lock' and query like '%insert into "tag"%'`)).rows;
        if (n >= 1) break;
        if (settled || Date.now() > deadline) throw new Error(`the first request never reached its insert: ${settled ? `${settled.status} ${JSON.stringify(settled.body)}` : 'still waiting'}`);
        await new Promise((resolve) => setTimeout(resolve, 20));
      }
      const second = await send(httpB);
      assertError(second, 409, /still running/);
      await hold.rollback();
      const created = await first;
      assert.is(created.status, 201, JSON.stringify(created.body));
      const replayed = await send(httpB);
      assert.is(replayed.status, 201);
      assert.is(replayed.headers['idempotent-replayed'], 'true');
      assert.is(replayed.body.id, created.body.id);
      assert.is(Number((await db('tag').where({ name: body.name }).count({ n: '*' }))[0].n), 1);
    } finally {
      if (hold && !hold.isCompleted()) await hold.rollback().catch(() => {});
      await a?.stop();
      await b?.stop();
      await db.destroy();
      killServers();
      await dropSchema(DATABASE_URL!, schema);
    }
  });
}

test.run();
