// Valid records for any resource, built from its compiled definition alone, so that a suite can
// loop over every definition (a new YAML file needs no test code): a body that passes every
// field rule and `rules:` entry, and the records it refers to, created first in the same tenant.
import { randomUUID } from 'node:crypto';
import * as assert from 'uvu/assert';
import type { CompiledField, CompiledRelation, CompiledResource, Registry } from '../../engine/resource/compiled.js';
import { toTimestamp } from '../../engine/resource/fields.js';
import { filledFromParent } from '../../engine/resource/schemas.js';
import { PASSWORD, uniqueEmail, type Session } from './accounts.js';
import type { TestApp } from './app.js';

export type Tenant = Session & { organizationId: string };
export type Body = Record<string, unknown>;

/**
 * Resources without CRUD routes of their own that other records point at, and how a test gets
 * one: a user is registered (its hash and role are the account routes' to set); a role exists
 * already, one per name, in every tenant.
 */
const MAKERS: Record<string, (t: TestApp, tenant: Tenant) => Promise<string>> = {
  async user(t, tenant) {
    const res = await t.http.post('/api/auth/register').set(tenant.auth).send({ user: { email: uniqueEmail('sample'), firstName: 'Sam', lastName: 'Ple' }, password: PASSWORD });
    assert.is(res.status, 201, `register a user: ${JSON.stringify(res.body)}`);
    return res.body.id;
  },
};

/** Dependencies deeper than this mean a cycle of required references: a definition mistake. */
const MAX_DEPTH = 8;
/**
 * Optional references are filled on the record and on the records it points at, so relations[]
 * paths two levels deep reach something; deeper, only required ones (a task's parent ends there).
 */
const OPTIONAL_DEPTH = 1;
const DAY_MS = 86_400_000;
const LETTERS = 'ABCDEFGHIJKLMNOPQRSTUVWXYZ';

/** n written with letters only (0 → A, 26 → BA): short codes such as a currency vary per call. */
function letters(n: number, length: number): string {
  let s = '';
  for (let i = 0; i < length; i++) {
    s = LETTERS[n % 26] + s;
    n = Math.floor(n / 26);
  }
  return s;
}

/** Does this resource answer the CRUD contract: generated routes, or a module of the same name mounting them. */
export function hasCrudRoutes(resource: CompiledResource, moduleNames: string[]): boolean {
  return resource.routes || moduleNames.includes(resource.name);
}

/** The fields a client writes, the scope's organizationId included. */
export const clientFields = (resource: CompiledResource): CompiledField[] => resource.writableFields;

/** Fields that take part in a unique constraint: a referenced record there must be a new one each time. */
function uniqueFields(resource: CompiledResource): Set<string> {
  return new Set((resource.definition.unique ?? []).flatMap((u) => u.fields));
}

export class SampleRecords {
  private counter = 0;
  /** `${tenantId} ${resource}` → the id of a record other records of that tenant may point at. */
  private shared = new Map<string, Promise<string>>();

  constructor(
    private readonly t: TestApp,
    private readonly registry: Registry,
    private readonly crud: (resource: CompiledResource) => boolean,
  ) {}

  /** A number never handed out before in this run: unique constraints never see the same value twice. */
  next(): number {
    return ++this.counter;
  }

  resource(name: string): CompiledResource {
    const found = this.registry.get(name);
    if (!found) throw new Error(`no resource ${name}`);
    return found;
  }

  /** A valid value of one field, different on each call where the rules leave room. */
  value(field: CompiledField, n = this.next()): unknown {
    const def = field.definition;
    switch (def.type) {
      case 'string':
      case 'text': {
        if (def.enum) return def.enum[n % def.enum.length];
        const max = def.maxLength ?? 10_000;
        const min = def.minLength ?? 0;
        let s: string;
        if (def.format === 'email') s = `s${n}@example.com`;
        else if (def.format === 'uri') s = `https://example.com/${field.name}/${n}`;
        else if (max <= 12) s = letters(n, Math.max(1, Math.min(max, Math.max(min, 3))));
        else s = `${field.name} ${n}`;
        if (s.length > max) s = s.slice(s.length - max);
        return s.padEnd(min, 'x');
      }
      case 'integer':
      case 'number': {
        const step = def.type === 'integer' ? 1 : 0.5;
        const low = def.minimum ?? (def.exclusiveMinimum !== undefined ? def.exclusiveMinimum + step : 1);
        const high = def.maximum ?? (def.exclusiveMaximum !== undefined ? def.exclusiveMaximum - step : low + 100_000);
        if (high < low) return def.type === 'integer' ? Math.ceil(low) : (def.exclusiveMinimum! + def.exclusiveMaximum!) / 2;
        const span = Math.floor((high - low) / step) + 1;
        return low + (n % span) * step;
      }
      case 'boolean':
        return n % 2 === 0;
      case 'uuid':
        return randomUUID();
      // A day per call over ten years: a date in a unique constraint (a plan per day) never repeats in a run.
      case 'date':
        return new Date(Date.UTC(2026, 0, 1) + (n % 3650) * DAY_MS).toISOString().slice(0, 10);
      case 'timestamp':
        return new Date(Date.UTC(2026, 0, 1, 9) + (n % 3650) * DAY_MS + (n % 60) * 60_000).toISOString();
    }
  }

  /**
   * A create (or replace) body: every writable field, each reference pointing at a record of the
   * tenant (the tenant's organization for the organization root), each `rules:` entry kept, and
   * one linked record per writable many-to-many relation (one child per writable hasMany).
   * `chain` is the resources whose bodies are being made above this one.
   */
  async body(resource: CompiledResource, tenant: Tenant, chain: string[] = [], omit: string[] = []): Promise<Body> {
    if (chain.length > MAX_DEPTH) throw new Error(`${resource.name}: required references go deeper than ${MAX_DEPTH} levels (${chain.join(' → ')})`);
    const depth = chain.length;
    const inside = [...chain, resource.name];
    const body: Body = {};
    const unique = uniqueFields(resource);
    for (const field of clientFields(resource)) {
      const def = field.definition;
      if (omit.includes(field.name)) continue;
      if (def.references) {
        const target = this.resource(def.references);
        if (!target.definition.organizationRoot && !def.required) {
          // A shared record being made further up the chain would wait on itself (a comment's parent).
          if (depth > OPTIONAL_DEPTH || inside.includes(target.name)) continue;
        }
        body[field.name] = await this.reference(target, tenant, unique.has(field.name) || inside.includes(target.name), inside);
      } else {
        body[field.name] = this.value(field);
      }
    }
    await this.pointByKind(resource, tenant, body, inside, depth);
    this.keepRules(resource, body);
    if (depth === 0) {
      for (const relation of resource.writableRelations) {
        // A writable hasMany takes whole child bodies, without what the parent fills in.
        if (relation.kind === 'hasMany') body[relation.name] = [await this.body(relation.target, tenant, inside, filledFromParent(resource, relation))];
        else body[relation.idsKey!] = [await this.reference(relation.target, tenant, false, inside)];
      }
    }
    return body;
  }

  /**
   * Each referencesBy field names a record of the tenant of the resource its discriminator names
   * (the discriminator's value as made, or its first value when the body has none); an optional
   * one only as deep as optional references are filled.
   */
  private async pointByKind(resource: CompiledResource, tenant: Tenant, body: Body, chain: string[], depth: number) {
    for (const by of resource.referencesBy) {
      if (!(by.field in body)) continue;
      if (!resource.fields.get(by.field)!.definition.required && depth > OPTIONAL_DEPTH) {
        delete body[by.field];
        continue;
      }
      const kind = typeof body[by.discriminator] === 'string' && by.targets.has(body[by.discriminator] as string) ? (body[by.discriminator] as string) : [...by.targets.keys()][0];
      const target = by.targets.get(kind)!;
      body[by.discriminator] = kind;
      body[by.field] = await this.reference(target, tenant, chain.includes(target.name), chain);
    }
  }

  /** field atLeast other: the field a day (or more, along a chain) after the other. */
  keepRules(resource: CompiledResource, body: Body) {
    const rules = resource.definition.rules ?? [];
    for (let pass = 0; pass < rules.length; pass++) {
      for (const rule of rules) {
        const other = body[rule.atLeast];
        if (typeof other !== 'string' || body[rule.field] === undefined) continue;
        const later = new Date(Date.parse(toTimestamp(other)) + DAY_MS).toISOString();
        const type = resource.fields.get(rule.field)!.definition.type;
        body[rule.field] = type === 'date' ? later.slice(0, 10) : later;
      }
    }
  }

  /** The id of a record of `target` in the tenant: shared across calls unless a fresh one is asked for. */
  async reference(target: CompiledResource, tenant: Tenant, fresh: boolean, chain: string[]): Promise<string> {
    if (target.definition.organizationRoot) return tenant.organizationId;
    if (fresh) return this.make(target, tenant, chain);
    const key = `${tenant.tenantId} ${target.name}`;
    let id = this.shared.get(key);
    if (!id) {
      id = this.make(target, tenant, chain);
      this.shared.set(key, id);
      // A failed creation must not be remembered as the tenant's record.
      id.catch(() => this.shared.delete(key));
    }
    return id;
  }

  private async make(target: CompiledResource, tenant: Tenant, chain: string[]): Promise<string> {
    const maker = MAKERS[target.name];
    if (maker) return maker(this.t, tenant);
    if (this.crud(target)) return (await this.create(target, tenant, await this.body(target, tenant, chain))).id;
    // Without routes or a maker: a record the tenant already has (made when the tenant was).
    const row = await this.t.db(target.table).select('id').where({ tenantId: tenant.tenantId }).first();
    if (!row) throw new Error(`cannot make a ${target.name} for a sample record: it has no routes, no maker in sample-records.ts and none in the tenant`);
    return row.id;
  }

  /** POST the body as the tenant's SUPER_ADMIN; the created record, or a failed assertion saying why. */
  async create(resource: CompiledResource, tenant: Tenant, body?: Body): Promise<Record<string, any>> {
    const sent = body ?? (await this.body(resource, tenant));
    const res = await this.t.http.post(`/api/${resource.paths[0]}`).set(tenant.auth).send(sent);
    assert.is(res.status, 201, `create ${resource.name} with ${JSON.stringify(sent)}: ${JSON.stringify(res.body)}`);
    return res.body;
  }

  /** Fields a PATCH may change alone: no reference to create, no other field tied to it. */
  plainFields(resource: CompiledResource): CompiledField[] {
    // Fields tied to others: a rule's two sides, what a computed field is computed from, and a
    // referencesBy field with the field naming its kind.
    const inRules = new Set([
      ...(resource.definition.rules ?? []).flatMap((r) => [r.field, r.atLeast]),
      ...Object.values(resource.definition.fields).flatMap((f) => f.computed?.secondsBetween ?? []),
      ...resource.referencesBy.flatMap((by) => [by.field, by.discriminator]),
    ]);
    return clientFields(resource).filter((f) => !f.definition.references && !f.base && !inRules.has(f.name));
  }
}

/** A written value as the API answers it: dates as full timestamps, uuids in lower case. */
export function normalise(field: CompiledField, value: unknown): unknown {
  if (value === null || value === undefined) return null;
  const type = field.definition.type;
  if (type === 'date' || type === 'timestamp') return value instanceof Date ? value.toISOString() : toTimestamp(String(value));
  if (type === 'uuid') return String(value).toLowerCase();
  if (type === 'integer' || type === 'number') return Number(value);
  return value;
}

/** Each relation value reached along a relations[] path from a record, with the record holding it (null and empty ends stop). */
export function walk(record: Record<string, any>, relations: CompiledRelation[]): Array<{ holder: Record<string, any>; value: any; relation: CompiledRelation }> {
  let level: Array<Record<string, any>> = [record];
  const reached: Array<{ holder: Record<string, any>; value: any; relation: CompiledRelation }> = [];
  for (const relation of relations) {
    const next: Array<Record<string, any>> = [];
    for (const holder of level) {
      const value = holder[relation.name];
      reached.push({ holder, value, relation });
      if (Array.isArray(value)) next.push(...value);
      else if (value) next.push(value);
    }
    level = next;
  }
  return reached;
}
