// Requests valid by the OpenAPI document, generated from an operation's parameter and request body
// schemas (valid-values.ts), sent as a caller that may use it: the tenant's SUPER_ADMIN token,
// its own tenant and organization wherever one is named, and ids of its own records where a
// path or body names a record (a random id half the time in a body: a reference to no record).
import fc from 'fast-check';
import qs from 'qs';
import type { Operation, Parameter } from './operations.js';
import type { FuzzRequest } from './requests.js';
import { valueOf, type Pick } from './valid-values.js';
import type { World } from './world.js';

type Json = Record<string, any>;

function picker(w: World, op: Operation): Pick {
  const own = fc.constantFrom(...w.allIds);
  return (name, schema) => {
    // A new key for each request: the same key with another request is a 422, rightly.
    if (name === 'Idempotency-Key') return fc.uuid({ version: 4 });
    if (name === 'tenantId' || name === 'Tenant-Id') return fc.constant(w.acme.tenantId);
    if (name === 'organizationId' || name === 'Organization-Id') return fc.constant(w.acme.organizationId);
    if (schema.type === 'string' && schema.format === 'uuid' && /Id$|^id$/.test(name) && op.kind !== 'other') return fc.oneof(own, fc.uuid({ version: 4 }));
    return undefined;
  };
}

/** The path's values: a record of the operation's own resource (one nothing needs, for a delete), else by schema. */
function pathValue(w: World, op: Operation, p: Parameter, pick: Pick, doc: Json): fc.Arbitrary<string> {
  const resource = op.resource?.name;
  if (p.name === 'id' && resource) {
    const ids = (op.kind === 'delete' ? w.victims.get(resource) : w.ids.get(resource)) ?? [];
    if (ids.length) return fc.constantFrom(...ids);
  }
  return valueOf(doc, p.schema, pick, 0, true, p.name).map(String);
}

/** The query string, as the document's styles say: deepObject (where[a][b]=v), form exploded (a=1&a=2). */
function queryString(values: Array<[Parameter, unknown]>): string {
  const deep: Json = {};
  const parts: string[] = [];
  for (const [p, value] of values) {
    if (p.style === 'deepObject') deep[p.name] = value;
    else for (const one of Array.isArray(value) ? value : [value]) parts.push(`${encodeURIComponent(p.name).replace(/%5B%5D$/, '[]')}=${encodeURIComponent(String(one))}`);
  }
  const deepText = qs.stringify(deep, { encodeValuesOnly: true, arrayFormat: 'indices' });
  return [...parts, ...(deepText ? [deepText] : [])].join('&');
}

export function validRequestFor(w: World, op: Operation, token: string): fc.Arbitrary<FuzzRequest> {
  const doc = w.t.openapi as Json;
  const pick = picker(w, op);
  const parameters = op.parameters.filter((p) => p.name.toLowerCase() !== 'authorization');
  // Every required parameter; each optional one half the time.
  const values = parameters.map((p) => {
    const value = p.in === 'path' ? pathValue(w, op, p, pick, doc) : valueOf(doc, p.schema, pick, 0, true, p.name);
    const entry = value.map((v) => [[p, v]] as Array<[Parameter, unknown]>);
    return p.required || p.in === 'path' ? entry : fc.option(entry, { nil: [] as Array<[Parameter, unknown]> });
  });
  const json = op.body?.types.includes('application/json') && op.body.schema;
  const body = json ? valueOf(doc, op.body!.schema, pick).map((v) => ({ json: v })) : fc.constant(undefined);
  return fc.tuple(fc.tuple(...values), body).map(([chosen, sent]) => {
    const all = chosen.flat();
    let path = op.path;
    for (const [p, v] of all) if (p.in === 'path') path = path.replace(`{${p.name}}`, encodeURIComponent(String(v)));
    const query = queryString(all.filter(([p]) => p.in === 'query'));
    const headers: Array<[string, string]> = [['Authorization', `Bearer ${token}`]];
    for (const [p, v] of all) if (p.in === 'header') headers.push([p.name, String(v)]);
    if (sent) headers.push(['Content-Type', 'application/json']);
    return { method: op.method, path: query ? `${path}?${query}` : path, headers, ...(sent ? { body: sent } : {}) };
  });
}
