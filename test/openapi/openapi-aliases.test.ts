// The aliases kept for Ever Gauzy clients (a definition's `aliases:`) in the OpenAPI document:
// served as the paths they stand for, left out of `paths`, each listed in the x-aliases of its
// path item and named in the intro's one line; a request to an alias is judged by the operation
// of the path item that lists it. The aliases are read from the registry and the router, never
// from a list here, so a new one is held to all of this with no test code.
import { randomUUID } from 'node:crypto';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { newTenant, type Session } from '../helpers/accounts.js';
import { createTestApp, type TestApp } from '../helpers/app.js';
import { routerLayers } from '../helpers/isolation.js';
import { OpenApiChecker, supertestAnswer } from '../helpers/openapi-checker.js';
import { aliasesOf, operationsOf } from '../helpers/openapi.js';

let t: TestApp;
let doc: Record<string, any>;
let checker: OpenApiChecker;
let admin: Session;

test.before(async () => {
  t = await createTestApp();
  doc = t.openapi as Record<string, any>;
  checker = new OpenApiChecker(doc);
  admin = await newTenant(t, 'Aliases Co');
});
test.after(async () => {
  await t?.close();
});

/** Each alias of a definition as a path prefix, with the resource's own: `/api/tag` and `/api/tags`. */
const aliasPrefixes = () =>
  [...t.engine.registry.values()].filter((r) => r.routes).flatMap((r) => r.paths.slice(1).map((alias) => ({ alias: `/api/${alias}`, path: `/api/${r.paths[0]}` })));

/** Whether a path is the prefix or lies below it (`/api/tag/{id}` under `/api/tag`, `/api/tags` not). */
const under = (path: string, prefix: string) => path === prefix || path.startsWith(`${prefix}/`);

/** The paths of a document that lie under an alias: none, where aliases are left out. */
const aliasPathsIn = (document: Record<string, any>) => Object.keys(document.paths).filter((path) => aliasPrefixes().some(({ alias }) => under(path, alias)));

test('the registry has aliases, and none of them, nor any path below one, is a path of the document', () => {
  const prefixes = aliasPrefixes();
  assert.ok(prefixes.length >= 5, `${prefixes.length} aliases in the registry`);
  assert.ok(prefixes.some(({ alias, path }) => alias === '/api/tag' && path === '/api/tags'));
  assert.equal(aliasPathsIn(doc), [], 'alias paths are back in paths: list them in x-aliases instead (engine/route.ts aliasOf)');
  // The check sees an alias that came back.
  const doctored = structuredClone(doc);
  doctored.paths['/api/tag/{id}'] = doctored.paths['/api/tags/{id}'];
  assert.equal(aliasPathsIn(doctored), ['/api/tag/{id}']);
});

test('every alias route of the router is in the x-aliases of the path item it stands for, with its methods; every listed alias is served', () => {
  const listed = new Map(aliasesOf(doc).map(({ alias, path }) => [alias, path]));
  const served = new Map<string, Set<string>>();
  for (const layer of routerLayers(t)) {
    const path = layer.path.replace(/:(\w+)/g, '{$1}');
    if (!path.startsWith('/api/')) continue;
    const methods = served.get(path) ?? new Set<string>();
    for (const method of layer.methods) methods.add(method.toLowerCase());
    served.set(path, methods);
  }
  // A module's alias of a path outside a definition's prefix (/api/import/tags for /api/import/tag)
  // is known only from its declaration.
  const declared = new Map(t.routes.flatMap((r) => (r.aliasOf ? [[r.path.replace(/:(\w+)/g, '{$1}'), r.aliasOf.replace(/:(\w+)/g, '{$1}')]] : [])));
  let checked = 0;
  for (const [path, methods] of served) {
    const prefix = aliasPrefixes().find(({ alias }) => under(path, alias));
    const canonical = prefix ? `${prefix.path}${path.slice(prefix.alias.length)}` : declared.get(path);
    if (!canonical) continue;
    assert.is(listed.get(path), canonical, `${path} is listed in the x-aliases of ${canonical}`);
    const documented = Object.keys(doc.paths[canonical]).filter((key) => key !== 'x-aliases');
    // HEAD comes with GET (koa answers it): it is documented only where the path item declares it.
    const answered = [...methods].filter((m) => m !== 'head' || documented.includes('head'));
    assert.equal(answered.sort(), documented.sort(), `${path} answers the methods of ${canonical}`);
    checked++;
  }
  assert.ok(checked >= 40, `${checked} alias paths of the router checked`);
  for (const alias of listed.keys()) assert.ok(served.has(alias), `${alias} is listed in x-aliases but not served`);
  assert.is(listed.size, checked, 'every alias listed is one of the router');
});

test('operationIds are unique and name no alias; every operation is in paths once', () => {
  const operations = operationsOf(doc);
  const ids = operations.map(({ op }) => op.operationId);
  assert.is(new Set(ids).size, ids.length);
  assert.equal(ids.filter((id) => /Via[A-Z]/.test(id)), [], 'operationIds of aliases');
  assert.equal(operations.filter(({ op }) => /Alias of \/api\//.test(op.description ?? '')).map(({ path }) => path), []);
});

test('the intro names every alias of the registry once, in one line, alias → path', () => {
  const lines = String(doc.info.description).split('\n').filter((line) => line.includes('x-aliases'));
  assert.is(lines.length, 1, doc.info.description);
  for (const { alias, path } of aliasPrefixes()) assert.ok(lines[0].includes(`${alias} → ${path}`), `${alias} → ${path} in ${lines[0]}`);
});

/** A request sent to an alias, judged by the document: its answer and, accepted, what it sent. */
async function judged(method: 'get' | 'post' | 'patch' | 'delete', path: string, body?: unknown) {
  let req = t.http[method](path).set(admin.auth);
  if (body !== undefined) req = req.send(body as object);
  const res = await req;
  const found = checker.operationFor(method, path);
  const problems = [
    ...checker.checkResponse(supertestAnswer(method, path, res)),
    ...checker.checkRequest({ method, path, headers: [['Content-Type', 'application/json']], json: body }, res.status),
  ];
  return { res, found, problems };
}

test("an alias request's answer is judged by the operation of the path item listing it, and fits it", async () => {
  const name = `alias-${randomUUID().slice(0, 8)}`;
  const created = await judged('post', '/api/tag', { name, color: '#123456' });
  assert.is(created.res.status, 201, created.res.text);
  assert.is(created.found?.template, '/api/tags');
  assert.is(created.found?.matched, '/api/tag');
  assert.is(created.found?.op.operationId, doc.paths['/api/tags'].post.operationId);
  const id = created.res.body.id;
  const requests: Array<[Parameters<typeof judged>[0], string, unknown?]> = [
    ['get', `/api/tag/${id}`],
    ['patch', `/api/tag/${id}`, { color: '#654321' }],
    ['get', '/api/tag?take=5&order[name]=ASC'],
    ['get', '/api/tag/count'],
    ['get', '/api/tag/pagination'],
    ['post', '/api/tag/search', { where: { name }, take: 5 }],
    ['get', `/api/tag/getByName/${name}`],
    ['post', '/api/tag/bulk', [{ name: `${name}-2`, color: '#000000' }]],
    ['get', '/api/tasks?take=2'],
    ['get', '/api/timesheet/time-log?startDate=2026-01-01&endDate=2026-01-31'],
    ['delete', `/api/tag/${id}`],
  ];
  for (const [method, path, body] of requests) {
    const { res, found, problems } = await judged(method, path, body);
    assert.ok(res.status < 300, `${method.toUpperCase()} ${path}: ${res.status} ${res.text.slice(0, 200)}`);
    assert.ok(found && found.matched !== found.template, `${method.toUpperCase()} ${path} is judged as an alias (${found?.template})`);
    assert.equal(problems, [], `${method.toUpperCase()} ${path}`);
  }
  // An answer the operation does not declare is a problem on the alias too, named by both paths.
  const wrong = checker.checkResponse({ method: 'GET', path: `/api/tag/${id}`, status: 418, headers: {}, body: '' });
  assert.is(wrong.length, 1);
  assert.match(wrong[0], /^418 is not a status GET \/api\/tag\/\{id\} \(alias of \/api\/tags\/\{id\}\) declares/);
  // Without x-aliases the path is nobody's: the alias is resolved through the extension alone.
  const bare = structuredClone(doc);
  for (const item of Object.values<Record<string, unknown>>(bare.paths)) delete item['x-aliases'];
  assert.is(new OpenApiChecker(bare).operationFor('GET', `/api/tag/${id}`), undefined);
});

test.run();
