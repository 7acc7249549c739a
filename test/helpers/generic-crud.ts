// The CRUD contract (create 201, read, list as {items, total}, replace, modify, delete 200) for every resource of a set of definitions, from their compiled
// definitions alone: a new YAML file joins it with no test code. For each resource: create, read,
// list (each filter, each sort field, search, date range, tags), each relations[] path, replace,
// modify, delete, a 400 for each missing required field and each enum violation, and tenant
// isolation. Bodies come from sample-records.ts. The tests are added to the calling file's suite
// (uvu's test), which runs them with test.run().
import knex from 'knex';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { createProjectApp as createApp } from '../../app/create-app.js';
import { loadConfig } from '../../engine/config/config.js';
import type { CompiledField, CompiledResource } from '../../engine/resource/compiled.js';
import { modules } from '../../resources/modules.js';
import { newTenant } from './accounts.js';
import { createTestApp, TEST_ENV, type TestApp } from './app.js';
import { assertError, assertNotFound } from './error-envelope.js';
import { clientFields, hasCrudRoutes, normalise, SampleRecords, walk, type Body, type Tenant } from './sample-records.js';

export interface GenericCrudOptions {
  /** Definition folders: the project's resources/ when absent (an extra folder goes beside it). */
  resourceDirs?: string[];
  /** Migration folders applied after the project's (an extra folder's migrations/). */
  migrationDirs?: string[];
  /** Only these resources; absent: every resource with CRUD routes. */
  only?: string[];
}

/**
 * The definitions, compiled as the app compiles them, to name the tests while the file loads
 * (uvu needs them before any test runs). The app is never asked a query: no database is opened.
 */
function definitionsAtLoad(resourceDirs?: string[]): CompiledResource[] {
  const db = knex({ client: 'pg' });
  const app = createApp({ config: loadConfig(TEST_ENV), db, modules, resourceDirs, log: () => {}, logError: () => {} });
  void db.destroy();
  return [...app.engine.registry.values()].sort((x, y) => x.name.localeCompare(y.name));
}

export function genericCrudTests(options: GenericCrudOptions = {}): { app: () => TestApp } {
  const moduleNames = modules.map((m) => m.name);
  const crud = (r: CompiledResource) => hasCrudRoutes(r, moduleNames);
  const atLoad = definitionsAtLoad(options.resourceDirs);
  const testedNames = atLoad.filter((r) => crud(r) && (!options.only || options.only.includes(r.name))).map((r) => r.name);
  const withoutRoutes = options.only ? [] : atLoad.filter((r) => !crud(r)).map((r) => r.name);

  let t: TestApp;
  let acme: Tenant;
  let other: Tenant;
  let samples: SampleRecords;
  /** A resource of the app under test, by name. */
  const resource = (name: string) => t.engine.registry.get(name)!;

  /** One test of one resource, handed the resource as the app under test compiled it. */
  const check = (name: string, what: string, fn: (r: CompiledResource) => Promise<void>) => test(`${name}: ${what}`, () => fn(resource(name)));

  test.before(async () => {
    t = await createTestApp({ resourceDirs: options.resourceDirs, migrationDirs: options.migrationDirs });
    samples = new SampleRecords(t, t.engine.registry, crud);
    acme = await newTenant(t, 'Acme');
    other = await newTenant(t, 'Other');
  });
  test.after(async () => {
    await t?.close();
  });

  /** What each resource's create test sent and got back; the later tests of the resource start from it. */
  const made = new Map<string, { sent: Body; record: Record<string, any> }>();

  function createdOf(r: CompiledResource) {
    const found = made.get(r.name);
    if (!found) throw new Error(`${r.name}: no record to work on (its create test failed)`);
    return found;
  }

  const base = (r: CompiledResource) => `/api/${r.paths[0]}`;
  const rowOf = (r: CompiledResource, id: string) => t.db(r.table).where({ id }).first();
  const tenantCount = async (r: CompiledResource, tenantId: string) => Number((await t.db(r.table).where({ tenantId }).count({ n: '*' }))[0].n);
  /** The tenant's records a list shows: not deleted (softDelete), nor children of a deleted parent. */
  const listedCount = async (r: CompiledResource, tenantId: string) => {
    const query = t.db(r.table).where(`${r.table}.tenantId`, tenantId);
    if (r.softDelete) query.whereNull(`${r.table}.deletedAt`);
    for (const { parent, via } of r.parentTouches.filter((p) => p.parent.softDelete)) {
      query.whereExists(t.db(parent.table).select(1).whereRaw('??.?? = ??.??', [parent.table, 'id', r.table, via]).whereNull(`${parent.table}.deletedAt`));
    }
    return Number((await query.count({ n: '*' }))[0].n);
  };
  const show = (res: { status: number; body: unknown }) => `${res.status} ${JSON.stringify(res.body)}`;

  const withoutRelations = (r: CompiledResource, record: Record<string, any>) =>
    Object.fromEntries(Object.entries(record).filter(([key]) => !r.relations.has(key)));

  /** Every page of a list query as the tenant sees it: the ids in order, and the total it reports. */
  async function listAll(r: CompiledResource, tenant: Tenant, query: Record<string, unknown> = {}) {
    const ids: string[] = [];
    const items: any[] = [];
    let total = 0;
    for (let skip = 0; ; skip += r.maxTake) {
      const res = await t.http.get(base(r)).query({ ...query, take: r.maxTake, skip }).set(tenant.auth);
      assert.is(res.status, 200, `list ${r.name} ${JSON.stringify(query)}: ${show(res)}`);
      total = res.body.total;
      items.push(...res.body.items);
      ids.push(...res.body.items.map((i: { id: string }) => i.id));
      if (res.body.items.length < r.maxTake || ids.length >= total) break;
    }
    return { ids, items, total };
  }

  /** The written fields of a body as the record holds them (the response, or a row of the table). */
  function assertHolds(r: CompiledResource, sent: Body, holder: Record<string, unknown>, where: string) {
    for (const field of clientFields(r)) {
      if (!(field.name in sent)) continue;
      assert.equal(normalise(field, holder[field.name]), normalise(field, sent[field.name]), `${r.name}.${field.name} in ${where}`);
    }
  }

  /** The rows a record's writable relations hold: child rows of a hasMany, join rows of a many-to-many. */
  async function linksOf(r: CompiledResource, id: string): Promise<Record<string, any[]>> {
    const links: Record<string, any[]> = {};
    for (const relation of r.writableRelations) {
      if (relation.kind === 'hasMany') links[relation.name] = await t.db(relation.target.table).where(relation.via!, id).orderBy('id');
      else links[relation.name] = (await t.db(relation.through!.table).where(relation.through!.from, id)).map((l) => l[relation.through!.to]).sort();
    }
    return links;
  }

  /** Each writable relation holds exactly what the body sent: its children, or its linked ids. */
  async function assertLinks(r: CompiledResource, sent: Body, id: string) {
    const links = await linksOf(r, id);
    for (const relation of r.writableRelations) {
      if (relation.kind === 'hasMany') {
        const children = sent[relation.name] as Body[];
        assert.is(links[relation.name].length, children.length, `${relation.name}: one row per child sent`);
        assertHolds(relation.target, children[0], links[relation.name][0], `${relation.name}[0]`);
      } else {
        assert.equal(links[relation.name], [...(sent[relation.idsKey!] as string[])].sort(), `${relation.name} linked`);
      }
    }
  }

  function assertNoHidden(target: CompiledResource, value: unknown, where: string) {
    for (const item of Array.isArray(value) ? value : value ? [value] : []) {
      for (const hidden of target.hiddenFields) assert.not.ok(hidden in item, `${where}: hidden ${target.name}.${hidden} was returned`);
    }
  }

  /** A value of the field that the record does not hold, for a filter that must not find it. */
  function otherValue(field: CompiledField, current: unknown): unknown {
    const def = field.definition;
    if (def.enum) return def.enum.find((v) => v !== current) ?? null;
    switch (def.type) {
      case 'boolean':
        return !current;
      case 'integer':
      case 'number':
        return Number(current) + 1;
      case 'date':
      case 'timestamp':
        return new Date(Date.parse(String(current)) + 86_400_000).toISOString();
      case 'uuid':
        return '00000000-0000-4000-8000-000000000000';
      default:
        return `${current} (not this)`;
    }
  }

  /** A field a PATCH can change on its own: a plain field, a free string first. */
  function patchable(r: CompiledResource): CompiledField | undefined {
    const plain = samples.plainFields(r);
    return plain.find((f) => f.definition.type === 'string' && !f.definition.enum) ?? plain[0];
  }

  /** The unique constraints make a copy of a sent body fail where a fresh body passes: refusals start from a fresh one. */
  const freshBody = (r: CompiledResource, tenant: Tenant) => samples.body(r, tenant);

  if (withoutRoutes.length) test('resources without routes answer 404 and are left out of this suite', async () => {
    for (const r of withoutRoutes.map(resource)) {
      const res = await t.http.get(base(r)).set(acme.auth);
      assert.is(res.status, 404, `${r.name} has routes: false and no module of its name, yet ${base(r)} answers ${show(res)}`);
    }
  });

  for (const name of testedNames) {
    check(name, `create answers 201 with what was sent, stored in the caller's tenant`, async (r) => {
      const sent = await freshBody(r, acme);
      const res = await t.http.post(base(r)).set(acme.auth).send(sent);
      assert.is(res.status, 201, `create ${r.name} with ${JSON.stringify(sent)}: ${show(res)}`);
      // The 201 may carry the children written with the record; a plain read has only its columns.
      const record = withoutRelations(r, res.body);
      made.set(r.name, { sent, record });
      assertHolds(r, sent, record, 'the 201 body');
      assert.is(record.tenantId, acme.tenantId);
      assert.match(record.id, /^[0-9a-f-]{36}$/);
      assertNoHidden(r, record, 'create');
      const row = await rowOf(r, record.id);
      assert.ok(row, 'the row exists');
      assert.is(row.tenantId, acme.tenantId);
      assertHolds(r, sent, row, 'the row');
      for (const { field, claim } of r.callerDefaults) {
        if (claim === 'userId' && !(field in sent)) assert.is(record[field], acme.userId, `${field} is the caller's user`);
      }
      await assertLinks(r, sent, record.id);
    });

    check(name, `read by id, under its path and each alias`, async (r) => {
      const { record } = createdOf(r);
      for (const path of r.paths) {
        const res = await t.http.get(`/api/${path}/${record.id}`).set(acme.auth);
        assert.is(res.status, 200, `${path}: ${show(res)}`);
        assert.equal(res.body, record, path);
      }
    });

    check(name, `list holds it and counts the tenant's records`, async (r) => {
      const { record } = createdOf(r);
      const list = await listAll(r, acme);
      assert.ok(list.ids.includes(record.id));
      assert.is(list.total, await listedCount(r, acme.tenantId));
      assert.is(list.ids.length, list.total);
      assert.equal(list.items.find((i) => i.id === record.id), record);
    });

    check(name, `each filter finds it with its value and not with another`, async (r) => {
      const { record } = createdOf(r);
      for (const name of r.filters.keys()) {
        const field = r.fields.get(name)!;
        const value = record[name];
        if (value === null || value === undefined) {
          // Nothing to match on: the filter still takes a valid value and leaves the record out.
          const probe = await listAll(r, acme, { [`where[${name}]`]: String(samples.value(field)) });
          assert.not.ok(probe.ids.includes(record.id), `where[${name}] with a value when the record has none`);
          continue;
        }
        const found = await listAll(r, acme, { [`where[${name}]`]: String(value) });
        assert.ok(found.ids.includes(record.id), `where[${name}]=${value} finds the record`);
        // The same in a search body, where the value keeps its JSON type.
        const searched = await t.http.post(`${base(r)}/search`).set(acme.auth).send({ where: { [name]: value }, take: r.maxTake });
        assert.is(searched.status, 200, `search where ${name}=${JSON.stringify(value)}: ${show(searched)}`);
        assert.is(searched.body.total, found.total, `search where ${name} counts as the query string does`);
        const differing = otherValue(field, value);
        if (differing === null) continue;
        const missed = await listAll(r, acme, { [`where[${name}]`]: String(differing) });
        assert.not.ok(missed.ids.includes(record.id), `where[${name}]=${differing} leaves the record out`);
      }
    });

    check(name, `each belongsTo relation filters by a field of the record it points at`, async (r) => {
      const { record } = createdOf(r);
      for (const relation of r.relations.values()) {
        if (relation.kind !== 'belongsTo' || typeof record[relation.via!] !== 'string') continue;
        const target = relation.target;
        const row = await rowOf(target, record[relation.via!]);
        const filter = [...target.filters.keys()].find((f) => row[f] !== null && row[f] !== undefined);
        if (!filter) continue;
        const value = normalise(target.fields.get(filter)!, row[filter]);
        const found = await listAll(r, acme, { [`where[${relation.name}][${filter}]`]: String(value) });
        assert.ok(found.ids.includes(record.id), `where[${relation.name}][${filter}]=${value} finds the record`);
        assert.ok(found.items.every((i) => typeof i[relation.via!] === 'string'), `where[${relation.name}][${filter}] keeps only records with a ${relation.name}`);
      }
    });

    check(name, `each sort field, ASC and DESC, in reverse orders of each other`, async (r) => {
      createdOf(r);
      // Two records at least, so an order is something to see.
      if ((await tenantCount(r, acme.tenantId)) < 2) await samples.create(r, acme);
      for (const name of r.sortable) {
        const asc = await listAll(r, acme, { [`order[${name}]`]: 'ASC' });
        const desc = await listAll(r, acme, { [`order[${name}]`]: 'DESC' });
        // Ties are broken by id in the same direction and NULLs go last ASC, first DESC: exact mirrors.
        assert.equal(desc.ids, [...asc.ids].reverse(), `order[${name}]`);
        const type = r.fields.get(name)!.definition.type;
        if (type === 'integer' || type === 'number' || type === 'date' || type === 'timestamp') {
          const values = asc.items.map((i) => i[name]).filter((v) => v !== null).map((v) => (typeof v === 'number' ? v : Date.parse(v)));
          for (let i = 1; i < values.length; i++) assert.ok(values[i - 1] <= values[i], `order[${name}]=ASC: ${values[i - 1]} before ${values[i]}`);
        }
      }
    });

    check(name, `search, date range and tags find it`, async (r) => {
      const { record, sent } = createdOf(r);
      const searched = r.search.find((f) => typeof record[f] === 'string' && record[f].length > 0);
      if (searched) {
        // A substring field is found by any part of its value; a fulltext one by a whole word.
        const term = r.searchModes.fulltext.includes(searched) ? record[searched].trim().split(/\s+/).pop() : record[searched].slice(-6);
        assert.ok((await listAll(r, acme, { search: term })).ids.includes(record.id), `search=${term} (${searched})`);
      }
      if (r.dateRange && record[r.dateRange]) {
        const at = record[r.dateRange];
        assert.ok((await listAll(r, acme, { startDate: at, endDate: at })).ids.includes(record.id), `startDate=endDate=${at}`);
        const later = new Date(Date.parse(at) + 1000).toISOString();
        assert.not.ok((await listAll(r, acme, { startDate: later })).ids.includes(record.id), `startDate=${later}`);
      }
      if (r.tagRelation?.writable) {
        const [tag] = sent[r.tagRelation.idsKey!] as string[];
        assert.ok((await listAll(r, acme, { 'tags[]': tag })).ids.includes(record.id), 'tags[] of its tag');
      }
    });

    check(name, `each relations[] path loads on read`, async (r) => {
      const { record, sent } = createdOf(r);
      // A child under each hasMany whose link a client writes, so the list it loads is not just empty.
      const children = new Map<string, string>();
      for (const relation of r.relations.values()) {
        const via = relation.target.fields.get(relation.via ?? '');
        if (relation.kind !== 'hasMany' || !via?.writable || !crud(relation.target)) continue;
        const body = await samples.body(relation.target, acme);
        children.set(relation.name, (await samples.create(relation.target, acme, { ...body, [via.name]: record.id })).id);
      }
      const firstLevel = [...r.relations.keys()].filter((name) => r.relationPaths.has(name));
      if (firstLevel.length) {
        const list = await t.http.get(base(r)).query({ 'relations[]': firstLevel, take: r.maxTake }).set(acme.auth);
        assert.is(list.status, 200, `list with relations[]=${firstLevel}: ${show(list)}`);
        for (const item of list.body.items) for (const name of firstLevel) assert.ok(name in item, `list item without ${name}`);
      }
      for (const path of r.relationPaths) {
        const res = await t.http.get(`${base(r)}/${record.id}`).query({ 'relations[]': path }).set(acme.auth);
        assert.is(res.status, 200, `relations[]=${path}: ${show(res)}`);
        const chain = path.split('.').reduce<CompiledResource[]>((at, name) => [...at, at[at.length - 1].relations.get(name)!.target], [r]);
        const relations = path.split('.').map((name, i) => chain[i].relations.get(name)!);
        for (const { holder, value, relation } of walk(res.body, relations)) {
          assert.ok(value !== undefined, `relations[]=${path}: ${relation.name} missing`);
          if (relation.kind === 'belongsTo') {
            assert.ok(value === null || (typeof value === 'object' && !Array.isArray(value)), `${path}: ${relation.name} is one record`);
            // The record its field names, or nothing when the field is empty.
            assert.is(value?.id ?? null, holder[relation.via!] ?? null, `${path}: ${relation.name} is the record ${relation.via} names`);
          } else {
            assert.ok(Array.isArray(value), `${path}: ${relation.name} is a list`);
            if (relation.kind === 'hasMany') for (const item of value) assert.is(item[relation.via!], holder.id, `${path}: ${relation.name} point at their holder`);
          }
          assertNoHidden(relation.target, value, `relations[]=${path}`);
        }
        const first = relations[0];
        const loaded = res.body[first.name];
        if (first.writable && first.kind === 'manyToMany') assert.equal(loaded.map((l: { id: string }) => l.id), sent[first.idsKey!], `${first.name} are the linked records`);
        if (first.writable && first.kind === 'hasMany') {
          const [child] = sent[first.name] as Body[];
          assert.ok(loaded.some((l: Record<string, unknown>) => clientFields(first.target).every((f) => !(f.name in child) || normalise(f, l[f.name]) === normalise(f, child[f.name]))), `${first.name} holds the child sent`);
        }
        const child = children.get(first.name);
        if (child) assert.ok(loaded.some((l: { id: string }) => l.id === child), `${first.name} holds the record that points here`);
      }
    });

    check(name, `replace (PUT) writes a whole new body`, async (r) => {
      const { record } = createdOf(r);
      const sent = await freshBody(r, acme);
      const res = await t.http.put(`${base(r)}/${record.id}`).set(acme.auth).send(sent);
      assert.is(res.status, 200, `replace ${r.name} with ${JSON.stringify(sent)}: ${show(res)}`);
      assertHolds(r, sent, res.body, 'the 200 body');
      assert.is(res.body.createdAt, record.createdAt, 'createdAt is kept');
      assert.ok(Date.parse(res.body.updatedAt) >= Date.parse(record.updatedAt), 'updatedAt moves forward');
      assertHolds(r, sent, await rowOf(r, record.id), 'the row');
      await assertLinks(r, sent, record.id);
      made.set(r.name, { sent, record: withoutRelations(r, res.body) });
    });

    check(name, `modify (PATCH) changes one field and leaves the rest`, async (r) => {
      const { record } = createdOf(r);
      const field = patchable(r);
      if (!field) return;
      let value = samples.value(field);
      for (let i = 0; i < 5 && normalise(field, value) === normalise(field, record[field.name]); i++) value = samples.value(field);
      const before = await rowOf(r, record.id);
      const res = await t.http.patch(`${base(r)}/${record.id}`).set(acme.auth).send({ [field.name]: value });
      assert.is(res.status, 200, `patch ${r.name}.${field.name}=${JSON.stringify(value)}: ${show(res)}`);
      const after = await rowOf(r, record.id);
      assert.equal(normalise(field, after[field.name]), normalise(field, value), `${field.name} in the row`);
      assert.equal(normalise(field, res.body[field.name]), normalise(field, value), `${field.name} in the body`);
      const { [field.name]: _a, updatedAt: _b, ...restBefore } = before;
      const { [field.name]: _c, updatedAt: _d, ...restAfter } = after;
      assert.equal(restAfter, restBefore, 'the other columns');
      made.set(r.name, { sent: createdOf(r).sent, record: withoutRelations(r, res.body) });
    });

    check(name, `delete answers 204, then the record is a 404`, async (r) => {
      // A record of its own: nothing points at it, so nothing blocks the delete.
      const fresh = await samples.create(r, acme);
      const res = await t.http.delete(`${base(r)}/${fresh.id}`).set(acme.auth);
      assert.is(res.status, 204, show(res));
      assertNotFound(await t.http.get(`${base(r)}/${fresh.id}`).set(acme.auth));
      if (r.softDelete) {
        // Marked deleted by the caller, kept, out of the list; recover brings it back.
        const row = await rowOf(r, fresh.id);
        assert.ok(row?.deletedAt, 'the row is kept, marked deleted');
        assert.is(row.deletedById, acme.userId, 'deletedById is the caller');
        assert.not.ok((await listAll(r, acme)).ids.includes(fresh.id), 'a deleted record is not listed');
        const seen = await t.http.get(`${base(r)}/${fresh.id}`).query({ withDeleted: true }).set(acme.auth);
        assert.is(seen.status, 200, show(seen));
        assert.ok(seen.body.deletedAt, 'withDeleted reads it, deletedAt set');
        assertNotFound(await t.http.delete(`${base(r)}/${fresh.id}`).set(acme.auth));
        const recovered = await t.http.put(`${base(r)}/${fresh.id}/recover`).set(acme.auth);
        assert.is(recovered.status, 200, show(recovered));
        assert.is(recovered.body.deletedAt, null);
        assert.is((await rowOf(r, fresh.id)).deletedAt, null, 'the row is live again');
        assert.is((await t.http.get(`${base(r)}/${fresh.id}`).set(acme.auth)).status, 200);
        assertNotFound(await t.http.put(`${base(r)}/${fresh.id}/recover`).set(acme.auth));
        return;
      }
      assert.is(await rowOf(r, fresh.id), undefined);
      assertNotFound(await t.http.delete(`${base(r)}/${fresh.id}`).set(acme.auth));
    });

    check(name, `each missing required field is a 400 naming it`, async (r) => {
      const body = await freshBody(r, acme);
      const count = await tenantCount(r, acme.tenantId);
      for (const field of clientFields(r).filter((f) => f.definition.required)) {
        const { [field.name]: _left, ...rest } = body;
        const res = await t.http.post(base(r)).set(acme.auth).send(rest);
        assertError(res, 400, `${field.name} should not be empty`);
        const replaced = await t.http.put(`${base(r)}/${createdOf(r).record.id}`).set(acme.auth).send(rest);
        assertError(replaced, 400, `${field.name} should not be empty`);
      }
      assert.is(await tenantCount(r, acme.tenantId), count, 'nothing was written');
    });

    check(name, `each enum field refuses a value outside its list`, async (r) => {
      const body = await freshBody(r, acme);
      const { record } = createdOf(r);
      const before = await rowOf(r, record.id);
      const count = await tenantCount(r, acme.tenantId);
      for (const field of clientFields(r).filter((f) => f.definition.enum)) {
        const message = `${field.name} must be one of the following values: ${field.definition.enum!.join(', ')}`;
        assertError(await t.http.post(base(r)).set(acme.auth).send({ ...body, [field.name]: 'NOT-IN-THE-LIST' }), 400, message);
        assertError(await t.http.patch(`${base(r)}/${record.id}`).set(acme.auth).send({ [field.name]: 'NOT-IN-THE-LIST' }), 400, message);
        if (r.filters.has(field.name)) assertError(await t.http.get(base(r)).query({ [`where[${field.name}]`]: 'NOT-IN-THE-LIST' }).set(acme.auth), 400, `where.${message}`);
      }
      assert.is(await tenantCount(r, acme.tenantId), count, 'nothing was written');
      assert.equal(await rowOf(r, record.id), before, 'the record is unchanged');
    });

    check(name, `another tenant gets 404 and the record is unchanged`, async (r) => {
      const { record } = createdOf(r);
      const before = await rowOf(r, record.id);
      const linksBefore = await linksOf(r, record.id);
      const url = `${base(r)}/${record.id}`;
      assertNotFound(await t.http.get(url).set(other.auth));
      // A body valid in the other tenant (its own references), so only the record's tenant can refuse it.
      assertNotFound(await t.http.put(url).set(other.auth).send(await freshBody(r, other)));
      const field = patchable(r);
      assertNotFound(await t.http.patch(url).set(other.auth).send(field ? { [field.name]: samples.value(field) } : {}));
      assertNotFound(await t.http.delete(url).set(other.auth));
      assert.not.ok((await listAll(r, other)).ids.includes(record.id), "the other tenant's list");
      const searched = await t.http.post(`${base(r)}/search`).set(other.auth).send({ take: r.maxTake });
      assert.is(searched.status, 200, show(searched));
      assert.not.ok(searched.body.items.some((i: { id: string }) => i.id === record.id), "the other tenant's search");
      assert.equal(await rowOf(r, record.id), before, 'the record is unchanged');
      assert.equal(await linksOf(r, record.id), linksBefore, 'its relations are unchanged');
      // Nor may the other tenant point at this tenant's records.
      const reference = clientFields(r).find((f) => f.definition.references && !r.fields.get(f.name)!.base && typeof record[f.name] === 'string');
      if (reference) {
        const target = reference.definition.references!;
        const res = await t.http.post(base(r)).set(other.auth).send({ ...(await freshBody(r, other)), [reference.name]: record[reference.name] });
        assertError(res, 400, `${reference.name} must reference an existing ${target}`);
      }
    });

    check(name, `delete of a record others point at: 204 and no row left pointing, or a 400 naming who points`, async (r) => {
      const { record } = createdOf(r);
      // Rows of the tenant whose reference fields hold the record's id (children made by the tests above).
      const pointing = async () => {
        const found: string[] = [];
        for (const other of t.engine.registry.values()) {
          for (const { field, target } of other.references) {
            if (target.name !== r.name) continue;
            const [{ n }] = await t.db(other.table).where(field, record.id).count({ n: '*' });
            if (Number(n)) found.push(other.table);
          }
        }
        return found;
      };
      const before = await pointing();
      const res = await t.http.delete(`${base(r)}/${record.id}`).set(acme.auth);
      if (r.softDelete) {
        // Marked deleted: what points at it keeps pointing (recover brings it back whole).
        assert.is(res.status, 204, show(res));
        assert.ok((await rowOf(r, record.id))?.deletedAt, 'the row is kept, marked deleted');
        assert.equal(await pointing(), before, 'what pointed at it still does');
        return;
      }
      if (res.status === 400) {
        assertError(res, 400, /^The record is still referenced by \S+ records; delete or move them first$/);
        const table = /referenced by (\S+) records/.exec(res.body.message[0])![1].replace(/-/g, '_');
        assert.ok(before.includes(table), `a 400 names ${table}, which holds no reference to it (${before.join(', ') || 'none does'})`);
        assert.ok(await rowOf(r, record.id), 'the record is still there');
      } else {
        assert.is(res.status, 204, show(res));
        assert.is(await rowOf(r, record.id), undefined);
        assert.equal(await pointing(), [], 'no row points at the deleted record');
      }
    });
  }

  /** The app under test, once the suite has started it (for checks a file adds of its own). */
  return { app: () => t };
}
