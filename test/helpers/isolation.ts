// The world the isolation suites attack (no caller reaches another tenant's records, nor the owner-scoped role another employee's): a viewer (the attacker), the records it
// must never see or touch (victims, one per resource that has one) and records of its own
// (probes), built from the compiled registry so that a new YAML resource joins with no test
// code. Also: what the viewer may see as a database query (the oracle the answers are checked
// against), cross links written straight into the database so that every relation and nested
// filter has a foreign record within reach, snapshots of the victims' rows, and the check that
// every route of the router was attacked or says why it needs no attack.
import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import type Router from '@koa/router';
import knex, { type Knex } from 'knex';
import request from 'supertest';
import * as assert from 'uvu/assert';
import { createProjectApp as createApp } from '../../app/create-app.js';
import { loadConfig } from '../../engine/config/config.js';
import type { CompiledRelation, CompiledResource, Registry } from '../../engine/resource/compiled.js';
import { filledFromParent } from '../../engine/resource/schemas.js';
import { modules } from '../../resources/modules.js';
import type { Session } from './accounts.js';
import { TEST_ENV, type TestApp } from './app.js';
import { operationsOf } from './openapi.js';
import { hasCrudRoutes, type Body } from './sample-records.js';
import { filesIn } from './upload.js';
import { CHANGE_SUM_TABLE, CHANGE_TABLE } from '../../engine/db/change-marks.js';

export type Row = Record<string, any>;

/**
 * The definitions as the app compiles them, while a test file loads (uvu names its tests before
 * any runs). No query is ever asked: no database is opened.
 */
/**
 * Why an import route needs no attack of its own: a one-segment alias of a resource's import path
 * (POST /api/import/tags for tag) is declared aliasOf it, so start-up refuses one whose access or
 * limits differ, and the import resolves both names to the one resource the suites attack through
 * its own path.
 */
export function importAliasExemption(resources: CompiledResource[], key: string): string | undefined {
  const name = /^POST \/api\/import\/([^/:]+)$/.exec(key)?.[1];
  const owner = name && resources.find((r) => r.name !== name && r.paths.includes(name));
  return owner ? `an alias of POST /api/import/${owner.name}, attacked through that path` : undefined;
}

export function definitionsAtLoad(): CompiledResource[] {
  const db = knex({ client: 'pg' });
  const app = createApp({ config: loadConfig(TEST_ENV), db, modules, log: () => {}, logError: () => {} });
  void db.destroy();
  return [...app.engine.registry.values()].sort((x, y) => x.name.localeCompare(y.name));
}

const moduleNames = modules.map((m) => m.name);
/** Resources answering the CRUD contract: generated routes, or a module of the same name mounting them. */
export const crud = (r: CompiledResource) => hasCrudRoutes(r, moduleNames);

/** Who attacks: its token, its tenant and, for the owner-scoped role, its employee record. */
export interface Viewer {
  auth: Session['auth'];
  tenantId: string;
  userId: string;
  /** Set when the viewer's role is limited to its own records (EMPLOYEE). */
  ownEmployeeId?: string;
}

export const ownerScoped = (viewer: Viewer) => viewer.ownEmployeeId !== undefined;

/** Whether the owner rule hides some records of this resource from the viewer. */
export const ownerApplies = (viewer: Viewer, r: CompiledResource) => ownerScoped(viewer) && r.owner !== undefined;

/** The rows of a resource the viewer may see, as a knex query: the oracle every answer is held to. */
export function visibleRows(db: Knex, r: CompiledResource, viewer: Viewer, ref = r.table): Knex.QueryBuilder {
  const query = db(r.table === ref ? r.table : { [ref]: r.table }).where(`${ref}.tenantId`, viewer.tenantId);
  if (ownerApplies(viewer, r)) query.where(`${ref}.${r.owner}`, viewer.ownEmployeeId!);
  if (r.softDelete) query.whereNull(`${ref}.deletedAt`);
  return query;
}

/** Whether a record (a row of the database or one the API answered) is one the viewer may see. */
export function isVisible(r: CompiledResource, record: Row, viewer: Viewer): boolean {
  if (record.tenantId !== viewer.tenantId || (r.softDelete && record.deletedAt)) return false;
  return !ownerApplies(viewer, r) || record[r.owner!] === viewer.ownEmployeeId;
}

/**
 * A related record of `rel` of a row of `r` is visible and matches every condition: the same
 * EXISTS as a nested where (where[rel][field]=value) means, for the oracle.
 */
export function whereRelated(db: Knex, query: Knex.QueryBuilder, r: CompiledResource, rel: CompiledRelation, viewer: Viewer, conditions: Row) {
  const alias = `oracle_${rel.name}`;
  const target = rel.target;
  const related = visibleRows(db, target, viewer, alias).select(db.raw('1'));
  if (rel.kind === 'belongsTo') related.whereRaw('?? = ??', [`${alias}.id`, `${r.table}.${rel.via}`]);
  else if (rel.kind === 'hasMany') related.whereRaw('?? = ??', [`${alias}.${rel.via}`, `${r.table}.id`]);
  else {
    const t = rel.through!;
    related.join({ oracle_link: t.table }, `oracle_link.${t.to}`, `${alias}.id`).whereRaw('?? = ??', [`oracle_link.${t.from}`, `${r.table}.id`]);
  }
  for (const [field, value] of Object.entries(conditions)) related.where(`${alias}.${field}`, value);
  return query.whereExists(related);
}

export const countOf = async (query: Knex.QueryBuilder) => Number((await query.clone().clearSelect().count({ n: '*' }))[0].n);
export const idsOf = async (query: Knex.QueryBuilder) => (await query.clone().clearSelect().pluck('id')).map(String).sort();

/** Every relations[] path of a resource, in requests of at most 50 names (the list parser's limit). */
export function relationChunks(r: CompiledResource, size = 50): string[][] {
  const paths = [...r.relationPaths];
  const chunks: string[][] = [];
  for (let i = 0; i < paths.length; i += size) chunks.push(paths.slice(i, i + size));
  return chunks;
}

/** The relations met along a relations[] path (user.role: employee.user, then user.role). */
export function relationsAlong(r: CompiledResource, dotted: string): CompiledRelation[] {
  const found: CompiledRelation[] = [];
  let at = r;
  for (const name of dotted.split('.')) {
    const relation = at.relations.get(name)!;
    found.push(relation);
    at = relation.target;
  }
  return found;
}

/** Each record a response reached along the given relations[] paths, with the resource it is a record of. */
export function reached(r: CompiledResource, records: Row[], paths: string[]): Array<{ path: string; target: CompiledResource; record: Row }> {
  const out: Array<{ path: string; target: CompiledResource; record: Row }> = [];
  for (const dotted of paths) {
    let level = records;
    for (const relation of relationsAlong(r, dotted)) {
      const next: Row[] = [];
      for (const holder of level) {
        const value = holder[relation.name];
        for (const item of Array.isArray(value) ? value : value ? [value] : []) {
          out.push({ path: dotted, target: relation.target, record: item });
          next.push(item);
        }
      }
      level = next;
    }
  }
  return out;
}

/** Does any relations[] path of the resource reach a resource of which the viewer sees only some records? */
export const reachesHidden = (r: CompiledResource, hidden: (target: CompiledResource) => boolean) =>
  [...r.relationPaths].some((p) => relationsAlong(r, p).some((rel) => hidden(rel.target)));

/** Can a create or update body of the resource name a record of a resource the viewer sees only some of? */
export function writesCanName(r: CompiledResource, registry: Registry, hidden: (target: CompiledResource) => boolean): boolean {
  const names = (holder: CompiledResource, skip: string[] = []) =>
    holder.writableFields.some((f) => !skip.includes(f.name) && f.definition.references !== undefined && hidden(registry.get(f.definition.references)!)) ||
    holder.referencesBy.some((by) => !skip.includes(by.field) && [...by.targets.values()].some(hidden));
  return (
    names(r) ||
    r.writableRelations.some((rel) => (rel.kind === 'manyToMany' ? hidden(rel.target) : names(rel.target, filledFromParent(r, rel))))
  );
}

// ---------------------------------------------------------------------------------------------
// Requests, recorded: the route check at the end knows which routes the attacks reached.

export interface Recorded {
  method: string;
  path: string;
}

/** A supertest agent on the app that records the method and path of every request it sends. */
export function recordingHttp(t: TestApp): { http: ReturnType<typeof request>; requests: Recorded[] } {
  const requests: Recorded[] = [];
  const callback = t.koa.callback();
  const http = request((req: any, res: any) => {
    requests.push({ method: req.method, path: String(req.url).split('?')[0] });
    return callback(req, res);
  });
  return { http, requests };
}

interface Layer {
  methods: string[];
  path: string;
  match(path: string): boolean;
}

/** The routes of the app's router, as @koa/router holds them. */
export function routerLayers(t: TestApp): Layer[] {
  const dispatch = t.koa.middleware.find((m) => (m as { router?: Router }).router) as unknown as { router: Router } | undefined;
  if (!dispatch) throw new Error('the app has no router middleware to list routes from');
  return (dispatch.router.stack as unknown as Layer[]).filter((l) => l.methods.length > 0);
}

/** `GET /api/employee/:id`: a route as one string (HEAD goes with GET). */
export const routeKey = (layer: Layer) => `${layer.methods.find((m) => m !== 'HEAD') ?? layer.methods[0]} ${layer.path}`;

/**
 * Routes that name no tenant record: they act on the account of the token, a credential or an
 * email address (auth-*.test.ts, account.test.ts, email-*.test.ts cover them), or serve the
 * documentation. Each is listed by name, so that a new route is never let through by a pattern.
 */
const ACCOUNT = 'acts on the account the token, a credential or an email address names; never on a tenant record by id';
export const ROUTES_WITHOUT_RECORDS: Record<string, string> = {
  'GET /api/health': 'public; reads no tenant data',
  'GET /api/health/live': 'public; reads nothing at all',
  'GET /api/health/ready': 'public; reads only the migration lock, no tenant data',
  'POST /api/auth/register': ACCOUNT,
  'POST /api/auth/login': ACCOUNT,
  'POST /api/auth/refresh-token': ACCOUNT,
  'GET /api/auth/check': ACCOUNT,
  'GET /api/auth/authenticated': ACCOUNT,
  'POST /api/auth/email/verify/resend-verification-code': ACCOUNT,
  'POST /api/auth/email/verify/resend-link': ACCOUNT,
  'POST /api/auth/email/verify/code': ACCOUNT,
  'POST /api/email-check/validate': ACCOUNT,
  'POST /api/email-reset/request-change': ACCOUNT,
  'POST /api/email-reset/request-change-email': ACCOUNT,
  'POST /api/email-reset/verify': ACCOUNT,
  'POST /api/email-reset/verify-change-email': ACCOUNT,
  'POST /api/auth/reset-password': ACCOUNT,
  'POST /api/auth/request-password': ACCOUNT,
  'POST /api/auth/change-password': ACCOUNT,
  'POST /api/auth/logout': ACCOUNT,
  'GET /api/auth/logout': ACCOUNT,
  'GET /api/user/me': ACCOUNT,
  'PUT /api/user/me': ACCOUNT,
  'POST /api/tenant': "renames the caller's own tenant; takes no id",
  ...Object.fromEntries(
    ['google', 'github', 'microsoft', 'facebook'].flatMap((p) => [
      [`GET /api/auth/${p}`, 'social login: starts a sign-in, names no record'],
      [`GET /api/auth/${p}/callback`, 'social login: ends a sign-in, names no record'],
    ]),
  ),
  'GET /swg-json': 'documentation',
  'GET /swg': 'documentation',
  'GET /swg/': 'documentation',
  'GET /swg/assets/:version/:file': 'documentation',
  'GET /docs/:page': 'documentation (the reference pages of docs/)',
};

/**
 * Every route of the router (and every operation of the OpenAPI document) was reached by an
 * attack request, or `exempt` says why it needs none. A route added by hand fails here until an
 * attack reaches it: it cannot escape the suite by being new.
 */
export function assertEveryRouteAttacked(t: TestApp, requests: Recorded[], exempt: (key: string) => string | undefined) {
  const layers = routerLayers(t);
  const reachedBy = (layer: Layer) => requests.some((r) => (layer.methods.includes(r.method) || (r.method === 'HEAD' && layer.methods.includes('GET'))) && layer.match(r.path));
  const missed = layers.filter((l) => !exempt(routeKey(l)) && !reachedBy(l)).map(routeKey);
  assert.equal(missed, [], `routes no isolation attack reached (attack them in the isolation suites, or say in test/helpers/isolation.ts why they need none): ${missed.join(', ')}`);
  const normal = (p: string) => p.replace(/\{[^}]+\}|:[^/]+/g, ':p');
  const undocumented = operationsOf(t.openapi as Record<string, any>).filter(({ path: p, method }) => {
    const layer = layers.find((l) => l.methods.includes(method.toUpperCase()) && normal(l.path) === normal(p));
    return !layer || (!exempt(routeKey(layer)) && !reachedBy(layer));
  });
  assert.equal(undocumented.map(({ method, path: p }) => `${method.toUpperCase()} ${p}`), [], 'documented operations no attack reached');
}

// ---------------------------------------------------------------------------------------------
// Cross links: foreign records within reach of every relation, written past the API (which
// refuses them), as a corrupt row or a bug elsewhere would leave them.

export interface CrossLinkWorld {
  db: Knex;
  registry: Registry;
  viewer: Viewer;
  victims: Map<string, Row>;
  probes: Map<string, Row>;
}

/** Fields of `r` pointing at another record: its references and the via of each belongsTo. */
function pointers(r: CompiledResource): Array<{ field: string; target: CompiledResource }> {
  const found = new Map<string, CompiledResource>();
  for (const { field, target } of r.references) found.set(field, target);
  for (const rel of r.relations.values()) if (rel.kind === 'belongsTo') found.set(rel.via!, rel.target);
  return [...found].map(([field, target]) => ({ field, target }));
}

/**
 * Every probe points at the victims (its references, its many-to-many links) and every victim at
 * the probes, so that a relation, a nested filter, a report or a statistic that forgot the scope
 * would show a foreign record. A record's owner field is left alone when the owner rule is what
 * is attacked: moved, the record would change hands rather than point across.
 */
export async function crossLink(w: CrossLinkWorld) {
  const ownerKept = (r: CompiledResource, field: string) => ownerScoped(w.viewer) && field === r.owner;
  const update = async (r: CompiledResource, row: Row | undefined, others: Map<string, Row>) => {
    if (!row) return;
    const changes: Row = {};
    for (const { field, target } of pointers(r)) {
      const other = others.get(target.name);
      if (other && !ownerKept(r, field) && field !== 'id') changes[field] = other.id;
    }
    if (Object.keys(changes).length) {
      try {
        await w.db(r.table).where({ id: row.id }).update(changes);
      } catch (err) {
        throw new Error(`cross-linking ${r.name} ${row.id} with ${JSON.stringify(changes)} failed: ${(err as Error).message}`);
      }
    }
  };
  for (const r of w.registry.values()) {
    if (!crud(r)) continue;
    await update(r, w.probes.get(r.name), w.victims);
    await update(r, w.victims.get(r.name), w.probes);
    for (const rel of r.relations.values()) {
      if (rel.kind === 'hasMany') {
        // A foreign child under the viewer's record, through the child's via (a reference field
        // of the child or not).
        const child = w.victims.get(rel.target.name);
        const parent = w.probes.get(r.name);
        if (child && parent && !ownerKept(rel.target, rel.via!)) await w.db(rel.target.table).where({ id: child.id }).update({ [rel.via!]: parent.id });
      }
      if (rel.kind !== 'manyToMany') continue;
      const t = rel.through!;
      const links: Row[] = [];
      const probe = w.probes.get(r.name);
      const victim = w.victims.get(r.name);
      if (probe && w.victims.get(rel.target.name)) links.push({ [t.from]: probe.id, [t.to]: w.victims.get(rel.target.name)!.id });
      if (victim && w.probes.get(rel.target.name)) links.push({ [t.from]: victim.id, [t.to]: w.probes.get(rel.target.name)!.id });
      if (links.length) await w.db(t.table).insert(links).onConflict().ignore();
    }
  }
}

// ---------------------------------------------------------------------------------------------
// Snapshots: rows (and stored files) that an attack must leave byte for byte as they were.

export type Snapshot = Record<string, string[]>;

const CHANGE_MARK_TABLES = new Set([CHANGE_TABLE, CHANGE_SUM_TABLE]);

/**
 * Every row of every table that belongs to the tenant: rows with its tenantId, and rows of
 * tables without one (join tables, the tenant itself, tokens) that name one of those rows' ids.
 * `keep` narrows the rows of a table with a tenantId (the owner suite keeps another employee's).
 */
export async function snapshot(db: Knex, tenantId: string, keep: (table: string, row: Row) => boolean = () => true): Promise<Snapshot> {
  const columns: Array<{ table_name: string; column_name: string; data_type: string }> = await db('information_schema.columns')
    .select('table_name', 'column_name', 'data_type')
    .whereRaw('table_schema = current_schema()');
  const tables = new Map<string, Array<{ name: string; type: string }>>();
  for (const c of columns) {
    // The change marks are bookkeeping of writes, not the tenant's data: folds rewrite them.
    if (CHANGE_MARK_TABLES.has(c.table_name)) continue;
    if (!tables.has(c.table_name)) tables.set(c.table_name, []);
    tables.get(c.table_name)!.push({ name: c.column_name, type: c.data_type });
  }
  const shot: Snapshot = {};
  const ids = new Set<string>([tenantId]);
  const text = (row: Row) => JSON.stringify(row, (_key, value) => (typeof value === 'bigint' ? String(value) : value));
  for (const [table, cols] of tables) {
    if (!cols.some((c) => c.name === 'tenantId')) continue;
    const rows = (await db(table).where({ tenantId })).filter((row: Row) => keep(table, row));
    for (const row of rows) if (row.id) ids.add(String(row.id));
    shot[table] = rows.map(text).sort();
  }
  for (const [table, cols] of tables) {
    if (cols.some((c) => c.name === 'tenantId')) continue;
    const uuids = cols.filter((c) => c.type === 'uuid').map((c) => c.name);
    if (!uuids.length) continue;
    const rows = await db(table).where((b) => {
      for (const c of uuids) b.orWhereIn(c, [...ids]);
    });
    shot[table] = rows.map(text).sort();
  }
  return shot;
}

/** The two snapshots hold the same rows; a difference names its table and a row that changed. */
export function assertSameSnapshot(before: Snapshot, after: Snapshot, what: string) {
  for (const table of new Set([...Object.keys(before), ...Object.keys(after)])) {
    const was = before[table] ?? [];
    const now = after[table] ?? [];
    const gone = was.filter((row) => !now.includes(row));
    const added = now.filter((row) => !was.includes(row));
    assert.ok(!gone.length && !added.length, `${what}: table ${table} changed; before: ${gone[0] ?? '-'}; after: ${added[0] ?? '-'}`);
  }
}

/** The files stored for a tenant's uploads: path and a hash of the content. */
export function storedFiles(uploadDir: string, tenantId: string): Record<string, string> {
  const dir = path.join(uploadDir, tenantId);
  return Object.fromEntries(filesIn(dir).map((f) => [f, createHash('sha256').update(readFileSync(path.join(dir, f))).digest('hex')]));
}

// ---------------------------------------------------------------------------------------------
// Small tools.

/** supertest: the raw body as one Buffer (zips, CSV downloads). */
export function binary(res: any, done: (err: Error | null, body: Buffer) => void) {
  const chunks: Buffer[] = [];
  res.on('data', (chunk: Buffer) => chunks.push(chunk));
  res.on('end', () => done(null, Buffer.concat(chunks)));
}

/** Every string anywhere in a JSON value. */
export function stringsIn(value: unknown, into: Set<string> = new Set()): Set<string> {
  if (typeof value === 'string') into.add(value.toLowerCase());
  else if (Array.isArray(value)) for (const v of value) stringsIn(v, into);
  else if (value && typeof value === 'object') for (const v of Object.values(value)) stringsIn(v, into);
  return into;
}

/** Every number under a key ending in "seconds" (seconds, billableSeconds, totalSeconds…) anywhere in a JSON value. */
export function secondsIn(value: unknown, into: number[] = []): number[] {
  if (Array.isArray(value)) for (const v of value) secondsIn(v, into);
  else if (value && typeof value === 'object') {
    for (const [key, v] of Object.entries(value)) {
      if (/seconds$/i.test(key) && typeof v === 'number') into.push(v);
      else secondsIn(v, into);
    }
  }
  return into;
}

/** A value as a query string carries it. */
export function queryValue(value: unknown): string {
  return value instanceof Date ? value.toISOString() : String(value);
}

/** A value as a JSON body carries it: dates as ISO strings, the rest as the driver gave it. */
export const jsonValue = (value: unknown): unknown => (value instanceof Date ? value.toISOString() : value);

/** A deep copy of a body (bodies are reused by many attacks). */
export const copy = (body: Body): Body => structuredClone(body);
