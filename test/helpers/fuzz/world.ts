// What the fuzzer aims at: a tenant with one record of every resource (from sample-records.ts,
// so a new definition is covered with no code), callers of three roles, a second tenant whose
// ids must never come back, and the tokens a hostile client could send. The app listens on a
// loopback port: requests go out byte for byte as generated (odd paths, repeated headers).
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import jwt from 'jsonwebtoken';
import type { CompiledResource, Registry } from '../../../engine/resource/compiled.js';
import { modules } from '../../../resources/modules.js';
import { newTenant, PASSWORD, userWithRole, type Session } from '../accounts.js';
import type { TestApp } from '../app.js';
import { hasCrudRoutes, SampleRecords, type Body, type Tenant } from '../sample-records.js';
import { OpenApiChecker } from '../openapi-checker.js';
import { quiet } from './leaks.js';
import { operationsOf, type Operation } from './operations.js';

export interface World {
  t: TestApp;
  registry: Registry;
  samples: SampleRecords;
  operations: Operation[];
  /** Judges a request and its answer against the document. */
  checker: OpenApiChecker;
  /** http://127.0.0.1:port of the app. */
  origin: string;
  acme: Tenant;
  /** The second tenant: its ids are what a leak would show. */
  other: Tenant;
  /** Live access tokens of the first tenant by role, the SUPER_ADMIN's first. */
  tokens: Array<{ role: string; token: string }>;
  /** Authorization values that must all be refused: expired, alg none, forged, refresh tokens, junk. */
  badAuthorizations: string[];
  /** A refresh token of a session of its own (spending or reusing it ends nothing else). */
  refreshToken: string;
  /** An access token of a session of its own, for sign-out (ending it ends nothing else). */
  leavingToken: string;
  /**
   * Per resource, the id of a record nothing else refers to: what DELETE aims at, so that the
   * records the sample bodies point at outlive the run.
   */
  victims: Map<string, string[]>;
  /** Record ids of the first tenant by resource name, and all of them. */
  ids: Map<string, string[]>;
  allIds: string[];
  /** Ids of the second tenant's records (and the tenant's own id) by resource, and all of them. */
  foreignIds: Map<string, string[]>;
  foreign: Set<string>;
  /** A valid create body per resource with CRUD routes. */
  bodies: Map<string, Body>;
  /** Strings the records hold (names, titles): filters and getByName then find something. */
  texts: string[];
  emails: string[];
  passwords: string[];
  /** Keys that must never appear in an answer (hidden fields, password fields). */
  hiddenKeys: Set<string>;
  /** Keys that hold a reference: a second tenant's id there in a 2xx answer means it was accepted. */
  referenceKeys: Set<string>;
  /** The last error the app logged as a 5xx (its stack goes into the report). */
  serverErrors: unknown[];
  close(): Promise<void>;
}

const SECRET_KEYS = ['hash', 'password', 'confirmPassword', 'currentPassword', 'newPassword', 'tokenHash', 'codeHash'];

const base64url = (value: unknown) => Buffer.from(JSON.stringify(value)).toString('base64url');

/** Tokens built from a real one that the API must refuse, whatever else the request says. */
function refusedAuthorizations(t: TestApp, token: string, refreshToken: string): string[] {
  const claims = jwt.decode(token) as Record<string, unknown>;
  const now = Math.floor(Date.now() / 1000);
  const secret = t.config.jwt.secret;
  const expired = jwt.sign({ ...claims, iat: now - 7_200, exp: now - 3_600 }, secret, { algorithm: 'HS256' });
  const none = `${base64url({ alg: 'none', typ: 'JWT' })}.${base64url(claims)}.`;
  const hs512 = jwt.sign(claims, secret, { algorithm: 'HS512' });
  const otherKey = jwt.sign(claims, 'another-secret-0123456789abcdef0123456789', { algorithm: 'HS256' });
  const noSession = jwt.sign({ ...claims, sid: undefined }, secret, { algorithm: 'HS256' });
  const { iat: _iat, exp: _exp, ...lasting } = claims;
  const noExpiry = jwt.sign(lasting, secret, { algorithm: 'HS256' });
  const tampered = `${token.slice(0, -2)}${token.endsWith('AA') ? 'BB' : 'AA'}`;
  return [
    `Bearer ${expired}`,
    `Bearer ${none}`,
    `Bearer ${hs512}`,
    `Bearer ${otherKey}`,
    `Bearer ${noSession}`,
    `Bearer ${noExpiry}`,
    `Bearer ${tampered}`,
    `Bearer ${token.slice(0, 40)}`,
    `Bearer ${refreshToken}`,
    `Bearer ${token}, Bearer ${token}`,
    `Token ${token}`,
    'Bearer',
    'Bearer ',
    'Bearer a.b.c',
    'Bearer ....',
    'Bearer null',
    'Basic YWRtaW46YWRtaW4=',
    `Bearer ${'A'.repeat(3_000)}`,
  ];
}

async function signIn(t: TestApp, email: string): Promise<{ token: string; refreshToken: string }> {
  const res = await t.http.post('/api/auth/login').send({ email, password: PASSWORD });
  if (res.status !== 200) throw new Error(`login failed: ${res.status} ${JSON.stringify(res.body)}`);
  return { token: res.body.token, refreshToken: res.body.refresh_token };
}

/** Ids of every table of the registry, split by tenant. */
async function idsByTenant(t: TestApp, registry: Registry, tenantId: string): Promise<Map<string, string[]>> {
  const found = new Map<string, string[]>();
  for (const resource of registry.values()) {
    // In the order they were made: a replayed seed picks the same record of a new run.
    const rows = await t.db(resource.table).select('id').where({ tenantId }).orderBy([{ column: 'createdAt' }, { column: 'id' }]);
    found.set(resource.name, rows.map((row: { id: string }) => row.id));
  }
  return found;
}

function textsOf(record: Record<string, unknown>, into: Set<string>) {
  for (const value of Object.values(record)) {
    if (typeof value === 'string' && value.length <= 100 && !/^[0-9a-f-]{36}$/.test(value) && !/^\d{4}-\d\d-\d\dT/.test(value) && quiet(value)) into.add(value);
  }
}

export async function buildWorld(t: TestApp, serverErrors: unknown[] = []): Promise<World> {
  const registry = t.engine.registry;
  const names = modules.map((m) => m.name);
  const crud = (r: CompiledResource) => hasCrudRoutes(r, names);
  const samples = new SampleRecords(t, registry, crud);
  const acme = await newTenant(t, 'Acme');
  const other = await newTenant(t, 'Other');
  const employee = await userWithRole(t, acme, 'EMPLOYEE', true);
  const viewer = await userWithRole(t, acme, 'VIEWER');
  const spare = await signIn(t, acme.email);
  const leaving = await signIn(t, acme.email);

  // One record of every resource in each tenant, and a body for more (sorted: the same world each run).
  const bodies = new Map<string, Body>();
  const victims = new Map<string, string[]>();
  const texts = new Set<string>();
  for (const resource of [...registry.values()].filter(crud).sort((a, b) => a.name.localeCompare(b.name))) {
    const record = await samples.create(resource, acme);
    victims.set(resource.name, [record.id]);
    textsOf(record, texts);
    await samples.create(resource, other);
    bodies.set(resource.name, await samples.body(resource, acme));
  }

  const ids = await idsByTenant(t, registry, acme.tenantId);
  const foreignIds = await idsByTenant(t, registry, other.tenantId);
  const foreign = new Set([other.tenantId, ...[...foreignIds.values()].flat()]);
  const resources = [...registry.values()];
  const hiddenKeys = new Set([...SECRET_KEYS, ...resources.flatMap((r) => r.hiddenFields)]);
  const referenceKeys = new Set(['id', 'tenantId', 'organizationId', ...resources.flatMap((r) => [...r.references.map((ref) => ref.field), ...r.referencesBy.map((by) => by.field)])]);

  const server: Server = createServer(t.koa.callback());
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;

  const sessions: Array<[string, Session]> = [['SUPER_ADMIN', acme], ['EMPLOYEE', employee], ['VIEWER', viewer]];
  return {
    t,
    registry,
    samples,
    operations: operationsOf(t.openapi as Record<string, any>, registry),
    checker: new OpenApiChecker(t.openapi as Record<string, any>),
    origin: `http://127.0.0.1:${port}`,
    acme,
    other,
    tokens: sessions.map(([role, session]) => ({ role, token: session.token })),
    badAuthorizations: refusedAuthorizations(t, acme.token, spare.refreshToken),
    refreshToken: spare.refreshToken,
    leavingToken: leaving.token,
    victims,
    ids,
    allIds: [...ids.values()].flat(),
    foreignIds,
    foreign,
    bodies,
    texts: [...texts],
    emails: [acme.email, employee.email, viewer.email, 'nobody@example.com'],
    passwords: [PASSWORD, 'N3w!Passw0rd', 'short'],
    hiddenKeys,
    referenceKeys,
    serverErrors,
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}
