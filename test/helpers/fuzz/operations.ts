// The routes to fuzz, read from the app's OpenAPI document (every route the app serves is there:
// generated resources, auth and hand-written modules; an alias in its path item's x-aliases), each
// tied to the compiled resource whose path it lies under. A new definition or module route is
// fuzzed with no test code.
import { readdirSync } from 'node:fs';
import { DOCS_DIR } from '../../../app/paths.js';
import { ALIASES_EXTENSION } from '../../../engine/openapi/fragments.js';
import type { CompiledResource, Registry } from '../../../engine/resource/compiled.js';

export type Kind = 'list' | 'count' | 'search' | 'create' | 'read' | 'replace' | 'patch' | 'delete' | 'bulk-create' | 'bulk-patch' | 'bulk-delete' | 'other';

export interface Parameter {
  name: string;
  in: 'query' | 'path' | 'header';
  required: boolean;
  style?: string;
  schema: Record<string, any>;
}

export interface Operation {
  /** `GET /api/employee/{id}`: names the operation in reports and derives its seed. */
  id: string;
  method: string;
  /** The path template requests are sent to: a path of the document, or an alias of one. */
  path: string;
  /** The document's path item that declares it, when that is not `path` (an alias's). */
  documentedAt?: string;
  /** Statuses the document lists for it; for a method the path does not have, none (any 4xx). */
  statuses: ReadonlySet<number>;
  /** Per error status, the keys its documented body may have beside the envelope's (an import's failed rows). */
  errorKeys: ReadonlyMap<number, ReadonlySet<string>>;
  documented: boolean;
  parameters: Parameter[];
  /** Media types the request body may have, and the JSON body's schema. */
  body?: { types: string[]; schema?: Record<string, any> };
  resource?: CompiledResource;
  kind: Kind;
  /** Not an API answer (the document itself, the docs page): only its status is judged. */
  opaque?: boolean;
}

const METHODS = ['get', 'head', 'post', 'put', 'patch', 'delete'];
/** Methods tried on a path that does not have them: each must be a 4xx (405 or 401), never a 5xx. */
const PROBED_METHODS = ['GET', 'POST', 'PUT', 'PATCH', 'DELETE'];

/** A node of the document with its `$ref` followed (one level; call again on what it holds). */
export function resolve(doc: Record<string, any>, node: any): any {
  let current = node;
  for (let hops = 0; current && typeof current.$ref === 'string' && hops < 20; hops++) {
    const parts = current.$ref.replace(/^#\//, '').split('/');
    current = parts.reduce((at: any, part: string) => at?.[part.replace(/~1/g, '/').replace(/~0/g, '~')], doc);
  }
  return current;
}

/** The resource a path lies under (the longest of its paths and aliases that starts it), and what it does there. */
function placeOf(path: string, method: string, resources: CompiledResource[]): { resource?: CompiledResource; kind: Kind } {
  const rest = path.replace(/^\/api\//, '');
  let best: { resource: CompiledResource; prefix: string } | undefined;
  for (const resource of resources) {
    for (const prefix of resource.paths) {
      if ((rest === prefix || rest.startsWith(`${prefix}/`)) && prefix.length > (best?.prefix.length ?? -1)) best = { resource, prefix };
    }
  }
  if (!best) return { kind: 'other' };
  const tail = rest.slice(best.prefix.length);
  const kinds: Record<string, Kind | undefined> = {
    'GET ': 'list',
    'GET /pagination': 'list',
    'GET /count': 'count',
    'POST ': 'create',
    'POST /search': 'search',
    'GET /{id}': 'read',
    'PUT /{id}': 'replace',
    'PATCH /{id}': 'patch',
    'DELETE /{id}': 'delete',
    'POST /bulk': 'bulk-create',
    'PATCH /bulk': 'bulk-patch',
    'DELETE /bulk': 'bulk-delete',
  };
  return { resource: best.resource, kind: kinds[`${method} ${tail}`] ?? 'other' };
}

function parametersOf(doc: Record<string, any>, item: any, op: any): Parameter[] {
  const all = [...(item.parameters ?? []), ...(op.parameters ?? [])].map((p) => resolve(doc, p));
  return all
    .filter((p) => p && ['query', 'path', 'header'].includes(p.in))
    .map((p) => ({ name: p.name, in: p.in, required: Boolean(p.required), style: p.style, schema: resolve(doc, p.schema) ?? {} }));
}

/** Property names a schema declares, through $ref, allOf, oneOf and anyOf. */
function propertyNames(doc: Record<string, any>, schema: any, into = new Set<string>(), depth = 0): Set<string> {
  const s = resolve(doc, schema);
  if (!s || depth > 10) return into;
  for (const name of Object.keys(s.properties ?? {})) into.add(name);
  for (const part of [...(s.allOf ?? []), ...(s.oneOf ?? []), ...(s.anyOf ?? [])]) propertyNames(doc, part, into, depth + 1);
  return into;
}

function errorKeysOf(doc: Record<string, any>, op: any): Map<number, Set<string>> {
  const keys = new Map<number, Set<string>>();
  for (const [status, response] of Object.entries<any>(op.responses ?? {})) {
    if (!/^[45]\d\d$/.test(status)) continue;
    keys.set(Number(status), propertyNames(doc, resolve(doc, response)?.content?.['application/json']?.schema));
  }
  return keys;
}

function bodyOf(doc: Record<string, any>, op: any): Operation['body'] {
  const requestBody = resolve(doc, op.requestBody);
  if (!requestBody?.content) return undefined;
  const types = Object.keys(requestBody.content);
  const json = requestBody.content['application/json'];
  return { types, schema: json ? resolve(doc, json.schema) : undefined };
}

/**
 * Every operation of the document, under its path and each alias of it (x-aliases), then one
 * probe per path with the methods it lacks.
 */
export function operationsOf(doc: Record<string, any>, registry: Registry): Operation[] {
  const resources = [...registry.values()];
  const operations: Operation[] = [];
  const served = Object.entries<Record<string, any>>(doc.paths).flatMap(([path, item]) => [
    { path, item, documentedAt: undefined as string | undefined },
    ...((item[ALIASES_EXTENSION] as string[] | undefined) ?? []).map((alias) => ({ path: alias, item, documentedAt: path })),
  ]);
  for (const { path, item, documentedAt } of served) {
    for (const method of METHODS) {
      const op = item[method];
      if (!op) continue;
      const upper = method.toUpperCase();
      const statuses = new Set(Object.keys(op.responses ?? {}).filter((s) => /^\d{3}$/.test(s)).map(Number));
      operations.push({
        id: `${upper} ${path}`,
        method: upper,
        path,
        ...(documentedAt ? { documentedAt } : {}),
        statuses,
        errorKeys: errorKeysOf(doc, op),
        documented: true,
        parameters: parametersOf(doc, item, op),
        body: bodyOf(doc, op),
        ...placeOf(path, upper, resources),
      });
    }
    // Koa's router answers HEAD wherever it answers GET, documented or not: the same statuses, no body.
    const get = operations.find((op) => op.path === path && op.method === 'GET');
    if (get && !item.head) operations.push({ ...get, id: `HEAD ${path}`, method: 'HEAD' });
    const missing = PROBED_METHODS.filter((m) => !item[m.toLowerCase()]);
    if (missing.length) {
      operations.push({
        id: `${missing.join('|')} ${path}`,
        method: missing.join('|'),
        path,
        ...(documentedAt ? { documentedAt } : {}),
        statuses: new Set(),
        errorKeys: new Map(),
        documented: false,
        parameters: parametersOf(doc, item, item[Object.keys(item).find((k) => METHODS.includes(k))!] ?? {}),
        ...placeOf(path, '', resources),
        kind: 'other',
      });
    }
  }
  return [...operations, ...DOCS];
}

const page = (path: string, statuses: number[], parameters: Parameter[] = []): Operation => ({
  id: `GET ${path}`,
  method: 'GET',
  path,
  statuses: new Set(statuses),
  errorKeys: new Map(),
  documented: true,
  parameters,
  kind: 'other',
  opaque: true,
});

/** The reference pages the service serves (docs/*.md), by file name. */
const referencePages = readdirSync(DOCS_DIR).filter((name) => name.endsWith('.md')).sort();

/** The documentation routes, which the document does not list (it is one of them). */
export const DOCS: Operation[] = [
  page('/swg-json', [200]),
  page('/swg', [200]),
  page('/swg/assets/{asset}', [200, 404], [{ name: 'asset', in: 'path', required: true, schema: { type: 'string', enum: ['swagger-ui.css', 'swagger-ui-bundle.js', 'favicon-32x32.png'] } }]),
  page('/docs/{page}', [200, 404], [{ name: 'page', in: 'path', required: true, schema: { type: 'string', enum: referencePages } }]),
];

/** Paths nobody serves: each answer is a 4xx (a 401 without a token, a 404 with one). */
export const NOWHERE: Operation = {
  id: 'ANY /api/…unknown',
  method: PROBED_METHODS.join('|'),
  path: '/api/{nowhere}',
  statuses: new Set(),
  errorKeys: new Map(),
  documented: false,
  parameters: [{ name: 'nowhere', in: 'path', required: true, schema: { type: 'string' } }],
  kind: 'other',
};
