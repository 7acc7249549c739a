// fast-check arbitraries of whole requests, one per operation, derived from the compiled registry
// (fields, filters, sort keys, relation paths, list parameters) and the OpenAPI document (query,
// path and header parameters, body schemas, media types). Valid values (the world's records,
// sample-records.ts values) are mixed with hostile ones (values.ts), so that a request often gets
// past the first check and reaches the query builder, the database and the serializer.
import fc from 'fast-check';
import type { CompiledField, CompiledRelation, CompiledResource } from '../../../engine/resource/compiled.js';
import { png } from '../images.js';
import { clientFields, type Body } from '../sample-records.js';
import { quiet } from './leaks.js';
import { NOWHERE, resolve, type Operation, type Parameter } from './operations.js';
import type { FuzzBody, FuzzRequest } from './requests.js';
import * as v from './values.js';
import type { World } from './world.js';

type Arb<T> = fc.Arbitrary<T>;

/** Requests whose path and query stay below Node's 16 KiB header limit (beyond it Node answers 431 before the app sees anything). */
const MAX_URL_CHARS = 8_000;

/** Every operator name, and a few that are not. */
const OPERATOR_NAMES = ['eq', 'ne', 'in', 'nin', 'lt', 'lte', 'gt', 'gte', 'between', 'ilike', 'isNull', 'like', 'or', 'EQ', '$eq'];

const pick = <T>(values: readonly T[], fallback: Arb<T>): Arb<T> => (values.length ? fc.constantFrom(...values) : fallback);

/** Own object keys, `__proto__` included, as a JSON body or query object carries them. */
function put(target: Record<string, unknown>, key: string, value: unknown) {
  Object.defineProperty(target, key, { value, enumerable: true, writable: true, configurable: true });
}

// ---------------------------------------------------------------------------------------------
// Values of the world: ids, names, dates

/** Ids for a field: mostly the tenant's own records of that resource, sometimes another tenant's, random or malformed. */
export function idOf(w: World, resourceName?: string, toDelete = false): Arb<string> {
  // A delete aims only at records nothing refers to, never at one the sample bodies need.
  const own = toDelete
    ? (w.victims.get(resourceName ?? '') ?? [])
    : resourceName === 'tenant'
      ? [w.acme.tenantId]
      : resourceName && w.ids.get(resourceName)?.length
        ? w.ids.get(resourceName)!
        : w.allIds;
  const foreign = resourceName === 'tenant' ? [w.other.tenantId] : (resourceName && w.foreignIds.get(resourceName)?.length ? w.foreignIds.get(resourceName)! : [...w.foreign]);
  return fc.oneof(
    { weight: 8, arbitrary: pick(own, fc.uuid()) },
    { weight: 1, arbitrary: pick(foreign, fc.uuid()) },
    { weight: 1, arbitrary: fc.uuid() },
    { weight: 1, arbitrary: pick(own, fc.uuid()).map((id) => id.toUpperCase()) },
    { weight: 1, arbitrary: fc.constantFrom(...v.ODD_UUIDS) },
  );
}

/** Lists of ids: a few, or one id 150 times (past what a page or an IN list usually holds). */
export function idList(w: World, resourceName?: string): Arb<string[]> {
  return fc.oneof(
    { weight: 6, arbitrary: fc.array(idOf(w, resourceName), { maxLength: 3 }) },
    { weight: 1, arbitrary: idOf(w, resourceName).map((id) => Array<string>(150).fill(id)) },
  );
}

/** The resource a uuid field points at, by its definition or its name. */
function targetOf(resource: CompiledResource | undefined, field: string, references?: string): string | undefined {
  if (references) return references;
  if (field === 'id') return resource?.name;
  if (field === 'tenantId') return 'tenant';
  if (field === 'organizationId') return 'organization';
  const named = field.replace(/Ids?$/, '').replace(/[A-Z]/g, (c) => `-${c.toLowerCase()}`);
  return named;
}

const dayMs = 86_400_000;
const validDate: Arb<string> = fc
  .tuple(fc.integer({ min: -3_000, max: 3_000 }), fc.boolean())
  .map(([days, dateOnly]) => {
    const iso = new Date(Date.UTC(2026, 0, 5) + days * dayMs + (dateOnly ? 0 : 3_600_000 * 9.5)).toISOString();
    return dateOnly ? iso.slice(0, 10) : iso;
  });
const date: Arb<unknown> = fc.oneof({ weight: 3, arbitrary: validDate }, { weight: 2, arbitrary: fc.constantFrom(...v.ODD_DATES) }, { weight: 1, arbitrary: v.hostile });

/** A value for one field: valid for its definition (sample-records.ts), a record's id or text, or hostile. */
export function fieldValue(w: World, resource: CompiledResource, field: CompiledField): Arb<unknown> {
  const def = field.definition;
  let valid: Arb<unknown>;
  if (def.type === 'uuid') valid = idOf(w, targetOf(resource, field.name, def.references));
  else if (def.type === 'date' || def.type === 'timestamp') return date;
  else if ((def.type === 'string' || def.type === 'text') && !def.enum) valid = fc.oneof(fc.nat().map((n) => w.samples.value(field, n)), pick(w.texts, fc.constant('x')));
  else valid = fc.nat().map((n) => w.samples.value(field, n));
  return v.mostly(valid);
}

// ---------------------------------------------------------------------------------------------
// List parameters: one object for both the query string and the search body

const ODD_RELATIONS = ['a.b.c.d', 'user..role', '.user', 'user.', ' user', 'USER', 'user,', ',', '__proto__', 'constructor', 'x'.repeat(300), 'tags.id'];

function relationsValue(resource: CompiledResource): Arb<unknown> {
  const paths = [...resource.relationPaths];
  const deeper = paths.map((p) => `${p}.${p.split('.')[0]}`).concat(paths.map((p) => `${p}.x.y.z`));
  const valid = pick(paths, fc.constant('user'));
  if (!paths.length) return fc.oneof({ weight: 2, arbitrary: fc.constant([]) }, { weight: 1, arbitrary: fc.constantFrom(...ODD_RELATIONS) }, { weight: 1, arbitrary: v.hostile });
  return fc.oneof(
    { weight: 4, arbitrary: fc.array(valid, { maxLength: 3 }) },
    { weight: 2, arbitrary: fc.array(valid, { minLength: 1, maxLength: 3 }).map((a) => a.join(',')) },
    { weight: 2, arbitrary: fc.array(fc.oneof(valid, fc.constantFrom(...ODD_RELATIONS, ...deeper), v.text), { minLength: 1, maxLength: 3 }) },
    { weight: 1, arbitrary: fc.constant(Array.from({ length: 60 }, (_, i) => `r${i}`)) },
    { weight: 1, arbitrary: v.hostile },
  );
}

/** select[]: mostly fields and path.fields of the resource (hidden ones included), sometimes anything. */
function selectValue(resource: CompiledResource): Arb<unknown> {
  const names = [...resource.fields.keys(), ...[...resource.relationPaths].flatMap((path) => ['id', 'name', 'email', 'hash', 'x'].map((f) => `${path}.${f}`))];
  const valid = pick(names, fc.constant('id'));
  return fc.oneof(
    { weight: 4, arbitrary: fc.array(valid, { minLength: 1, maxLength: 4 }) },
    { weight: 1, arbitrary: fc.array(valid, { minLength: 1, maxLength: 3 }).map((a) => a.join(',')) },
    { weight: 1, arbitrary: fc.array(fc.oneof(valid, v.text, fc.constantFrom('__proto__', 'user..id', '.id', 'id.', ' id')), { maxLength: 3 }) },
    { weight: 1, arbitrary: v.hostile },
  );
}

function whereOn(w: World, resource: CompiledResource, depth: number): Arb<Record<string, unknown>> {
  const filterNames = [...resource.filters.keys()];
  const entries: Array<{ weight: number; arbitrary: Arb<[string, unknown]> }> = [
    { weight: 1, arbitrary: fc.tuple(v.key, v.hostile) },
    { weight: 1, arbitrary: fc.constant(['a', { b: { c: { d: 'e' } } }] as [string, unknown]) },
  ];
  if (filterNames.length) {
    const valueOf = (name: string) => {
      const field = resource.fields.get(name);
      return field ? fieldValue(w, resource, field) : v.hostile;
    };
    entries.push({
      weight: 6,
      arbitrary: fc.constantFrom(...filterNames).chain((name) => valueOf(name).map((value) => [name, value] as [string, unknown])),
    });
    // Operators: mostly ones the field takes with values of its type, sometimes any other.
    entries.push({
      weight: 4,
      arbitrary: fc.constantFrom(...filterNames).chain((name) =>
        fc
          .dictionary(
            fc.oneof({ weight: 4, arbitrary: fc.constantFrom(...resource.filters.get(name)!.operators) }, { weight: 1, arbitrary: fc.constantFrom(...OPERATOR_NAMES) }, { weight: 1, arbitrary: v.key }),
            fc.oneof(valueOf(name), fc.array(valueOf(name), { maxLength: 3 }), fc.constantFrom('true', 'false', ',', '', '%', '\\', 'a,b')),
            { minKeys: 1, maxKeys: 3 },
          )
          .map((ops) => [name, ops] as [string, unknown]),
      ),
    });
  }
  const relations = [...resource.relations.values()];
  if (depth === 0 && relations.length) {
    entries.push({
      weight: 3,
      arbitrary: fc.constantFrom(...relations).chain((relation: CompiledRelation) => whereOn(w, relation.target, depth + 1).map((inner) => [relation.name, inner] as [string, unknown])),
    });
  }
  if (depth === 0) {
    // OR groups of this resource's own conditions (an or inside one is refused: depth 1 may draw it as a key).
    entries.push({ weight: 2, arbitrary: fc.array(whereOn(w, resource, depth + 1), { maxLength: 3 }).map((groups) => ['or', groups] as [string, unknown]) });
  }
  return fc.array(fc.oneof(...entries), { maxLength: depth === 0 ? 3 : 2 }).map((list) => {
    const where: Record<string, unknown> = {};
    for (const [k, value] of list) put(where, k, value);
    return where;
  });
}

function pageNumber(max: number): Arb<unknown> {
  return fc.oneof(
    { weight: 4, arbitrary: fc.integer({ min: 0, max }) },
    { weight: 1, arbitrary: fc.constantFrom(-1, max + 1, 1e20, 2 ** 31, 1.5, '100000000000000000000', '1.5', 'abc', '', ' 3', '0x10') },
    { weight: 1, arbitrary: v.hostile },
  );
}

/** Search texts in the web search syntax of fulltext fields, and the tsquery operators it must not pass through. */
const WEB_SEARCH_TEXTS = ['"a phrase"', 'one or two', '-word', 'a & b | !c', 'pre:*', "'quoted'", '(group)', '""', 'or', '- -', '<->', 'x:A'];

/** take, skip, order, where, relations, select, cursor, count, search, dates and tags, each mostly valid, plus names the resource does not take. */
export function listParameters(w: World, resource: CompiledResource): Arb<Record<string, unknown>> {
  const supported = resource.listParameters;
  const sortable = [...resource.sortable];
  const direction = fc.oneof(
    { weight: 6, arbitrary: fc.constantFrom('ASC', 'DESC') },
    { weight: 1, arbitrary: fc.constantFrom('asc', 'desc', 'sideways', '', 'ASC ', '1', '-1') },
    { weight: 1, arbitrary: v.hostile },
  );
  const order = fc.array(fc.tuple(fc.oneof({ weight: 5, arbitrary: pick(sortable, v.key) }, { weight: 1, arbitrary: v.key }), direction), { maxLength: 3 }).map((list) => {
    const o: Record<string, unknown> = {};
    for (const [k, d] of list) put(o, k, d);
    return o;
  });
  const tagIds = idList(w, resource.tagRelation?.target.name ?? 'tag');
  const weight = (name: string) => (supported.has(name) ? 4 : 1);
  const entry: Arb<[string, unknown]> = fc.oneof(
    { weight: weight('take'), arbitrary: pageNumber(resource.maxTake).map((x) => ['take', x] as [string, unknown]) },
    { weight: weight('skip'), arbitrary: pageNumber(100).map((x) => ['skip', x] as [string, unknown]) },
    { weight: weight('order') + 2, arbitrary: fc.oneof({ weight: 5, arbitrary: order }, { weight: 1, arbitrary: v.hostile }).map((x) => ['order', x] as [string, unknown]) },
    { weight: weight('where') + 4, arbitrary: fc.oneof({ weight: 5, arbitrary: whereOn(w, resource, 0) }, { weight: 1, arbitrary: v.hostile }).map((x) => ['where', x] as [string, unknown]) },
    { weight: weight('relations') + 2, arbitrary: relationsValue(resource).map((x) => ['relations', x] as [string, unknown]) },
    { weight: weight('select'), arbitrary: selectValue(resource).map((x) => ['select', x] as [string, unknown]) },
    // A forged, cut or foreign-looking cursor: always a 400, never more.
    { weight: weight('cursor'), arbitrary: fc.oneof(v.text, fc.constantFrom('e30.AAAA', 'eyJ2IjoxfQ.', '.', 'a.b.c', 'x'.repeat(3000)), v.hostile).map((x) => ['cursor', x] as [string, unknown]) },
    { weight: 1, arbitrary: fc.constantFrom('none', 'exact', '', 'NONE').map((x) => ['count', x] as [string, unknown]) },
    {
      weight: weight('search'),
      // A stored text, or web search syntax and the tsquery operators a fulltext field must take as text.
      arbitrary: v
        .mostly(fc.oneof({ weight: 3, arbitrary: pick(w.texts, v.text) }, { weight: 1, arbitrary: fc.constantFrom(...WEB_SEARCH_TEXTS) }))
        .map((x) => ['search', x] as [string, unknown]),
    },
    { weight: weight('startDate'), arbitrary: date.map((x) => ['startDate', x] as [string, unknown]) },
    { weight: weight('endDate'), arbitrary: date.map((x) => ['endDate', x] as [string, unknown]) },
    { weight: weight('tags'), arbitrary: v.mostly(tagIds).map((x) => ['tags', x] as [string, unknown]) },
    { weight: 1, arbitrary: fc.tuple(v.key, v.hostile) },
  );
  return fc.array(entry, { maxLength: 4 }).map((list) => {
    const params: Record<string, unknown> = {};
    for (const [k, value] of list) put(params, k, value);
    return params;
  });
}

// ---------------------------------------------------------------------------------------------
// Values from the document's schemas (hand-written routes: auth, reports, uploads, ...)

/** allOf as one object schema: the properties and required names of every part. */
function mergeAll(doc: Record<string, any>, schemas: any[]): Record<string, any> {
  const merged: Record<string, any> = { type: 'object', properties: {}, required: [] };
  for (const s of schemas.map((x) => resolve(doc, x) ?? {})) {
    Object.assign(merged.properties, s.properties ?? {});
    merged.required.push(...(s.required ?? []));
  }
  return merged;
}

/** A value the schema describes (mostly), named `name` where it is a property (email, password, ...). */
export function schemaValue(w: World, schema: any, name = '', depth = 0): Arb<unknown> {
  const doc = w.t.openapi as Record<string, any>;
  const s = resolve(doc, schema) ?? {};
  if (depth > 5) return fc.constant(null);
  if (Array.isArray(s.enum) && s.enum.length) return fc.constantFrom(...s.enum);
  const choices = s.oneOf ?? s.anyOf;
  if (Array.isArray(choices) && choices.length) return fc.oneof(...choices.map((c: any) => schemaValue(w, c, name, depth + 1)));
  if (Array.isArray(s.allOf)) return schemaValue(w, mergeAll(doc, s.allOf), name, depth + 1);
  const type = Array.isArray(s.type) ? s.type.find((t: string) => t !== 'null') : s.type ?? (s.properties ? 'object' : undefined);
  switch (type) {
    case 'string': {
      if (s.format === 'uuid') return idOf(w, targetOf(undefined, name));
      if (s.format === 'email' || /email/i.test(name)) {
        // Known accounts (sign-in, a taken address), new ones (a registration that succeeds), and broken ones.
        const fresh = fc.nat().map((n) => `fuzz-${n}@example.com`);
        return fc.oneof(pick(w.emails, fc.constant('a@example.com')), fresh, fc.constantFrom('a@b', '@', 'x@example.com ', 'A@EXAMPLE.COM'));
      }
      if (/password/i.test(name)) return pick(w.passwords, fc.constant('x'));
      if (name === 'refresh_token') return fc.oneof(fc.constant(w.refreshToken), pick(w.badAuthorizations.map((a) => a.replace(/^\S+\s?/, '')), fc.constant('x')));
      if (s.format === 'date' || s.format === 'date-time' || /date/i.test(name)) return validDate;
      if (s.format === 'uri') return fc.constantFrom('https://example.com/a.png', 'javascript:alert(1)', 'http://[::1]/', 'file:///etc/passwd');
      if (s.format === 'binary') return v.text;
      const max = Math.min(s.maxLength ?? 24, 24);
      const min = Math.min(s.minLength ?? 0, max);
      return fc.oneof(pick(w.texts, fc.constant('x')), fc.string({ minLength: min, maxLength: max }).filter(quiet));
    }
    case 'integer':
      return fc.integer({ min: s.minimum ?? -1_000, max: s.maximum ?? Math.max(1_000, s.minimum ?? 0) });
    case 'number':
      return fc.double({ min: s.minimum ?? -1_000, max: s.maximum ?? 1_000, noNaN: true });
    case 'boolean':
      return fc.boolean();
    case 'array':
      return fc.array(schemaValue(w, s.items ?? {}, name, depth + 1), { maxLength: 3 });
    case 'object': {
      const properties = Object.entries<any>(s.properties ?? {}).filter(([, p]) => !(resolve(doc, p) ?? {}).readOnly);
      const required = new Set<string>(s.required ?? []);
      if (!properties.length) return fc.constant({});
      const record: Record<string, Arb<unknown>> = {};
      for (const [key, property] of properties) record[key] = schemaValue(w, property, key, depth + 1);
      return fc.record(record, { requiredKeys: properties.map(([k]) => k).filter((k) => required.has(k)) });
    }
    default:
      return v.hostile;
  }
}

// ---------------------------------------------------------------------------------------------
// Bodies

type Mutation = (body: Record<string, unknown>) => void;

/** Changes to a valid body: a key dropped, a value replaced (valid or hostile), a key it does not have. */
function mutations(keys: string[], valueFor: (key: string) => Arb<unknown>, extra: Arb<Mutation>[] = []): Arb<Mutation[]> {
  const options: Arb<Mutation>[] = [fc.tuple(v.key, v.hostile).map(([k, value]) => (b) => put(b, k, value)), ...extra];
  if (keys.length) {
    options.push(fc.constantFrom(...keys).map((k) => (b: Record<string, unknown>) => void delete b[k]));
    options.push(fc.constantFrom(...keys).chain((k) => valueFor(k).map((value) => (b: Record<string, unknown>) => put(b, k, value))));
    options.push(fc.tuple(fc.constantFrom(...keys), v.hostile).map(([k, value]) => (b: Record<string, unknown>) => put(b, k, value)));
  }
  return fc.array(fc.oneof(...options), { maxLength: 4 });
}

const apply = (base: Record<string, unknown>, changes: Mutation[]) => {
  const body = structuredClone(base);
  for (const change of changes) change(body);
  return body;
};

/** A create, replace or patch body of a resource: its valid sample body, changed a little. */
export function recordBody(w: World, resource: CompiledResource, kind: 'create' | 'replace' | 'patch'): Arb<Body> {
  const base = w.bodies.get(resource.name) ?? {};
  const fields = clientFields(resource);
  const byName = new Map(fields.map((f) => [f.name, f]));
  const relationKeys = resource.writableRelations.flatMap((r) => [r.name, ...(r.idsKey ? [r.idsKey] : [])]);
  const relationOf = new Map(resource.writableRelations.flatMap((r) => [[r.name, r] as const, ...(r.idsKey ? [[r.idsKey, r] as const] : [])]));
  const valueFor = (k: string): Arb<unknown> => {
    const field = byName.get(k);
    if (field) return fieldValue(w, resource, field);
    const relation = relationOf.get(k);
    if (!relation) return v.hostile;
    const ids = idList(w, relation.target.name);
    if (k === relation.idsKey) return v.mostly(ids);
    if (relation.kind === 'hasMany') return v.mostly(fc.constant([w.bodies.get(relation.target.name) ?? {}]));
    return v.mostly(ids.map((list) => list.map((id) => ({ id }))));
  };
  const readOnly = fc.tuple(fc.constantFrom(...resource.readOnlyFields, 'tenantId', 'id'), fc.oneof(idOf(w, 'tenant'), idOf(w, resource.name), validDate)).map(
    ([k, value]) => (b: Record<string, unknown>) => put(b, k, value),
  );
  // Untouched bodies too: a valid write reaches the database, its references and the serializer.
  const changes = fc.oneof({ weight: 2, arbitrary: fc.constant([] as Mutation[]) }, { weight: 3, arbitrary: mutations([...fields.map((f) => f.name), ...relationKeys], valueFor, [readOnly]) });
  const keys = Object.keys(base);
  const start = kind === 'patch' ? fc.subarray(keys).map((chosen) => Object.fromEntries(chosen.map((k) => [k, base[k]]))) : fc.constant(base);
  return fc.tuple(start, changes).map(([b, c]) => apply(b, c));
}

/** Top-level bodies no route takes: not an object, malformed, huge, nested deep, duplicate or poisoned keys. */
const STRANGE_BODIES: FuzzBody[] = [
  { text: '' },
  { text: '{"a":' },
  { text: 'null' },
  { text: '"text"' },
  { text: '42' },
  { text: '[]' },
  { text: '[{}]' },
  { text: '{"a":1,"a":2}' },
  { text: '{"__proto__":{"isAdmin":true}}' },
  { text: '{"constructor":{"prototype":{"x":1}}}' },
  { text: '\ufeff{}' },
  { text: '{"a":"\\ud800"}' },
  { text: '{"a":1e999}' },
  { text: `{"a":${'['.repeat(5_000)}${']'.repeat(5_000)}}` },
  { text: `{"a":"${'z'.repeat(1_100_000)}"}` },
  { base64: Buffer.from([0xff, 0xfe, 0x7b, 0x00, 0x7d, 0x00]).toString('base64') },
];

const JSON_TYPE: Arb<string | undefined> = fc.oneof(
  { weight: 30, arbitrary: fc.constant('application/json') },
  {
    weight: 3,
    arbitrary: fc.constantFrom(
      'application/json; charset=utf-8',
      'application/merge-patch+json',
      'APPLICATION/JSON',
      'application/json; charset=latin1',
      'application/json; charset=utf-16',
      'text/plain',
      'text/csv',
      'application/x-www-form-urlencoded',
      'multipart/form-data; boundary=x',
      'application/jsonx',
      '',
    ),
  },
  { weight: 1, arbitrary: fc.constant(undefined) },
);

export interface GeneratedBody {
  body?: FuzzBody;
  contentType?: string;
}

const jsonBody = (value: Arb<unknown>): Arb<GeneratedBody> => fc.tuple(value, JSON_TYPE).map(([json, contentType]) => ({ body: { json }, contentType }));

const strangeBody: Arb<GeneratedBody> = fc.tuple(fc.constantFrom(...STRANGE_BODIES), JSON_TYPE).map(([body, contentType]) => ({ body, contentType }));

const BOUNDARY = 'fuzz0boundary';

interface Part {
  name: string;
  filename?: string;
  type?: string;
  content: Buffer;
}

function multipartBytes(parts: Part[], closed: boolean): Buffer {
  const chunks: Buffer[] = [];
  for (const part of parts) {
    const disposition = `form-data; name="${part.name}"${part.filename !== undefined ? `; filename="${part.filename}"` : ''}`;
    chunks.push(Buffer.from(`--${BOUNDARY}\r\nContent-Disposition: ${disposition}\r\n${part.type ? `Content-Type: ${part.type}\r\n` : ''}\r\n`), part.content, Buffer.from('\r\n'));
  }
  if (closed) chunks.push(Buffer.from(`--${BOUNDARY}--\r\n`));
  return Buffer.concat(chunks);
}

const IMAGE = png(2, 2);

/** multipart/form-data: an image or a CSV or JSON file, broken files, odd names, fields the route does not take. */
function multipartBody(files: Arb<Buffer>): Arb<GeneratedBody> {
  const filename = fc.oneof(fc.constantFrom('a.png', 'rows.csv', 'rows.json', '../../etc/passwd.png', 'x"y.png', '', 'ünï.png'), v.text.filter((s) => !/[\r\n"]/.test(s)));
  const file: Arb<Part> = fc.record({ name: fc.constant('file'), filename, type: fc.constantFrom('image/png', 'text/csv', 'application/json', 'text/plain', 'application/octet-stream', undefined), content: files });
  const field: Arb<Part> = fc.record({ name: fc.constantFrom('name', 'format', 'file', 'other', ''), content: v.text.map((s) => Buffer.from(s)) });
  const type = fc.constantFrom(`multipart/form-data; boundary=${BOUNDARY}`, `multipart/form-data; boundary=${BOUNDARY}`, 'multipart/form-data', 'multipart/form-data; boundary=wrong', 'application/json');
  return fc.tuple(fc.array(fc.oneof({ weight: 3, arbitrary: file }, { weight: 1, arbitrary: field }), { maxLength: 3 }), fc.boolean(), type).map(([parts, open, contentType]) => ({
    body: { base64: multipartBytes(parts, !open || parts.length === 0).toString('base64') },
    contentType,
  }));
}

const imageFiles: Arb<Buffer> = fc.oneof(
  { weight: 3, arbitrary: fc.constant(IMAGE) },
  { weight: 1, arbitrary: fc.integer({ min: 0, max: IMAGE.length - 1 }).map((n) => IMAGE.subarray(0, n)) },
  { weight: 1, arbitrary: v.text.map((s) => Buffer.from(s)) },
  { weight: 1, arbitrary: fc.constantFrom(Buffer.from('GIF89a'), Buffer.from([0xff, 0xd8, 0xff, 0xe0]), Buffer.from('RIFF\0\0\0\0WEBPVP8 '), Buffer.from('<svg/>')) },
);

/** A resource by a path segment: its name or an alias of one segment. */
function resourceAt(w: World, segment: string | undefined): CompiledResource | undefined {
  if (segment === undefined) return undefined;
  return [...w.registry.values()].find((r) => r.name === segment || r.paths.includes(segment));
}

/** CSV of a resource's sample body, cells valid or hostile (quotes, commas, line breaks, formulas). */
function csvOf(w: World, resource: CompiledResource | undefined): Arb<string> {
  const base = (resource && w.bodies.get(resource.name)) || { name: 'x' };
  const columns = Object.keys(base);
  const cellText = (value: unknown) => (typeof value === 'object' ? JSON.stringify(value) : String(value));
  const quote = (s: string) => (/[",\r\n]/.test(s) ? `"${s.replace(/"/g, '""')}"` : s);
  const cell = (k: string) => fc.oneof({ weight: 4, arbitrary: fc.constant(cellText(base[k])) }, { weight: 1, arbitrary: fc.constantFrom('=1+1', '"', 'a,b', 'a\nb', "'x", '') }, { weight: 1, arbitrary: v.text });
  const row = fc.tuple(...columns.map(cell)).map((cells) => cells.map(quote).join(','));
  const header = fc.oneof({ weight: 4, arbitrary: fc.constant(columns.join(',')) }, { weight: 1, arbitrary: fc.constant([...columns, 'unknown'].join(',')) }, { weight: 1, arbitrary: v.text });
  return fc.tuple(header, fc.array(row, { maxLength: 3 }), fc.constantFrom('\n', '\r\n')).map(([h, rows, eol]) => [h, ...rows].join(eol) + eol);
}

/** The body of one request to this operation (none for methods without one). */
export function bodyFor(w: World, op: Operation, method: string, pathValues: Record<string, string>): Arb<GeneratedBody> {
  if (!['POST', 'PUT', 'PATCH'].includes(method)) return fc.constant({});
  const documented = op.body;
  if (!documented) return fc.oneof({ weight: 3, arbitrary: fc.constant({}) }, { weight: 1, arbitrary: jsonBody(v.hostile) }, { weight: 1, arbitrary: strangeBody });
  const options: Array<{ weight: number; arbitrary: Arb<GeneratedBody> }> = [
    { weight: 1, arbitrary: strangeBody },
    { weight: 1, arbitrary: jsonBody(v.hostile) },
    { weight: 1, arbitrary: fc.constant({}) },
  ];
  const resource = op.resource;
  if (resource && (op.kind === 'create' || op.kind === 'replace' || op.kind === 'patch')) {
    options.push({ weight: 12, arbitrary: jsonBody(recordBody(w, resource, op.kind)) });
  } else if (resource && op.kind === 'search') {
    const params = listParameters(w, resource);
    options.push({ weight: 9, arbitrary: jsonBody(params) }, { weight: 3, arbitrary: jsonBody(params.map((findInput) => ({ findInput }))) });
  }
  const target = resourceAt(w, pathValues.resource);
  if (documented.types.includes('multipart/form-data')) {
    const files = target ? fc.oneof(csvOf(w, target).map((s) => Buffer.from(s)), fc.constant(Buffer.from(JSON.stringify([w.bodies.get(target.name) ?? {}]))), imageFiles) : imageFiles;
    options.push({ weight: 8, arbitrary: multipartBody(files) });
  }
  if (documented.types.includes('text/csv')) {
    options.push({ weight: 3, arbitrary: fc.tuple(csvOf(w, target), fc.constantFrom('text/csv', 'text/csv; charset=utf-8', 'text/plain')).map(([text, contentType]) => ({ body: { text }, contentType })) });
  }
  if (documented.schema && !(resource && op.kind !== 'other')) {
    const schema = resolve(w.t.openapi as Record<string, any>, documented.schema);
    if (schema?.type === 'array' && target && w.bodies.has(target.name)) {
      // An import: rows of the path's resource, each a create body changed a little.
      options.push({ weight: 8, arbitrary: jsonBody(fc.array(recordBody(w, target, 'create'), { maxLength: 3 })) });
    } else {
      const properties = Object.keys(schema?.properties ?? {});
      const body = fc.tuple(schemaValue(w, schema), mutations(properties, (k) => schemaValue(w, schema.properties[k], k))).map(([value, changes]) =>
        value && typeof value === 'object' && !Array.isArray(value) ? apply(value as Record<string, unknown>, changes) : value,
      );
      options.push({ weight: 10, arbitrary: jsonBody(body) });
    }
  }
  return fc.oneof(...options);
}

// ---------------------------------------------------------------------------------------------
// Query strings

type ArrayStyle = 'brackets' | 'indices' | 'repeat' | 'comma';

interface QueryStyle {
  arrays: ArrayStyle;
  /** `where[name]` as typed, or percent-encoded as a browser sends it. */
  rawBrackets: boolean;
}

/** Percent-encoding of the UTF-8 bytes (a lone surrogate becomes U+FFFD, as any client sends it). */
function pct(s: string, keepBrackets = false): string {
  let out = '';
  for (const byte of Buffer.from(s, 'utf8')) {
    const c = String.fromCharCode(byte);
    out += /[A-Za-z0-9\-._~]/.test(c) || (keepBrackets && (c === '[' || c === ']')) ? c : `%${byte.toString(16).toUpperCase().padStart(2, '0')}`;
  }
  return out;
}

/** qs-style pairs of a parameter object: where[user][id]=…, relations[]=…, order[name]=ASC. */
function flatten(prefix: string, value: unknown, style: QueryStyle, out: Array<[string, string]>, depth = 0) {
  if (value === undefined) return;
  // Far past the parser's 3 levels: the rest goes as one JSON text (a 2,000-deep array would not fit a URL anyway).
  if (depth > 8 && value !== null && typeof value === 'object') return void out.push([prefix, JSON.stringify(value)]);
  if (value === null) out.push([prefix, '']);
  else if (Array.isArray(value)) {
    if (style.arrays === 'comma' && value.every((x) => typeof x !== 'object' || x === null)) out.push([prefix, value.join(',')]);
    else value.forEach((item, i) => flatten(style.arrays === 'repeat' ? prefix : style.arrays === 'indices' ? `${prefix}[${i}]` : `${prefix}[]`, item, style, out, depth + 1));
  } else if (typeof value === 'object') {
    for (const [k, inner] of Object.entries(value as Record<string, unknown>)) flatten(`${prefix}[${k}]`, inner, style, out, depth + 1);
  } else out.push([prefix, String(value)]);
}

/** Pairs written as they are (already encoded): the parser's corners, limits and duplicates. */
const RAW_PAIRS = [
  'where[a][b][c][d]=1',
  'take=1&take=2',
  'take=-1',
  'order[x]=sideways',
  'relations=a.b.c.d',
  '%5F%5Fproto%5F%5F[x]=1',
  '__proto__=1',
  'constructor[prototype][x]=1',
  'a=b=c',
  '&&',
  '=',
  'x',
  '%',
  '%zz=1',
  'a=%zz',
  '%FF%FE=1',
  'a=%FF%FE',
  'where=1',
  'where[]=1',
  'order=ASC',
  'relations[][x]=1',
  'relations[100]=user',
  'skip=1e400',
  'search[]=x',
  'where[id][]=1',
  Array.from({ length: 201 }, (_, i) => `p${i}=1`).join('&'),
  Array.from({ length: 101 }, () => 'relations[]=x').join('&'),
];

function queryString(params: Record<string, unknown>, style: QueryStyle, raw: string[]): string {
  const pairs: Array<[string, string]> = [];
  for (const [k, value] of Object.entries(params)) flatten(k, value, style, pairs);
  const parts = pairs.map(([k, value]) => `${pct(k, style.rawBrackets)}=${pct(value)}`).concat(raw);
  // Longest parts go first when the query must shrink below the URL limit.
  while (parts.join('&').length > MAX_URL_CHARS) {
    const longest = parts.reduce((at, p, i) => (p.length > parts[at].length ? i : at), 0);
    parts.splice(longest, 1);
  }
  return parts.join('&');
}

/** Query parameters of an operation: list parameters for lists, relations for reads, the document's parameters elsewhere. */
function queryParameters(w: World, op: Operation): Arb<Record<string, unknown>> {
  const resource = op.resource;
  const junk = v.objectOf(v.key, v.hostile, 2);
  if (resource && (op.kind === 'list' || op.kind === 'count')) return listParameters(w, resource);
  if (resource && op.kind === 'read') {
    return fc.oneof({ weight: 2, arbitrary: fc.constant({}) }, { weight: 3, arbitrary: relationsValue(resource).map((relations) => ({ relations })) }, { weight: 1, arbitrary: junk });
  }
  const documented = op.parameters.filter((p) => p.in === 'query');
  if (!documented.length) return fc.oneof({ weight: 4, arbitrary: fc.constant({}) }, { weight: 1, arbitrary: junk });
  const entry = fc.oneof(
    ...documented.map((p) => ({ weight: 4, arbitrary: v.mostly(schemaValue(w, p.schema, p.name), 4).map((value) => [p.name.replace(/\[\]$/, ''), value] as [string, unknown]) })),
    { weight: 1, arbitrary: fc.tuple(v.key, v.hostile) },
  );
  return fc.array(entry, { maxLength: 4 }).map((list) => {
    const params: Record<string, unknown> = {};
    for (const [k, value] of list) put(params, k, value);
    return params;
  });
}

// ---------------------------------------------------------------------------------------------
// Paths and headers

function firstSegments(w: World): Set<string> {
  return new Set(w.operations.map((op) => op.path.split('/')[2]));
}

function pathValue(w: World, op: Operation, parameter: Parameter): Arb<string> {
  const odd = fc.oneof(v.text, fc.constantFrom('..', '.', '%', 'a/b', '~', '*', ' ', 'null', '0', '-1'));
  if (op === NOWHERE) {
    const known = firstSegments(w);
    return fc.tuple(fc.oneof(fc.constantFrom('employees', 'Employee', 'tag ', 'export.json', 'api', 'auth', 'v1', ''), v.text), fc.array(odd, { maxLength: 2 })).filter(([first]) => !known.has(first)).map(([first, rest]) => [first, ...rest].map((s) => pct(s)).join('/'));
  }
  const schema = parameter.schema ?? {};
  let valid: Arb<string>;
  if (Array.isArray(schema.enum) && schema.enum.length) valid = fc.constantFrom(...schema.enum.map(String));
  else if (parameter.name === 'id' || schema.format === 'uuid') valid = idOf(w, op.resource?.name, op.kind === 'delete');
  else valid = pick(w.texts, fc.constant('x'));
  // Never empty: `/api/tags/` is the list's path, another operation.
  return fc.oneof({ weight: 5, arbitrary: valid }, { weight: 1, arbitrary: odd }).filter((s) => s !== '').map((s) => pct(s));
}

const headerSafe = (s: string) => /^[\x20-\x7e]*$/.test(s);

function headersFor(w: World, op: Operation): Arb<Array<[string, string]>> {
  // Signing out ends the session of the token sent: it gets one of its own, never the callers' the other operations use.
  const signOut = op.path === '/api/auth/logout';
  const [admin, ...others] = signOut ? [{ token: w.leavingToken }] : w.tokens;
  const rare = <T>(arb: Arb<T>, weight = 12) => fc.oneof({ weight, arbitrary: fc.constant(undefined) }, { weight: 1, arbitrary: arb });
  const authorization = fc.oneof(
    { weight: 24, arbitrary: fc.constant(`Bearer ${admin.token}`) },
    ...(others.length ? [{ weight: 5, arbitrary: fc.constantFrom(...others.map((o) => `Bearer ${o.token}`)) }] : []),
    { weight: 1, arbitrary: fc.constant(undefined) },
    { weight: 2, arbitrary: fc.constantFrom(...w.badAuthorizations) },
    { weight: 1, arbitrary: v.text.filter(headerSafe) },
  );
  const tenant = rare(fc.oneof(fc.constantFrom(w.acme.tenantId, w.acme.tenantId.toUpperCase(), w.other.tenantId, ...v.ODD_UUIDS.filter(headerSafe)), v.text.filter(headerSafe)));
  const organization = rare(fc.oneof(idOf(w, 'organization'), v.text).filter(headerSafe), op.resource?.organizationHeader ? 3 : 12);
  const accept = rare(fc.constantFrom('*/*', 'application/json', 'text/html', 'application/xml', 'image/png', '', 'application/json;q=0', 'text/csv'));
  const forwarded = rare(fc.constantFrom('1.2.3.4', '::1', '1.2.3.4, 10.0.0.1', 'unknown', '999.999.999.999', '[::1]:80', 'x'.repeat(500)));
  const encoding = rare(fc.constantFrom('gzip', 'deflate', 'br', 'identity', 'bogus', 'gzip, gzip'), 30);
  const requestId = rare(fc.oneof(fc.constantFrom('abc-123', 'a'.repeat(129), 'a b', '../x', ''), v.text.filter(headerSafe)));
  // Entity tags where the operation declares If-Match or If-None-Match: any version, made-up ones, weak, malformed, too many.
  const declared = (name: string) => op.parameters.some((p) => p.in === 'header' && p.name === name);
  const tags = rare(
    fc.oneof(
      fc.constantFrom('*', '"0123456789abcdef0123456789abcdef"', '"0123456789abcdef0123456789abcdef.AAAAAAAAAAAAAAAA"', 'W/"abc"', '"a", W/"b"', '""', ',', 'W/', ' * ', Array(70).fill('"x"').join(',')),
      v.text.filter(headerSafe),
    ),
    4,
  );
  const conditions = fc.record({ ifMatch: declared('If-Match') ? tags : fc.constant(undefined), ifNoneMatch: declared('If-None-Match') ? tags : fc.constant(undefined) });
  // Idempotency keys where declared: shared ones (replays, other bodies: 422), fresh ones, malformed ones.
  const idempotencyKey = declared('Idempotency-Key')
    ? rare(fc.oneof(fc.constantFrom('fuzz-key-1', 'fuzz-key-2', 'x'.repeat(255), 'x'.repeat(256), 'a b', '', '"quoted"'), fc.uuid(), v.text.filter(headerSafe)), 4)
    : fc.constant(undefined);
  return fc.record({ authorization, tenant, organization, accept, forwarded, encoding, requestId, conditions, idempotencyKey }).map((h) => {
    const headers: Array<[string, string]> = [];
    if (h.authorization !== undefined) headers.push(['Authorization', h.authorization]);
    if (h.tenant !== undefined) headers.push(['Tenant-Id', h.tenant]);
    if (h.organization !== undefined) headers.push([op.resource?.organizationHeader ?? 'Organization-Id', h.organization]);
    if (h.accept !== undefined) headers.push(['Accept', h.accept]);
    if (h.forwarded !== undefined) headers.push(['X-Forwarded-For', h.forwarded]);
    if (h.encoding !== undefined) headers.push(['Content-Encoding', h.encoding]);
    if (h.requestId !== undefined) headers.push(['X-Request-Id', h.requestId]);
    if (h.conditions.ifMatch !== undefined) headers.push(['If-Match', h.conditions.ifMatch]);
    if (h.conditions.ifNoneMatch !== undefined) headers.push(['If-None-Match', h.conditions.ifNoneMatch]);
    if (h.idempotencyKey !== undefined) headers.push(['Idempotency-Key', h.idempotencyKey]);
    return headers;
  });
}

// ---------------------------------------------------------------------------------------------
// Whole requests

export function requestFor(w: World, op: Operation): Arb<FuzzRequest> {
  const pathParameters = op === NOWHERE ? NOWHERE.parameters : op.parameters.filter((p) => p.in === 'path');
  const style: Arb<QueryStyle> = fc.record({ arrays: fc.constantFrom<ArrayStyle>('brackets', 'indices', 'repeat', 'comma'), rawBrackets: fc.boolean() });
  const raw = fc.oneof({ weight: 8, arbitrary: fc.constant([] as string[]) }, { weight: 1, arbitrary: fc.array(fc.constantFrom(...RAW_PAIRS), { minLength: 1, maxLength: 2 }) });
  return fc
    .record({
      method: fc.constantFrom(...op.method.split('|')),
      pathValues: fc.tuple(...pathParameters.map((p) => pathValue(w, op, p))),
      query: queryParameters(w, op),
      style,
      raw,
      headers: headersFor(w, op),
    })
    .chain((parts) => {
      const values = Object.fromEntries(pathParameters.map((p, i) => [p.name, decodeURIComponentSafe(parts.pathValues[i])]));
      return bodyFor(w, op, parts.method, values).map((generated) => {
        let path = op.path;
        pathParameters.forEach((p, i) => (path = path.replace(`{${p.name}}`, parts.pathValues[i])));
        const query = queryString(parts.query, parts.style, parts.raw);
        const headers = [...parts.headers];
        if (generated.body) {
          if (generated.contentType !== undefined) headers.push(['Content-Type', generated.contentType]);
        } else headers.splice(0, headers.length, ...headers.filter(([name]) => name !== 'Content-Encoding'));
        return { method: parts.method, path: query ? `${path}?${query}` : path, headers, body: generated.body };
      });
    });
}

function decodeURIComponentSafe(s: string): string {
  try {
    return decodeURIComponent(s);
  } catch {
    return s;
  }
}
