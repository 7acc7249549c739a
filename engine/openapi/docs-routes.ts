// STUB: replaced by the Swagger UI routes.
import type Router from '@koa/router';

export function registerDocs(router: Router, document: Record<string, unknown>) {
  router.get('/swg-json', (ctx) => {
    ctx.body = document;
  });
}
