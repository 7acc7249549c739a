// Dispatch by leading path segments (engine/routing/by-prefix.ts) must answer every request as
// the single router it is built from would: the same route wins, the same 404, the same 405/501
// with the same Allow header. Both are served over HTTP side by side and compared request by request.
// The one intended difference: a fixed path (no parameter) reaches only its own routes, as a
// router holding just those (and the routes that may match any path) would answer.
import Router from '@koa/router';
import Koa from 'koa';
import request from 'supertest';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { errorMiddleware } from '../../engine/http/error-envelope.js';
import { allowedMethods } from '../../engine/routing/allowed-methods.js';
import { fixedPathOf, prefixOfLayer, prefixOfPath, routesByPrefix } from '../../engine/routing/by-prefix.js';

/** A route table with the shapes that matter: fixed paths before /:id, parameters first, prefixes, middleware. */
function routeTable(): Router {
  const router = new Router({ sensitive: true });
  const answer = (name: string) => (ctx: Koa.Context) => {
    ctx.body = { route: name, params: ctx.params, seen: ctx.state.seen ?? [] };
  };
  // Middleware mounted on a prefix runs before the routes under it, whatever group they fall in.
  router.use('/api/things', async (ctx, next) => {
    ctx.state.seen = [...(ctx.state.seen ?? []), 'things-middleware'];
    await next();
  });
  router.get('/api/things/byName', answer('things-by-name'));
  router.get('/api/things', answer('things-list'));
  router.get('/api/things/:id', answer('things-read'));
  router.put('/api/things/:id', answer('things-replace'));
  router.post('/api/things/search', answer('things-search'));
  // A route whose second segment is a parameter may match under any key, and was registered
  // before the routes below: it must still win over them.
  router.get('/api/:kind/count', answer('any-count'));
  router.get('/api/others/count', answer('others-count'));
  router.get('/api/others/:id', answer('others-read'));
  router.delete('/api/others/:id', answer('others-remove'));
  router.get('/docs', answer('docs'));
  router.get('/docs/', answer('docs-slash'));
  router.get('/docs/assets/:version/:file', answer('docs-asset'));
  router.get('/', answer('root'));
  router.get('/:page', answer('page'));
  router.get('/api/deep/a/b/c', answer('deep'));
  return router;
}

function serve(router: Router, dispatch: Koa.Middleware) {
  const app = new Koa();
  app.use(dispatch);
  app.use(router.allowedMethods());
  return request(app.callback());
}

const METHODS = ['GET', 'HEAD', 'PUT', 'POST', 'DELETE', 'PATCH', 'OPTIONS', 'PROPFIND'] as const;
const PATHS = [
  '/api/things', '/api/things/', '/api/things/byName', '/api/things/byName/', '/api/things/42', '/api/things/search',
  '/api/things/42/more', '/api/things/count', '/api/others/count', '/api/others/7', '/api/others', '/api/nothing/count',
  '/api/Things', '/API/things', '/api/things%2F42', '/api', '/api/', '/docs', '/docs/', '/docs//', '/docs/assets/1/a.css',
  '/docs/assets', '/', '/about', '/about/', '//', '/api//things', '/api/deep/a/b/c', '/api/deep/a/b', '/nothing/at/all',
];

/** A router of only the fixed path's own routes and those that may match any path, in their order. */
function fixedPathRouter(router: Router, path: string): Router {
  const alone = new Router(router.opts);
  alone.stack = router.stack.filter((layer) => prefixOfLayer(layer) === undefined || fixedPathOf(layer) === path);
  return alone;
}

const withoutSlash = (path: string) => (path.length > 1 && path.endsWith('/') ? path.slice(0, -1) : path);

test('every method on every path is answered as by the single router (a fixed path: by its own routes alone)', async () => {
  const router = routeTable();
  const single = serve(router, router.routes() as Koa.Middleware);
  const grouped = serve(router, routesByPrefix(router));
  const fixed = new Set(router.stack.flatMap((layer) => fixedPathOf(layer) ?? []));
  let compared = 0;
  for (const path of PATHS) {
    const alone = fixed.has(withoutSlash(path)) ? fixedPathRouter(router, withoutSlash(path)) : undefined;
    const expected = alone ? serve(alone, alone.routes() as Koa.Middleware) : single;
    for (const method of METHODS) {
      const [a, b] = await Promise.all([expected, grouped].map((http) => http[method.toLowerCase() as 'get'](path)));
      const where = `${method} ${path}`;
      assert.is(b.status, a.status, where);
      assert.equal(b.body, a.body, where);
      assert.is(b.headers.allow, a.headers.allow, where);
      compared += 1;
    }
  }
  assert.is(compared, PATHS.length * METHODS.length);
});

test('the route registered first still wins when another group could answer', async () => {
  const router = routeTable();
  const http = serve(router, routesByPrefix(router));
  const byName = await http.get('/api/things/byName');
  assert.equal(byName.body, { route: 'things-by-name', params: {}, seen: ['things-middleware'] });
  assert.equal((await http.get('/api/others/count')).body.route, 'any-count');
  assert.equal((await http.get('/api/things/7')).body, { route: 'things-read', params: { id: '7' }, seen: ['things-middleware'] });
  const notAllowed = await http.delete('/api/things/7');
  assert.is(notAllowed.status, 405);
  assert.is(notAllowed.headers.allow, 'HEAD, GET, PUT');
  assert.is((await http.get('/API/things')).status, 404);
});

test('a fixed path never falls into a /:id: another method is a 405 naming only its own methods, in the envelope', async () => {
  const router = routeTable();
  const app = new Koa();
  app.use(errorMiddleware(() => {}));
  app.use(routesByPrefix(router));
  app.use(allowedMethods());
  const http = request(app.callback());
  const refused = async (res: request.Response, allow: string) => {
    assert.is(res.status, 405, `${res.status} ${JSON.stringify(res.body)}`);
    assert.is(res.headers.allow, allow);
    assert.is(res.body.statusCode, 405);
    assert.is(res.body.error, 'Method Not Allowed');
    assert.type(res.body.message, 'string');
  };
  await refused(await http.get('/api/things/search'), 'POST');
  await refused(await http.get('/api/things/search/'), 'POST');
  await refused(await http.options('/api/things/search'), 'POST');
  await refused(await http.put('/api/things/byName'), 'GET, HEAD');
  await refused(await http.delete('/api/others/count'), 'GET, HEAD');
  // Methods @koa/router does not know (its allowedMethods answers them 501) and OPTIONS are 405 alike.
  await refused(await http.trace('/api/things/42'), 'GET, HEAD, PUT');
  await refused(await (http as any).propfind('/api/things'), 'GET, HEAD');
  await refused(await http.options('/api/things/42'), 'GET, HEAD, PUT');
  // The routes themselves still answer, and an unknown path is still a 404.
  assert.equal((await http.post('/api/things/search')).body.route, 'things-search');
  assert.equal((await http.get('/api/things/byName')).body.route, 'things-by-name');
  assert.equal((await http.get('/api/things/7')).body.route, 'things-read');
  assert.is((await (http as any).propfind('/api/nothing/here')).status, 404);
});

test('a request path keys on its first two segments, without a trailing slash', () => {
  assert.is(prefixOfPath('/api/things/42'), '/api/things');
  assert.is(prefixOfPath('/api/things/'), '/api/things');
  assert.is(prefixOfPath('/api/things'), '/api/things');
  assert.is(prefixOfPath('/docs/'), '/docs');
  assert.is(prefixOfPath('/'), '/');
  assert.is(prefixOfPath('//'), '/');
});

test.run();
