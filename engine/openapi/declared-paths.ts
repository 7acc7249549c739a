// The document's paths, read off the route declarations (engine/route.ts): each documented route
// gives its operation, with `security` from its access and, when it validates a body with a
// schema and documents none itself, that schema as its request body; an idempotent route, its key.
import type { OpenApiPaths } from '../module.js';
import type { Route } from '../route.js';
import { BEARER_SCHEME } from './components.js';
import { jsonBody } from './fragments.js';
import { idempotentOperation } from './idempotency-fragments.js';
import { toOpenApiSchema } from './schema-conversion.js';

/** The order operations take in a path item, whatever order their routes were declared in. */
const METHOD_ORDER = ['get', 'head', 'post', 'put', 'patch', 'delete'];

/** `/api/tags/getByName/:name` as OpenAPI spells it: `/api/tags/getByName/{name}`. */
export const openApiPath = (routePath: string) => routePath.replace(/:([A-Za-z0-9_]+)/g, '{$1}');

function securityOf(route: Route): unknown[] | undefined {
  if (route.access === 'public') return [];
  // Either no credentials at all or the bearer token.
  if (route.access === 'optional') return [{}, { [BEARER_SCHEME]: [] }];
  return undefined;
}

function operationOf(route: Route, where: string): Record<string, unknown> {
  const docs = route.docs as Record<string, unknown>;
  if ('security' in docs) throw new Error(`OpenAPI: ${where} documents security itself; its declaration's access says it`);
  let operation = { ...docs };
  const security = securityOf(route);
  if (security) operation.security = security;
  if (route.schemas?.body && !operation.requestBody) operation.requestBody = jsonBody(toOpenApiSchema(route.schemas.body));
  if (route.idempotent) operation = idempotentOperation(operation);
  return operation;
}

/** Every documented route's operation by path and method; the same method on one path twice is a start-up error. */
export function declaredPaths(routes: Route[]): OpenApiPaths {
  const paths: OpenApiPaths = {};
  for (const route of routes) {
    if (route.docs === false) continue;
    const path = openApiPath(route.path);
    const method = route.method.toLowerCase();
    const where = `${route.method} ${path}`;
    const item = (paths[path] ??= {});
    if (item[method]) throw new Error(`OpenAPI: ${where} is declared twice`);
    item[method] = operationOf(route, where);
  }
  for (const [path, item] of Object.entries(paths)) {
    paths[path] = Object.fromEntries(Object.entries(item).sort(([a], [b]) => METHOD_ORDER.indexOf(a) - METHOD_ORDER.indexOf(b)));
  }
  return paths;
}

/** `METHOD path` (the document's spelling) of each route the rate limits count as anonymous. */
export function anonymousOperations(routes: Route[]): Set<string> {
  return new Set(routes.filter((r) => r.rateLimit === 'anonymous').map((r) => `${r.method} ${openApiPath(r.path)}`));
}
