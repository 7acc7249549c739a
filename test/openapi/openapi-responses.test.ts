// The OpenAPI document is the service's truth: every operation of it is sent its fixtures (valid
// requests built from the document's examples and the fuzz world's sample records, and each of
// them as a HEAD where GET answers) and every answer is checked against the document by
// test/helpers/openapi-checker.ts: a declared status, declared headers with fitting values, a
// body valid against the declared schema (none on HEAD, 204 and 304). The fuzz suite runs the
// same checker on every generated request (test/helpers/fuzz/oracle.ts). The rate limits are on
// here (scaled up so none is used up), so their headers are checked too; a used-up limit's 429
// is checked on an app of its own.
import request from 'supertest';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { createTestApp, type TestApp } from '../helpers/app.js';
import { send } from '../helpers/fuzz/requests.js';
import { buildWorld, type World } from '../helpers/fuzz/world.js';
import { login } from '../helpers/accounts.js';
import { Fixtures } from '../helpers/openapi-fixtures.js';
import { OpenApiChecker, supertestAnswer } from '../helpers/openapi-checker.js';
import { servedOperationsOf } from '../helpers/openapi.js';

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

/** Whether the operation takes the bearer token (the global requirement, or its own naming it); `path` the path item declaring it. */
const takesToken = (doc: Record<string, any>, path: string, method: string) => {
  const op = doc.paths[path][method.toLowerCase()] ?? doc.paths[path].get;
  return op.security === undefined || op.security.some((s: object) => 'bearer' in s);
};

test('every operation answers its fixtures as the document describes', async () => {
  const doc = t.openapi as Record<string, any>;
  const fixtures = new Fixtures(w);
  const problems: string[] = [];
  const statuses = new Map<string, number[]>();
  // Writes first (a record a create or an upload makes is what the reads after it name), deletes
  // last (the records they remove are the ones the other operations read).
  const rank = (method: string) => (method === 'POST' ? 0 : method === 'DELETE' ? 2 : 1);
  const operations = w.operations.filter((op) => op.documented && !op.opaque).sort((a, b) => rank(a.method) - rank(b.method));
  // One session, renewed when an operation has ended it (a password change, a logout): an answer
  // of 401 to a request that sent it is then sent again with a new one.
  let token = w.acme.token;
  const renew = async () => {
    token = (await login(t, w.acme.email).catch(() => undefined))?.token ?? token;
  };
  for (const op of operations) {
    const withToken = takesToken(doc, op.documentedAt ?? op.path, op.method);
    // Signing out ends the session of the token sent: it gets one of its own, never the one the
    // world's sample records are made with (the fuzz suite does the same).
    const own = withToken && op.path === '/api/auth/logout' ? (await login(t, w.acme.email)).token : undefined;
    for (let request of await fixtures.requestsFor(op, withToken ? own ?? token : undefined)) {
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
  assert.equal(problems, [], `\n  ${problems.join('\n  ')}`);
  // The fixtures reach the success answers, not only the errors: all but those that need what no
  // document example can hold (a real password, an emailed code, a provider's callback, a stored
  // file) and the deletes of an alias whose record the canonical path deleted.
  const failing = [...statuses].filter(([, list]) => !list.some((s) => s < 400)).map(([id, list]) => `${id} ${list.join(',')}`);
  assert.ok(failing.length <= statuses.size * 0.1, `${failing.length} of ${statuses.size} operations answered their fixtures with errors only:\n  ${failing.join('\n  ')}`);
});

/** Every `example` of the document, with the pointer of the schema it illustrates. */
function examples(doc: Record<string, any>): Array<{ at: string; schemaAt: string; value: unknown }> {
  const found: Array<{ at: string; schemaAt: string; value: unknown }> = [];
  const escape = (s: string) => encodeURIComponent(s.replace(/~/g, '~0').replace(/\//g, '~1'));
  const walk = (node: unknown, at: string, key: string) => {
    if (node === null || typeof node !== 'object') return;
    const object = node as Record<string, any>;
    // A property named "example" of a schema's properties is a property, not an example.
    if (!Array.isArray(node) && key !== 'properties' && 'example' in object) {
      // A parameter's or a media type's example illustrates its schema; a schema's, itself.
      const owner = typeof object.in === 'string' || (object.schema && !object.type) ? `${at}/schema` : at;
      found.push({ at, schemaAt: owner, value: object.example });
    }
    for (const [k, v] of Object.entries(object)) if (k !== 'example' && k !== 'examples') walk(v, `${at}/${escape(k)}`, k);
  };
  walk({ paths: doc.paths, components: doc.components }, '#', '');
  return found;
}

test('every example in the document fits the schema it illustrates', () => {
  const doc = t.openapi as Record<string, any>;
  const all = examples(doc);
  assert.ok(all.length > 100, `${all.length} examples`);
  const wrong = all.flatMap(({ at, schemaAt, value }) => {
    const problem = checker.fits(schemaAt, value);
    return problem ? [`${at}: ${JSON.stringify(value).slice(0, 120)}: ${problem}`] : [];
  });
  assert.equal(wrong, [], wrong.join('\n'));
});

test('HEAD operations declare no body, on any of their answers', () => {
  const doc = t.openapi as Record<string, any>;
  const heads = Object.entries<Record<string, any>>(doc.paths).filter(([, item]) => item.head);
  assert.ok(heads.length > 0);
  for (const [path, item] of heads) {
    for (const [status, response] of Object.entries<Record<string, any>>(item.head.responses)) {
      const resolved = response.$ref ? doc.components.responses[response.$ref.split('/').pop()] : response;
      assert.is(resolved.content, undefined, `HEAD ${path} ${status}`);
    }
  }
});

test('a used-up rate limit: every operation answers its 429 as the document describes', async () => {
  // Every limit scaled down to one request a window: after the first, each anonymous request is refused.
  const limited = await createTestApp({ env: { RATE_LIMITS: 'on', RATE_LIMIT_SCALE: '0.001' } });
  try {
    const http = request(limited.koa.callback());
    const doc = limited.openapi as Record<string, any>;
    const judge = new OpenApiChecker(doc);
    const problems: string[] = [];
    let refused = 0;
    // Aliases too: their 429 is judged by the operation of the path item listing them.
    for (const { path, method } of servedOperationsOf(doc)) {
      const url = path.replace(/\{[^}]+\}/g, '00000000-0000-4000-8000-000000000000');
      const res = await http[method as 'get'](url);
      if (res.status === 429) refused++;
      problems.push(...judge.checkResponse(supertestAnswer(method, url, res)));
    }
    assert.ok(refused > servedOperationsOf(doc).length / 2, `${refused} answers were 429`);
    assert.equal(problems, [], problems.join('\n'));
  } finally {
    await limited.close();
  }
});

test.run();
