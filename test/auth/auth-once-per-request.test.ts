// One request, one look at its token: the rate limiter (which keys a caller by the token) and
// authentication share a single verification and a single session lookup, even with
// SESSION_CHECK_TTL_MS=0, and still disagree on nothing: a live session's token counts against its
// user and reaches the route; a revoked one counts against the address and is a 401.
import type { Knex } from 'knex';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { revokeUserSessions } from '../../auth/session/revoke.js';
import { newTenant, type Session } from '../helpers/accounts.js';
import { createTestApp, type TestApp } from '../helpers/app.js';
import { assertUnauthorized } from '../helpers/error-envelope.js';
import { siblingApps } from '../helpers/ratelimit.js';

let t: TestApp;
let owner: Session & { organizationId: string };
const siblings = siblingApps(() => t, { env: { SESSION_CHECK_TTL_MS: '0' } });

test.before(async () => {
  t = await createTestApp();
  owner = await newTenant(t);
});
test.after.each(() => siblings.closeAll());
test.after(async () => {
  await t.close();
});

/** Counts the statements on the session table while `run` goes. */
async function sessionLookups(db: Knex, run: () => Promise<void>): Promise<number> {
  let lookups = 0;
  const listener = (query: { sql: string }) => {
    if (query.sql.includes('user_session')) lookups += 1;
  };
  db.on('query', listener);
  try {
    await run();
  } finally {
    db.off('query', listener);
  }
  return lookups;
}

test('a live token: one session lookup, counted against its user, answered by the route', async () => {
  const app = siblings.create();
  const tag = await t.http.post('/api/tags').set(owner.auth).send({ name: 'once', color: 'red', organizationId: owner.organizationId });
  assert.is(tag.status, 201, JSON.stringify(tag.body));
  let res: any;
  const lookups = await sessionLookups(t.db, async () => {
    res = await app.http.get(`/api/tags/${tag.body.id}`).set(owner.auth);
  });
  assert.is(res.status, 200, JSON.stringify(res.body));
  assert.is(res.body.id, tag.body.id);
  // The owner is a SUPER_ADMIN: the admin tier, not the anonymous one, counted this request.
  assert.match(res.headers['ratelimit-policy'], /"admin"/);
  assert.not.match(res.headers['ratelimit-policy'], /"anonymous"/);
  assert.is(lookups, 1);
});

test('a revoked token: one session lookup, counted against the address, and a 401', async () => {
  const app = siblings.create();
  const victim = await newTenant(t, 'Revoked');
  await revokeUserSessions(t.engine.broadcast, t.db, victim.userId);
  let res: any;
  const lookups = await sessionLookups(t.db, async () => {
    res = await app.http.get('/api/tags').set(victim.auth);
  });
  assertUnauthorized(res);
  assert.match(res.headers['ratelimit-policy'], /"anonymous"/);
  assert.is(lookups, 1);
});

test('a public route reads the token looked up for the limiter: /api/auth/authenticated', async () => {
  const app = siblings.create();
  let res: any;
  const lookups = await sessionLookups(t.db, async () => {
    res = await app.http.get('/api/auth/authenticated').set(owner.auth);
  });
  assert.is(res.status, 200);
  assert.is(res.body, true);
  assert.is(lookups, 1);
  const bad = await app.http.get('/api/auth/authenticated').set({ Authorization: `Bearer ${owner.token}x` });
  assert.is(bad.status, 200);
  assert.is(bad.body, false);
});

test.run();
