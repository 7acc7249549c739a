// The OpenAPI 3.0 document, built once at start-up from the route declarations (engine/route.ts)
// that the routes, their checks and validators come from, and the compiled definitions' schemas.
import { REQUEST_ID_HEADER } from '../http/request-id.js';
import type { LimitTable } from '../ratelimit/policy.js';
import type { Engine, Module, OpenApiPaths } from '../module.js';
import type { Route } from '../route.js';
import { BEARER_SCHEME, buildComponents } from './components.js';
import { everyAnswerHeaders } from './every-answer-headers.js';
import { errorResponses, OPERATION_METHODS as METHODS, tenantHeaderParameter, tenantQueryParameter } from './fragments.js';
import { anonymousOperations, declaredPaths } from './declared-paths.js';
import { withRateLimits } from './rate-limit-fragments.js';
import { aliasesInWords, description, GENERIC_DOCUMENT_INFO, type DocumentInfo } from './intro.js';

export type OpenApiDocument = Record<string, unknown> & { paths: OpenApiPaths };

export { GENERIC_DOCUMENT_INFO, type DocumentInfo, type ReferencePages } from './intro.js';

function operations(paths: OpenApiPaths): Array<Record<string, unknown>> {
  return Object.values(paths).flatMap((item) =>
    Object.entries(item).filter(([method]) => METHODS.has(method)).map(([, op]) => op as Record<string, unknown>),
  );
}

/** Whether an operation takes the bearer token: the global requirement, or its own naming the scheme. */
function takesToken(op: Record<string, unknown>): boolean {
  const security = op.security as Array<Record<string, unknown>> | undefined;
  return security === undefined || security.some((requirement) => BEARER_SCHEME in requirement);
}

/**
 * The Tenant-Id header and the tenantId query parameter are checked wherever a token is
 * (auth/authenticate.ts), so every operation that takes one documents both, modules' included,
 * without each having to remember them.
 */
function withTenantHeader(paths: OpenApiPaths): OpenApiPaths {
  return Object.fromEntries(
    Object.entries(paths).map(([path, item]) => [
      path,
      Object.fromEntries(
        Object.entries(item).map(([method, value]) => {
          const op = value as Record<string, unknown>;
          if (!METHODS.has(method) || !takesToken(op)) return [method, op];
          const parameters = (op.parameters as object[] | undefined) ?? [];
          const listed = (ref: string) => parameters.some((p) => (p as { $ref?: string }).$ref === ref);
          const added = [tenantHeaderParameter, tenantQueryParameter].filter((p) => !listed(p.$ref));
          return [method, added.length ? { ...op, parameters: [...parameters, ...added] } : op];
        }),
      ),
    ]),
  );
}

/**
 * A URL whose percent-escapes are not UTF-8 is a 400 on every route (http/text.ts): operations
 * that take no parameter document it too.
 */
function withBadRequest(paths: OpenApiPaths) {
  for (const op of operations(paths)) {
    const responses = (op.responses ?? {}) as Record<string, object>;
    if (responses['400']) continue;
    op.responses = Object.fromEntries(Object.entries({ ...responses, ...errorResponses(400) }).sort(([a], [b]) => a.localeCompare(b)));
  }
}

/** X-Request-Id on every answer of every operation (engine/http/request-id.ts sends it on all of them). */
function withRequestIdHeader(paths: OpenApiPaths, components: Record<string, any>) {
  components.headers = {
    ...components.headers,
    [REQUEST_ID_HEADER]: {
      description: 'The id of this request: the one it sent in X-Request-Id when that is a plain token (letters, digits, `._:@-`, up to 128), else a new UUID.',
      schema: { type: 'string', example: '0b6f3c5e-8a0d-4a3e-9c57-2f1d9e7b4c21' },
    },
  };
  const header = { $ref: `#/components/headers/${REQUEST_ID_HEADER}` };
  for (const op of operations(paths)) {
    const responses = (op.responses ?? {}) as Record<string, Record<string, any>>;
    for (const [status, response] of Object.entries(responses)) {
      // A shared response ($ref) gets the header in its component; the others here.
      if (response.$ref) continue;
      responses[status] = { ...response, headers: { ...response.headers, [REQUEST_ID_HEADER]: header } };
    }
  }
  for (const response of Object.values((components.responses ?? {}) as Record<string, Record<string, any>>)) {
    response.headers = { ...response.headers, [REQUEST_ID_HEADER]: header };
  }
}

/**
 * A HEAD answer has no body (Node drops whatever a route writes): each response of a HEAD
 * operation is declared without content, the shared ones as copies without theirs.
 */
function withoutBodiesOnHead(paths: OpenApiPaths, components: Record<string, any>) {
  for (const item of Object.values(paths)) {
    const head = item.head as Record<string, any> | undefined;
    if (!head?.responses) continue;
    head.responses = Object.fromEntries(
      Object.entries<Record<string, any>>(head.responses).map(([status, response]) => {
        const shared = response.$ref ? components.responses?.[String(response.$ref).split('/').pop()!] : undefined;
        const { content: _body, ...rest } = structuredClone(shared ?? response);
        return [status, rest];
      }),
    );
  }
}

function checkOperationIds(paths: OpenApiPaths) {
  const seen = new Set<string>();
  for (const op of operations(paths)) {
    const id = op.operationId;
    if (typeof id !== 'string') continue;
    if (seen.has(id)) throw new Error(`OpenAPI: operationId ${id} is used twice`);
    seen.add(id);
  }
}

/** Every tag an operation uses, by name; a resource's carries its definition's description. */
function tagsOf(engine: Engine, paths: OpenApiPaths) {
  const tags = new Map<string, { name: string; description?: string }>();
  for (const op of operations(paths)) {
    for (const name of (op.tags as string[] | undefined) ?? []) {
      if (tags.has(name)) continue;
      const description = engine.registry.get(name)?.definition.description;
      tags.set(name, description ? { name, description } : { name });
    }
  }
  return [...tags.values()].sort((a, b) => a.name.localeCompare(b.name));
}

/** Each module's named schemas beside the resources'; a name taken twice is a start-up error. */
function withModuleSchemas(components: Record<string, any>, engine: Engine, modules: Module[]): Record<string, any> {
  const schemas = { ...components.schemas };
  for (const module of modules) {
    for (const [name, schema] of Object.entries(module.openapiSchemas?.(engine) ?? {})) {
      if (name in schemas) throw new Error(`OpenAPI: the schema ${name} of module ${module.name} is already defined`);
      schemas[name] = schema;
    }
  }
  return { ...components, schemas };
}

/** @param limits the rate limits in force: every limited operation documents their headers and its 429 */
export function buildOpenApiDocument(
  engine: Engine,
  routes: Route[],
  modules: Module[],
  limits: LimitTable,
  info: DocumentInfo = GENERIC_DOCUMENT_INFO,
): OpenApiDocument {
  // The same method on one path declared twice is a start-up error there.
  const paths = declaredPaths(routes);
  checkOperationIds(paths);
  withBadRequest(paths);
  const anonymous = anonymousOperations(routes);
  const limited = withRateLimits(withTenantHeader(paths), withModuleSchemas(buildComponents(engine.registry, info.tokenOrigin), engine, modules), limits, (method, path) =>
    anonymous.has(`${method} ${path}`),
  );
  withRequestIdHeader(limited.paths, limited.components);
  limited.components.headers = { ...limited.components.headers, ...everyAnswerHeaders() };
  withoutBodiesOnHead(limited.paths, limited.components);
  return {
    openapi: '3.0.3',
    info: { title: info.title, version: info.version, description: description(info, aliasesInWords(engine, paths)) },
    servers: [{ url: '/' }],
    security: [{ [BEARER_SCHEME]: [] }],
    tags: tagsOf(engine, paths),
    paths: Object.fromEntries(Object.entries(limited.paths).sort(([a], [b]) => a.localeCompare(b))),
    components: limited.components,
  };
}
