// The document's paths, read off the route declarations (engine/route.ts): each documented route
// gives its operation, with `security` from its access and, when it validates a body with a
// schema and documents none itself, that schema as its request body; an idempotent route, its key.
// An alias route gives no operation: its path is listed in `x-aliases` of the path it aliases.
import type { OpenApiPaths } from '../module.js';
import type { Route } from '../route.js';
import { BEARER_SCHEME } from './components.js';
import { ALIASES_EXTENSION, jsonBody } from './fragments.js';
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

/**
 * Every documented route's operation by path and method, and on each path item the paths of its
 * aliases (`x-aliases`). Start-up errors: the same method on one path twice; an alias of a method
 * its path does not document, or with other access; an alias path whose methods are not exactly
 * its path's (its 405's Allow would then differ from what x-aliases promises).
 */
export function declaredPaths(routes: Route[]): OpenApiPaths {
  const paths: OpenApiPaths = {};
  const documented = new Map<string, Route>();
  for (const route of routes) {
    if (route.docs === false) continue;
    const path = openApiPath(route.path);
    const method = route.method.toLowerCase();
    const where = `${route.method} ${path}`;
    if (route.aliasOf) throw new Error(`OpenAPI: ${where} is an alias: declare it with docs: false, its operation is that of ${route.aliasOf}`);
    const item = (paths[path] ??= {});
    if (item[method]) throw new Error(`OpenAPI: ${where} is declared twice`);
    item[method] = operationOf(route, where);
    documented.set(where, route);
  }
  const aliases = aliasesOf(routes, paths, documented);
  for (const [path, item] of Object.entries(paths)) {
    const sorted = Object.fromEntries(Object.entries(item).sort(([a], [b]) => METHOD_ORDER.indexOf(a) - METHOD_ORDER.indexOf(b)));
    const listed = aliases.get(path);
    paths[path] = listed ? { [ALIASES_EXTENSION]: [...listed].sort(), ...sorted } : sorted;
  }
  return paths;
}

/** The alias paths of each documented path, checked against the routes they alias. */
function aliasesOf(routes: Route[], paths: OpenApiPaths, documented: Map<string, Route>): Map<string, Set<string>> {
  const canonicalOf = new Map<string, string>();
  const methodsOf = new Map<string, Set<string>>();
  for (const route of routes) {
    if (!route.aliasOf) continue;
    const alias = openApiPath(route.path);
    const canonical = openApiPath(route.aliasOf);
    const where = `${route.method} ${alias}`;
    const target = documented.get(`${route.method} ${canonical}`);
    if (!target) throw new Error(`OpenAPI: ${where} is an alias of ${route.method} ${canonical}, which is not documented`);
    if ((target.access ?? 'caller') !== (route.access ?? 'caller') || (target.rateLimit ?? 'caller') !== (route.rateLimit ?? 'caller')) {
      throw new Error(`OpenAPI: ${where} is an alias of ${canonical}: declare it with the same access and rate-limit keying`);
    }
    if (paths[alias]) throw new Error(`OpenAPI: ${alias} is both documented and an alias of ${canonical}`);
    const before = canonicalOf.get(alias);
    if (before && before !== canonical) throw new Error(`OpenAPI: ${alias} is an alias of both ${before} and ${canonical}`);
    canonicalOf.set(alias, canonical);
    methodsOf.set(alias, (methodsOf.get(alias) ?? new Set()).add(route.method.toLowerCase()));
  }
  const byCanonical = new Map<string, Set<string>>();
  for (const [alias, canonical] of canonicalOf) {
    const own = [...methodsOf.get(alias)!].sort();
    const theirs = Object.keys(paths[canonical]).sort();
    if (own.join() !== theirs.join()) {
      throw new Error(`OpenAPI: ${alias} (${own.join(', ')}) is an alias of ${canonical} (${theirs.join(', ')}): it must alias every method of it and no other`);
    }
    byCanonical.set(canonical, (byCanonical.get(canonical) ?? new Set()).add(alias));
  }
  return byCanonical;
}

/** `METHOD path` (the document's spelling) of each route the rate limits count as anonymous. */
export function anonymousOperations(routes: Route[]): Set<string> {
  return new Set(routes.filter((r) => r.rateLimit === 'anonymous').map((r) => `${r.method} ${openApiPath(r.path)}`));
}
