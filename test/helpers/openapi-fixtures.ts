// A valid request for every operation of the document, built from the document itself: its
// examples and defaults, and where it has none, a value its schema describes (the world's ids and
// texts for ids and names); the create, replace and patch bodies of a resource are the sample
// bodies of the fuzz world (sample-records.ts). A new route is covered with no test code.
import { randomUUID } from 'node:crypto';
import { png } from './images.js';
import { PASSWORD, uniqueEmail } from './accounts.js';
import type { Operation } from './fuzz/operations.js';
import { resolve } from './fuzz/operations.js';
import type { FuzzBody, FuzzRequest } from './fuzz/requests.js';
import type { World } from './fuzz/world.js';

type Json = Record<string, any>;

/** At most this many values of an enumerated path parameter are tried (a report each, a resource each). */
const MAX_PATH_VALUES = 50;

/** qs-style pairs: where[name]=x, relations[]=a (form, explode), order[createdAt]=DESC (deepObject). */
function pairs(name: string, value: unknown, out: Array<[string, string]>) {
  if (value === undefined) return;
  if (Array.isArray(value)) for (const item of value) pairs(name, item, out);
  else if (value !== null && typeof value === 'object') {
    for (const [key, inner] of Object.entries(value)) pairs(`${name.replace(/\[\]$/, '')}[${key}]`, inner, out);
  } else out.push([name, value === null ? '' : String(value)]);
}

const encode = (s: string) => encodeURIComponent(s).replace(/%5B/g, '[').replace(/%5D/g, ']');

export class Fixtures {
  private emails = 0;

  constructor(private readonly w: World) {}

  private get doc(): Json {
    return this.w.t.openapi as Json;
  }

  /** A value the schema describes, deterministic: its example, default or first enum value, else one built from its type. */
  sample(schema: unknown, name = '', depth = 0): unknown {
    const s = resolve(this.doc, schema) ?? {};
    if (depth > 8) return null;
    if (s.example !== undefined) return structuredClone(s.example);
    if (s.default !== undefined) return structuredClone(s.default);
    if (Array.isArray(s.enum) && s.enum.length) return s.enum.find((v: unknown) => v !== null) ?? s.enum[0];
    const choices = s.oneOf ?? s.anyOf;
    if (Array.isArray(choices) && choices.length) return this.sample(choices[0], name, depth + 1);
    if (Array.isArray(s.allOf)) {
      const parts = s.allOf.map((part: unknown) => this.sample(part, name, depth + 1));
      return parts.every((p: unknown) => p && typeof p === 'object' && !Array.isArray(p)) ? Object.assign({}, ...parts) : parts[0];
    }
    const type = s.type ?? (s.properties ? 'object' : undefined);
    switch (type) {
      case 'object': {
        const out: Json = {};
        for (const key of s.required ?? []) out[key] = this.sample(s.properties?.[key] ?? {}, key, depth + 1);
        return out;
      }
      case 'array':
        return Array.from({ length: s.minItems ?? 0 }, () => this.sample(s.items ?? {}, name, depth + 1));
      case 'integer':
      case 'number': {
        const min = typeof s.minimum === 'number' ? s.minimum + (s.exclusiveMinimum ? 1 : 0) : 0;
        return typeof s.maximum === 'number' ? Math.min(min, s.maximum) : min;
      }
      case 'boolean':
        return false;
      case 'string':
        return this.text(s, name);
      default:
        return null;
    }
  }

  private text(s: Json, name: string): string {
    if (/password/i.test(name)) return PASSWORD;
    if (s.format === 'email' || /email/i.test(name)) return uniqueEmail(`fixture${++this.emails}`);
    if (s.format === 'uuid') return this.idFor(name);
    if (s.format === 'date-time') return '2026-01-05T09:30:00.000Z';
    if (s.format === 'date') return '2026-01-05';
    if (s.format === 'uri') return 'https://example.com/a.png';
    const text = this.w.texts.find((t) => t.length >= (s.minLength ?? 1) && t.length <= (s.maxLength ?? Infinity) && (!s.pattern || new RegExp(s.pattern, 'u').test(t)));
    return text ?? 'x'.repeat(Math.max(1, s.minLength ?? 1));
  }

  /** An id of the tenant's records for a field named after a resource (employeeId), else any of its ids. */
  private idFor(name: string): string {
    const named = name.replace(/Ids?$/, '').replace(/[A-Z]/g, (c) => `-${c.toLowerCase()}`);
    if (name === 'tenantId') return this.w.acme.tenantId;
    if (name === 'organizationId') return this.w.acme.organizationId;
    return this.w.ids.get(named)?.[0] ?? this.w.allIds[0];
  }

  /** The newest record of a resource in the tenant: the one a create fixture just made, if any. */
  private async newest(op: Operation): Promise<Json | undefined> {
    const resource = op.resource;
    if (!resource) return undefined;
    return this.w.t.db(resource.table).where({ tenantId: this.w.acme.tenantId }).orderBy([{ column: 'createdAt', order: 'desc' }, { column: 'id' }]).first();
  }

  /**
   * The value of a parameter that names something: the record the path names (one nothing refers
   * to, for a delete; else the newest, which a create fixture may just have made); a field of
   * that name of the newest record (a tag's name); an id of the tenant for a header named after
   * a resource (Organization-Id); else a sample.
   */
  private async valueFor(op: Operation, name: string, schema: Json): Promise<string> {
    const newest = await this.newest(op);
    if (name === 'id' && op.resource) return (op.kind === 'delete' ? this.w.victims.get(op.resource.name)?.[0] : newest?.id) ?? this.w.allIds[0];
    if (newest && typeof newest[name] === 'string') return newest[name];
    // Tenant-Id → tenantId: an id of the caller's own records, whatever the schema's example says.
    const camel = name.replace(/-([A-Za-z])/g, (_, c: string) => c.toUpperCase()).replace(/^[A-Z]/, (c) => c.toLowerCase());
    if (/Id$/.test(camel)) return this.idFor(camel);
    return String(this.sample(schema, camel));
  }

  /** The values a path parameter is tried with: every value of an enum, else the one it names. */
  private async pathValues(op: Operation, name: string, schema: Json): Promise<string[]> {
    if (Array.isArray(schema.enum) && schema.enum.length) return schema.enum.slice(0, MAX_PATH_VALUES).map(String);
    return [await this.valueFor(op, name, schema)];
  }

  /** The path item that declares the operation (an alias's is the one listing it in x-aliases). */
  private item(op: Operation): Json {
    return this.doc.paths[op.documentedAt ?? op.path];
  }

  private parameters(op: Operation, operation: Json): Json[] {
    return [...(this.item(op).parameters ?? []), ...(operation.parameters ?? [])].map((raw) => resolve(this.doc, raw)).filter(Boolean);
  }

  /** The query string: each parameter's example, and a value for each required one. */
  private async query(op: Operation, operation: Json): Promise<string> {
    const out: Array<[string, string]> = [];
    for (const p of this.parameters(op, operation)) {
      if (p.in !== 'query') continue;
      const value = p.example !== undefined ? p.example : p.required ? await this.valueFor(op, p.name, resolve(this.doc, p.schema) ?? {}) : undefined;
      pairs(p.name, value, out);
    }
    return out.map(([k, v]) => `${encode(k)}=${encodeURIComponent(v)}`).join('&');
  }

  /**
   * Every header parameter the operation declares, with the value it names (the caller's tenant,
   * its organization); If-Match as *, the one value every version of a record meets; a new
   * Idempotency-Key each time (one key sent with two requests is a 422).
   */
  private async headers(op: Operation, operation: Json): Promise<Array<[string, string]>> {
    const out: Array<[string, string]> = [];
    for (const p of this.parameters(op, operation)) {
      if (p.in === 'header' && p.name === 'If-Match') out.push([p.name, '*']);
      else if (p.in === 'header' && p.name === 'Idempotency-Key') out.push([p.name, randomUUID()]);
      else if (p.in === 'header') out.push([p.name, p.example !== undefined ? String(p.example) : await this.valueFor(op, p.name, resolve(this.doc, p.schema) ?? {})]);
    }
    return out;
  }

  private async body(op: Operation, operation: Json): Promise<{ body?: FuzzBody; contentType?: string }> {
    const requestBody = resolve(this.doc, operation.requestBody);
    const content: Json | undefined = requestBody?.content;
    if (!content) return {};
    const resource = op.resource;
    // A bulk write's body: one item, a create body, the newest record's id with a change, or a record to delete.
    if (resource && op.kind.startsWith('bulk-') && this.w.bodies.has(resource.name)) {
      const id = await this.valueFor({ ...op, kind: 'patch' }, 'id', {});
      const json =
        op.kind === 'bulk-create'
          ? [await this.w.samples.body(resource, this.w.acme)]
          : op.kind === 'bulk-patch'
            ? [{ id }]
            : // DELETE /{id} takes the record meant for deleting; the bulk delete takes the newest.
              { ids: [id] };
      return { body: { json }, contentType: 'application/json' };
    }
    if (resource && ['create', 'replace', 'patch'].includes(op.kind) && this.w.bodies.has(resource.name)) {
      // A new body each time: its unique values (a tag's name) are new, so a write does not conflict with the one before.
      return { body: { json: await this.w.samples.body(resource, this.w.acme) }, contentType: 'application/json' };
    }
    const json = content['application/json'];
    if (json) {
      const value = json.example !== undefined ? json.example : this.sample(json.schema);
      return { body: { json: value }, contentType: 'application/json' };
    }
    for (const [type, media] of Object.entries<Json>(content)) {
      if (type === 'multipart/form-data') return this.multipart(resolve(this.doc, media.schema));
      if (media.example !== undefined) return { body: { text: String(media.example) }, contentType: type };
    }
    return {};
  }

  /** A multipart body: each binary field a small PNG, the other required fields their sample. */
  private multipart(schema: Json): { body: FuzzBody; contentType: string } {
    const boundary = 'fixture0boundary';
    const chunks: Buffer[] = [];
    for (const [name, property] of Object.entries<Json>(schema?.properties ?? {})) {
      const p = resolve(this.doc, property) ?? {};
      const binary = p.format === 'binary';
      if (!binary && !(schema.required ?? []).includes(name)) continue;
      const disposition = `form-data; name="${name}"${binary ? '; filename="fixture.png"' : ''}`;
      chunks.push(Buffer.from(`--${boundary}\r\nContent-Disposition: ${disposition}\r\n${binary ? 'Content-Type: image/png\r\n' : ''}\r\n`));
      chunks.push(binary ? png(2, 2) : Buffer.from(String(this.sample(p, name))), Buffer.from('\r\n'));
    }
    chunks.push(Buffer.from(`--${boundary}--\r\n`));
    return { body: { base64: Buffer.concat(chunks).toString('base64') }, contentType: `multipart/form-data; boundary=${boundary}` };
  }

  /** The requests of one operation: one per value of its enumerated path parameters, else one. */
  async requestsFor(op: Operation, token: string | undefined): Promise<FuzzRequest[]> {
    // A HEAD the document does not list is the GET's, without a body.
    const item = this.item(op);
    const operation = (item[op.method.toLowerCase()] ?? item.get) as Json;
    let paths = [op.path];
    for (const p of op.parameters.filter((parameter) => parameter.in === 'path')) {
      const values = await this.pathValues(op, p.name, p.schema);
      paths = paths.flatMap((path) => values.map((value) => path.replace(`{${p.name}}`, encodeURIComponent(value))));
    }
    const query = await this.query(op, operation);
    const requests: FuzzRequest[] = [];
    for (const path of paths) {
      const { body, contentType } = ['POST', 'PUT', 'PATCH'].includes(op.method) || op.kind === 'bulk-delete' ? await this.body(op, operation) : {};
      const headers = await this.headers(op, operation);
      if (token) headers.push(['Authorization', `Bearer ${token}`]);
      if (contentType) headers.push(['Content-Type', contentType]);
      requests.push({ method: op.method, path: query ? `${path}?${query}` : path, headers, body });
    }
    return requests;
  }
}
