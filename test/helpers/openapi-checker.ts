// Requests and answers judged against the OpenAPI document. An answer: its status is one the
// operation declares (or its range, or `default`), every header it carries is declared on that
// response or is one of the document's headers on every answer (components/headers marked
// x-every-answer), each declared header's value fits its schema, and the body is what the
// response declares: none where it declares none (and never on HEAD, 204 or 304), else a media
// type it lists and, for JSON, a value valid against its schema. The schemas are the document's
// own, given to Ajv after the few OpenAPI 3.0 rules Ajv reads otherwise are spelled its way.
// A request the server accepted (2xx): each query parameter, path parameter, header parameter
// and JSON body fits what the document declares, so the document never refuses what the server
// takes (a value may be sent as the text a query string carries: "5", "true"). An operation that
// declares no query parameter does not read the query string, as the document says.
// A request to an alias path (listed in a path item's x-aliases, not in paths) is judged by the
// operation of the path item that lists it: the document declares its answers there.
// Used by test/openapi/openapi-responses.test.ts (every operation's fixtures) and by the fuzz oracle
// (every generated request).
import { Ajv, type ValidateFunction } from 'ajv';
import addFormats from 'ajv-formats';
import { parseQueryString } from '../../engine/http/context.js';
import { ALIASES_EXTENSION, EVERY_ANSWER_EXTENSION } from '../../engine/openapi/fragments.js';

type Json = Record<string, any>;

/**
 * Headers of the HTTP exchange, not of the API: framing (length, chunking, connection), the date,
 * and CORS (sent only to a browser page of an allowed origin, by the CORS protocol's rules).
 * Content-Type is judged against the response's declared media types instead.
 */
export const PROTOCOL_HEADERS: ReadonlySet<string> = new Set([
  'content-type',
  'content-length',
  'transfer-encoding',
  'connection',
  'keep-alive',
  'date',
  'vary',
  'access-control-allow-origin',
  'access-control-allow-methods',
  'access-control-allow-headers',
  'access-control-expose-headers',
  'access-control-max-age',
]);

export interface Answer {
  method: string;
  /** The request path as sent; a query string is ignored. */
  path: string;
  status: number;
  headers: Record<string, string | string[] | number | undefined>;
  /** The raw body (empty for none). */
  body: Buffer | string | undefined;
}

/** A request as sent: a JSON body already parsed (undefined when there is none or it is not JSON). */
export interface Sent {
  method: string;
  /** Path and query string, percent-encoded as sent. */
  path: string;
  headers: Array<[string, string]>;
  json?: unknown;
}

export interface DocumentedOperation {
  /** The path template of the document: the path item that declares the operation. */
  template: string;
  /** The template the request path matched: `template`, or an alias of it (x-aliases). */
  matched: string;
  method: string;
  op: Json;
  /** Koa answers HEAD wherever it answers GET: such a HEAD is judged by the GET operation, without a body. */
  implicitHead: boolean;
}

const METHODS = ['get', 'put', 'post', 'delete', 'options', 'head', 'patch', 'trace'];

/** `/api/tags/{id}`, or `/api/tag/{id} (alias of /api/tags/{id})`: where a problem was found. */
const named = (found: DocumentedOperation) => (found.matched === found.template ? found.template : `${found.matched} (alias of ${found.template})`);

/** A JSON pointer segment as a URI fragment carries it. */
const segment = (s: string) => encodeURIComponent(s.replace(/~/g, '~0').replace(/\//g, '~1'));
const pointer = (parts: string[]) => `#/${parts.map(segment).join('/')}`;

/**
 * The document's schemas as Ajv (draft-07) reads them. OpenAPI 3.0 differs in two places that
 * matter here: boolean exclusiveMinimum/Maximum (flags on minimum/maximum), and siblings of a
 * $ref, which OpenAPI ignores. nullable, readOnly, example and the formats Ajv reads as OpenAPI does.
 */
function forAjv(node: unknown): unknown {
  if (Array.isArray(node)) return node.map(forAjv);
  if (node === null || typeof node !== 'object') return node;
  const source = node as Json;
  if (typeof source.$ref === 'string') return { $ref: source.$ref };
  const out: Json = {};
  for (const [key, value] of Object.entries(source)) out[key] = forAjv(value);
  for (const [flag, bound] of [['exclusiveMinimum', 'minimum'], ['exclusiveMaximum', 'maximum']] as const) {
    if (typeof out[flag] !== 'boolean') continue;
    if (out[flag] && typeof out[bound] === 'number') {
      out[flag] = out[bound];
      delete out[bound];
    } else delete out[flag];
  }
  return out;
}

const isJsonType = (mediaType: string) => /^application\/(?:[\w.+-]+\+)?json$/i.test(mediaType);

function headerValue(value: string | string[] | number | undefined): string | undefined {
  if (value === undefined) return undefined;
  return Array.isArray(value) ? value.join(', ') : String(value);
}

function bodyBytes(body: Answer['body']): Buffer {
  if (body === undefined) return Buffer.alloc(0);
  return typeof body === 'string' ? Buffer.from(body) : body;
}

export class OpenApiChecker {
  private readonly ajv: Ajv;
  /** Header values and request values are text: integer and boolean schemas read them as numbers and booleans. */
  private readonly textAjv: Ajv;
  private readonly validators = new Map<string, ValidateFunction | string>();
  private readonly textValidators = new Map<string, ValidateFunction | string>();
  /** Request path templates (the document's paths and their aliases) → the path item declaring them. */
  private readonly exact = new Map<string, string>();
  private readonly templated: Array<{ template: string; pattern: RegExp }> = [];
  private readonly declaredAt = new Map<string, string>();
  /** Headers on every answer, by lower-case name: the pointer of their declaration. */
  readonly everyAnswer: ReadonlyMap<string, string>;

  constructor(private readonly doc: Json) {
    const source = forAjv({ $id: 'doc', components: doc.components ?? {}, paths: doc.paths ?? {} }) as Json;
    this.ajv = new Ajv({ strict: false, allErrors: true, validateSchema: false, inlineRefs: false });
    addFormats.default(this.ajv);
    this.ajv.addSchema(source);
    this.textAjv = new Ajv({ strict: false, allErrors: true, validateSchema: false, coerceTypes: true, inlineRefs: false });
    addFormats.default(this.textAjv);
    this.textAjv.addSchema(source);
    for (const [path, item] of Object.entries<Json>(doc.paths ?? {})) {
      for (const template of [path, ...((item[ALIASES_EXTENSION] as string[] | undefined) ?? [])]) {
        this.declaredAt.set(template, path);
        if (!template.includes('{')) this.exact.set(template, template);
        else {
          const pattern = template.split(/\{[^}]+\}/).map((part) => part.replace(/[.*+?^$()|[\]\\]/g, '\\$&')).join('[^/]+');
          this.templated.push({ template, pattern: new RegExp(`^${pattern}$`) });
        }
      }
    }
    const every = new Map<string, string>();
    for (const [name, header] of Object.entries<Json>(doc.components?.headers ?? {})) {
      if (header[EVERY_ANSWER_EXTENSION]) every.set(name.toLowerCase(), pointer(['components', 'headers', name]));
    }
    this.everyAnswer = every;
  }

  /** The value a pointer (#/a/b) names in the document. */
  private at(ref: string): any {
    return ref
      .replace(/^#\//, '')
      .split('/')
      .reduce((node: any, part) => node?.[decodeURIComponent(part).replace(/~1/g, '/').replace(/~0/g, '~')], this.doc);
  }

  /** A node and its pointer, its $ref followed. */
  private follow(node: any, at: string): { node: any; at: string } {
    let current = { node, at };
    for (let hops = 0; typeof current.node?.$ref === 'string' && hops < 20; hops++) {
      current = { node: this.at(current.node.$ref), at: current.node.$ref };
    }
    return current;
  }

  /**
   * Whether a value fits the schema at a pointer of the document (#/components/schemas/Tag,
   * #/paths/…/schema); the problems if not.
   */
  fits(at: string, value: unknown): string | undefined {
    const validate = this.compiled(this.validators, this.ajv, at);
    if (typeof validate === 'string') return validate;
    return validate(structuredClone(value)) ? undefined : OpenApiChecker.errorsOf(validate);
  }

  /**
   * The path template a request path falls under (a path of the document or an alias of one): a
   * concrete path before a templated one, as OpenAPI matches.
   */
  templateOf(path: string): string | undefined {
    let plain = path.split('?')[0];
    // The router ignores a trailing slash.
    if (plain.length > 1 && plain.endsWith('/')) plain = plain.slice(0, -1);
    return this.exact.get(plain) ?? this.templated.find(({ pattern }) => pattern.test(plain))?.template;
  }

  /** The documented operation a request reaches (an alias's is its path item's); undefined for a path or method the document lacks. */
  operationFor(method: string, path: string): DocumentedOperation | undefined {
    const matched = this.templateOf(path);
    if (!matched) return undefined;
    const template = this.declaredAt.get(matched)!;
    const item = this.doc.paths[template];
    const lower = method.toLowerCase();
    if (METHODS.includes(lower) && item[lower]) return { template, matched, method: lower, op: item[lower], implicitHead: false };
    if (lower === 'head' && item.get) return { template, matched, method: 'get', op: item.get, implicitHead: true };
    return undefined;
  }

  private compiled(cache: Map<string, ValidateFunction | string>, ajv: Ajv, at: string): ValidateFunction | string {
    let validate = cache.get(at);
    if (validate === undefined) {
      try {
        validate = ajv.getSchema(`doc${at}`) ?? `no schema at ${at}`;
      } catch (err) {
        validate = `the schema at ${at} does not compile: ${(err as Error).message}`;
      }
      cache.set(at, validate);
    }
    return validate;
  }

  private static errorsOf(validate: ValidateFunction): string {
    return (validate.errors ?? []).slice(0, 5).map((e) => `${e.instancePath || '(root)'} ${e.message}${e.params && 'allowedValues' in e.params ? ` ${JSON.stringify(e.params.allowedValues)}` : ''}`).join('; ');
  }

  /** The problems of one answer; none means the document describes it. An operation the document lacks is the caller's to judge. */
  checkResponse(answer: Answer): string[] {
    const found = this.operationFor(answer.method, answer.path);
    if (!found) return [];
    const where = `${answer.method.toUpperCase()} ${named(found)}`;
    const responses: Json = found.op.responses ?? {};
    const key = [String(answer.status), `${String(answer.status)[0]}XX`, 'default'].find((k) => responses[k]);
    if (!key) return [`${answer.status} is not a status ${where} declares (${Object.keys(responses).join(', ')})`];
    const base = [...(found.implicitHead ? ['paths', found.template, 'get'] : ['paths', found.template, found.method]), 'responses', key];
    const { node: response, at } = this.follow(responses[key], pointer(base));
    const problems = [...this.headerProblems(answer, response, at), ...this.bodyProblems(answer, response, at, found.implicitHead || answer.method.toUpperCase() === 'HEAD')];
    return problems.map((p) => `${where} ${answer.status}: ${p}`);
  }

  /**
   * The problems of a request the server accepted with this status: none unless it is a 2xx of a
   * documented operation whose parameters or JSON body the document would refuse.
   */
  checkRequest(sent: Sent, status: number): string[] {
    if (status < 200 || status >= 300) return [];
    const found = this.operationFor(sent.method, sent.path);
    if (!found) return [];
    const where = `${sent.method.toUpperCase()} ${named(found)} ${status}: accepted`;
    const item = this.doc.paths[found.template];
    const base = ['paths', found.template];
    const parameters = new Map<string, { node: Json; at: string }>();
    (item.parameters ?? []).forEach((p: unknown, i: number) => {
      const { node, at } = this.follow(p, pointer([...base, 'parameters', String(i)]));
      parameters.set(`${node.in} ${node.in === 'header' ? node.name.toLowerCase() : node.name}`, { node, at });
    });
    (found.op.parameters ?? []).forEach((p: unknown, i: number) => {
      const { node, at } = this.follow(p, pointer([...base, found.method, 'parameters', String(i)]));
      parameters.set(`${node.in} ${node.in === 'header' ? node.name.toLowerCase() : node.name}`, { node, at });
    });
    const problems: string[] = [];
    const fits = (label: string, value: unknown, { node, at }: { node: Json; at: string }) => {
      if (!node.schema) return;
      const validate = this.compiled(this.textValidators, this.textAjv, `${at}/schema`);
      if (typeof validate === 'string') return void problems.push(validate);
      const isArray = this.follow(node.schema, `${at}/schema`).node?.type === 'array';
      const candidates = isArray ? arrayCandidates(value) : [value];
      if (candidates.some((candidate) => validate(structuredClone(candidate)))) return;
      validate(structuredClone(candidates[0]));
      problems.push(`${where} ${label} ${JSON.stringify(value).slice(0, 200)}, which its schema refuses: ${OpenApiChecker.errorsOf(validate)}`);
    };

    const [rawPath, rawQuery = ''] = sent.path.split(/\?(.*)/s);
    let query: Record<string, unknown> = {};
    try {
      query = parseQueryString(rawQuery);
    } catch {
      // The server would have refused it: a 2xx with such a query is the status check's to report.
    }
    // An operation that declares no query parameter of its own does not read the query string (the
    // document says so); a parameter every token route takes (x-every-operation: tenantId) is
    // checked wherever it is sent, but does not make the operation read the rest.
    const readsQuery = [...parameters].some(([key, { node }]) => key.startsWith('query ') && node['x-every-operation'] !== true);
    for (const [name, value] of Object.entries(query)) {
      const declared = parameters.get(`query ${name}`) ?? parameters.get(`query ${name}[]`);
      if (declared) fits(`the query parameter ${name}`, value, declared);
      else if (readsQuery) problems.push(`${where} the query parameter ${name}, which the document does not declare`);
    }
    // The path's values by the names of the template it matched (an alias names them as its path item does).
    const names = found.matched.match(/\{[^}]+\}/g)?.map((n) => n.slice(1, -1)) ?? [];
    const pattern = new RegExp(`^${found.matched.split(/\{[^}]+\}/).map((part) => part.replace(/[.*+?^$()|[\]\\]/g, '\\$&')).join('([^/]+)')}/?$`);
    const values = pattern.exec(rawPath)?.slice(1) ?? [];
    names.forEach((name, i) => {
      const declared = parameters.get(`path ${name}`);
      let value = values[i];
      try {
        value = decodeURIComponent(value);
      } catch {
        // kept as sent
      }
      if (declared && value !== undefined) fits(`the path parameter ${name}`, value, declared);
    });
    for (const [name, value] of sent.headers) {
      const declared = parameters.get(`header ${name.toLowerCase()}`);
      // The blanks around a field value are not part of it (RFC 9110, 5.5): the server never sees them.
      if (declared) fits(`the header ${name}`, value.trim(), declared);
    }
    const requestBody = this.follow(found.op.requestBody, pointer([...base, found.method, 'requestBody']));
    const type = sent.headers.find(([name]) => name.toLowerCase() === 'content-type')?.[1]?.split(';')[0].trim().toLowerCase() ?? '';
    if (sent.json !== undefined && isJsonType(type) && requestBody.node?.content) {
      const mediaType = Object.keys(requestBody.node.content).find((m) => m.toLowerCase() === type) ?? (requestBody.node.content['application/json'] ? 'application/json' : undefined);
      if (!mediaType) problems.push(`${where} a ${type} body, a media type the document does not declare`);
      else if (requestBody.node.content[mediaType].schema) {
        const at = `${requestBody.at}/content/${segment(mediaType)}/schema`;
        const validate = this.compiled(this.textValidators, this.textAjv, at);
        if (typeof validate === 'string') problems.push(validate);
        else if (!validate(structuredClone(sent.json))) problems.push(`${where} a body its schema refuses: ${OpenApiChecker.errorsOf(validate)}; body: ${JSON.stringify(sent.json).slice(0, 300)}`);
      }
    }
    return problems;
  }

  private headerProblems(answer: Answer, response: Json, at: string): string[] {
    const problems: string[] = [];
    const declared = new Map<string, { node: Json; at: string }>();
    for (const [name, header] of Object.entries<Json>(response.headers ?? {})) {
      declared.set(name.toLowerCase(), this.follow(header, `${at}/headers/${segment(name)}`));
    }
    const sent = new Map<string, string>();
    for (const [name, value] of Object.entries(answer.headers)) {
      const text = headerValue(value);
      if (text !== undefined) sent.set(name.toLowerCase(), text);
    }
    for (const [name, value] of sent) {
      if (PROTOCOL_HEADERS.has(name)) continue;
      const declaration = declared.get(name) ?? (this.everyAnswer.has(name) ? { node: this.at(this.everyAnswer.get(name)!), at: this.everyAnswer.get(name)! } : undefined);
      if (!declaration) {
        problems.push(`header ${name} is not declared on this response`);
        continue;
      }
      if (!declaration.node?.schema) continue;
      const validate = this.compiled(this.textValidators, this.textAjv, `${declaration.at}/schema`);
      if (typeof validate === 'string') problems.push(validate);
      else if (!validate(value)) problems.push(`header ${name}: ${JSON.stringify(value)} does not fit its schema: ${OpenApiChecker.errorsOf(validate)}`);
    }
    for (const [name, { node }] of declared) {
      if (node?.required && !sent.has(name)) problems.push(`the required header ${name} is missing`);
    }
    return problems;
  }

  private bodyProblems(answer: Answer, response: Json, at: string, head: boolean): string[] {
    const bytes = bodyBytes(answer.body);
    if (head || answer.status === 204 || answer.status === 304) {
      return bytes.length ? [`a ${head ? 'HEAD answer' : String(answer.status)} carries a body of ${bytes.length} bytes`] : [];
    }
    const content: Json | undefined = response.content;
    if (!content || !Object.keys(content).length) {
      return bytes.length ? [`a body of ${bytes.length} bytes, where the response declares none: ${bytes.toString('utf8', 0, 200)}`] : [];
    }
    const type = String(headerValue(answer.headers['content-type']) ?? '').split(';')[0].trim().toLowerCase();
    if (!bytes.length) return [`no body, where the response declares ${Object.keys(content).join(', ')}`];
    const [major] = type.split('/');
    const mediaType = Object.keys(content).find((m) => m.toLowerCase() === type) ?? Object.keys(content).find((m) => m === `${major}/*` || m === '*/*');
    if (!mediaType) return [`content-type ${type || '(none)'} is not one the response declares (${Object.keys(content).join(', ')})`];
    const schema = content[mediaType]?.schema;
    if (!schema || !isJsonType(type)) return [];
    let value: unknown;
    try {
      value = JSON.parse(bytes.toString('utf8'));
    } catch {
      return [`the ${type} body is not JSON: ${bytes.toString('utf8', 0, 200)}`];
    }
    const validate = this.compiled(this.validators, this.ajv, `${at}/content/${segment(mediaType)}/schema`);
    if (typeof validate === 'string') return [validate];
    if (validate(value)) return [];
    return [`the body does not fit the declared schema: ${OpenApiChecker.errorsOf(validate)}; body: ${bytes.toString('utf8', 0, 300)}`];
  }
}

/**
 * Values of an array parameter in the spelling a description may name besides the canonical one
 * (a[]=x, a[0]=x and a=x&a=y all parse as arrays): comma-separated, a=x,y (a= for none). Whether
 * the server takes it is the server's; what matters here is that the items are ones the schema takes.
 */
function arrayCandidates(value: unknown): unknown[] {
  if (typeof value === 'string') return [value, value === '' ? [] : value.split(',')];
  return [value];
}

/** The problems of a supertest answer (method and path as sent). */
export function supertestAnswer(method: string, path: string, res: { status: number; headers: Record<string, any>; text?: string; body?: unknown }): Answer {
  const raw = Buffer.isBuffer(res.body) ? res.body : res.text ?? '';
  return { method, path, status: res.status, headers: res.headers, body: raw };
}
