// Share links count against the anonymous tier (limits.yaml `anonymous:`): a customer's 101st
// request in a minute is a 429, and a bearer token sent along neither moves the request to its
// user's tier nor spends its user's allowance. Links are made through the test app with limits
// off; the counting happens on a sibling app with limits on (test/helpers/ratelimit.ts).
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { createTestApp, type TestApp } from '../helpers/app.js';
import { assertLimitHeaders, assertStatuses, assertTooMany, countsOf, policiesOf, sendMany, siblingApps } from '../helpers/ratelimit.js';
import { buildShareWorld, publicUrl, share, type ShareWorld } from '../helpers/share-links.js';

let t: TestApp;
let w: ShareWorld;
let url: string;

const apps = siblingApps(() => t);

test.before(async () => {
  t = await createTestApp();
  w = await buildShareWorld(t);
  url = publicUrl('invoice', w.invoice.id, (await share(t, w.acme, w.invoice.id)).token);
});
test.after.each(() => apps.closeAll());
test.after(async () => {
  await t?.close();
});

test('an anonymous customer gets 100 opens a minute, then 429 from the anonymous tier', async () => {
  const app = apps.create();
  const first = await app.http.get(url);
  assert.is(first.status, 200, JSON.stringify(first.body));
  assertLimitHeaders(first, { anonymous: { q: 100, w: 60, r: 99 }, 'GET /api/*': { q: 1000, w: 60, r: 999 } });
  assertStatuses(await sendMany(await app.url(), 99, { path: url }), 200);
  assertTooMany(await app.http.get(url), 'anonymous', 60);
  // The PUT of an estimate is counted in the same tier.
  assertTooMany(await app.http.put(publicUrl('estimate', w.estimate.id, 'x')).send({ status: 'ACCEPTED' }), 'anonymous', 60);
});

test("a bearer token sent along counts as anonymous, by address: not its user's tier, and not its user's count", async () => {
  const app = apps.create();
  const withToken = await app.http.get(url).set(w.acme.auth);
  assert.is(withToken.status, 200);
  assertLimitHeaders(withToken, { anonymous: { q: 100, w: 60, r: 99 }, 'GET /api/*': { q: 1000, w: 60, r: 999 } });
  assert.not.ok(policiesOf(withToken).has('admin'), 'the SUPER_ADMIN token did not buy the admin tier');
  // With and without a token, one count: the client address's.
  assertStatuses(await sendMany(await app.url(), 99, (i) => ({ path: url, headers: i % 2 ? w.acme.auth : {} })), 200);
  assertTooMany(await app.http.get(url).set(w.acme.auth), 'anonymous', 60);
  // The token's user still has its own allowance on its own routes.
  const own = await app.http.get('/api/invoice').set(w.acme.auth);
  assert.is(own.status, 200, JSON.stringify(own.body));
  assert.is(countsOf(own).get('admin')?.r, 4999, 'none of the 101 opens counted against the user');
});

test.run();
