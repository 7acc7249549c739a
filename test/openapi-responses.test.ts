// The OpenAPI document is the service's truth: every operation of it is sent its fixtures (valid
// requests built from the document's examples and the fuzz world's sample records, and each of
// them as a HEAD where GET answers) and every answer is checked against the document by
// test/helpers/openapi-responses.ts: a declared status, declared headers with fitting values, a
// body valid against the declared schema (none on HEAD, 204 and 304). The fuzz suite runs the
// same checker on every generated request (test/helpers/fuzz/oracle.ts). The rate limits are on
// here (scaled up so none is used up), so their headers are checked too; a used-up limit's 429
// is checked on an app of its own.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { createTestApp, type TestApp } from './helpers/app.js';
import { send } from './helpers/fuzz/requests.js';
import { buildWorld, type World } from './helpers/fuzz/world.js';
import { login } from './helpers/accounts.js';
import { Fixtures } from './helpers/openapi-fixtures.js';
import { OpenApiChecker } from './helpers/openapi-checker.js';

/** Rate limits on, scaled so that none is used up: their headers are on every answer. */
const LIMITS_ON = { RATE_LIMITS: 'on', RATE_LIMIT_SCALE: '1000' };
/** Every social provider configured, so that its routes answer as they do in production (they redirect; nothing is fetched). */
const SOCIAL_LOGIN = Object.fromEntries(['GOOGLE', 'GITHUB', 'MICROSOFT', 'FACEBOOK'].flatMap((p) => [[`${p}_CLIENT_ID`, `${p.toLowerCase()}-client`], [`${p}_CLIENT_SECRET`, `${p.toLowerCase()}-secret`]]));

let t: TestApp;
let w: World;
let checker: OpenApiChecker;
const logged: unknown[] = [];

test.before(async () => {
  t = await createTestApp({ env: { ...LIMITS_ON, ...SOCIAL_LOGIN }, appOptions: { logError: (err) => logged.push(err) } });
  w = await buildWorld(t, logged);
  checker = new OpenApiChecker(t.openapi as Record<string, any>);
});
test.after(async () => {
  await w?.close();
  await t?.close();
});

/** Whether the operation takes the bearer token (the global requirement, or its own naming it). */
const takesToken = (doc: Record<string, any>, path: string, method: string) => {
  const op = doc.paths[path][method.toLowerCase()] ?? doc.paths[path].get;
  return op.security === undefined || op.security.some((s: object) => 'bearer' in s);
};

test('every operation answers its fixtures as the document describes', async () => {
  const doc = t.openapi as Record<string, any>;
  const fixtures = new Fixtures(w);
  const problems: string[] = [];
  const statuses = new Map<string, number[]>();
  // Deletes last: the records they remove are the ones the other operations read.
  const operations = w.operations.filter((op) => op.documented && !op.opaque).sort((a, b) => Number(a.method === 'DELETE') - Number(b.method === 'DELETE'));
  // One session, renewed when an operation has ended it (a password change, a logout): an answer
  // of 401 to a request that sent it is then sent again with a new one.
  let token = w.acme.token;
  const renew = async () => {
    token = (await login(t, w.acme.email).catch(() => undefined))?.token ?? token;
  };
  for (const op of operations) {
    const withToken = takesToken(doc, op.path, op.method);
    for (let request of await fixtures.requestsFor(op, withToken ? token : undefined)) {
      let res = await send(w.origin, request);
      if (res.status === 401 && withToken) {
        await renew();
        request = { ...request, headers: request.headers.map(([name, value]) => [name, name === 'Authorization' ? `Bearer ${token}` : value]) };
        res = await send(w.origin, request);
      }
      statuses.set(op.id, [...(statuses.get(op.id) ?? []), res.status]);
      const json = request.body && 'json' in request.body ? request.body.json : undefined;
      const found = [
        ...checker.checkResponse({ method: request.method, path: request.path, status: res.status, headers: res.headers, body: res.raw }),
        ...checker.checkRequest({ method: request.method, path: request.path, headers: request.headers, json }, res.status),
      ];
      if (res.status >= 500) found.push(`${res.status}: a server error ${res.text.slice(0, 200)}`);
      problems.push(...found.map((p: string) => `${p}\n      request: ${request.method} ${request.path} ${request.body ? JSON.stringify(request.body).slice(0, 300) : ''}`));
    }
  }
  const failing = [...statuses].filter(([, list]) => !list.some((s) => s < 300)).map(([id, list]) => `${id} ${list.join(',')}`);
  console.log(`fixtures without a 2xx (${failing.length} of ${statuses.size}):\n  ${failing.join('\n  ')}`);
  assert.equal(problems, [], `\n  ${problems.join('\n  ')}`);
});

test.run();
