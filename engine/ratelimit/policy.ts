// The rate-limit policy table: config/limits.yaml (tiers, method and endpoint limits) plus the
// limits resource definitions declare for their own endpoints, checked when loaded so that a typo
// stops start-up instead of silently leaving a route unlimited. Which limits a request meets is
// decided here; counting them is the middleware's.
import { readFileSync } from 'node:fs';
import { Ajv } from 'ajv';
import { DefinitionError, parseLocatedYaml, schemaProblems } from '../resource/load.js';
import type { Registry } from '../resource/compiled.js';

export interface LimitPolicy {
  /** Unique; names the policy in RateLimit-Policy and keys its counts in the store. */
  name: string;
  kind: 'tier' | 'endpoint';
  /** caller: the user of a valid access token, else the client address; address: the client address always. */
  per: 'caller' | 'address';
  requests: number;
  windowSeconds: number;
  reason?: string;
}

export interface TierPolicy extends LimitPolicy {
  kind: 'tier';
  /** Roles this tier is for; none for the anonymous and authenticated tiers. */
  roles: string[];
}

export interface EndpointPolicy extends LimitPolicy {
  kind: 'endpoint';
  /** The method as counted (after sameAs). */
  method: string;
  /** Exact paths, or prefixes ending in /* (the path itself and everything below it). */
  paths: string[];
  /** Where it was declared: limits.yaml or a resource definition's file. */
  source: string;
}

export interface LimitTable {
  tiers: TierPolicy[];
  endpoints: EndpointPolicy[];
  /** Method → the method it is counted as (PATCH → PUT). */
  sameAs: Record<string, string>;
  exempt: Array<{ method: string; paths: string[] }>;
}

export const ANONYMOUS_TIER = 'anonymous';
export const AUTHENTICATED_TIER = 'authenticated';

interface LimitsFile {
  tiers: Array<{ name: string; roles?: string[]; requests: number; window: number; reason?: string }>;
  endpoints: Array<{ method: string; path?: string; paths?: string[]; per?: 'caller' | 'address'; requests: number; window: number; reason?: string }>;
  sameAs?: Record<string, string>;
  exempt?: Array<{ method: string; path?: string; paths?: string[] }>;
}

const schema = JSON.parse(readFileSync(new URL('./limits.schema.json', import.meta.url), 'utf8'));
const validateLimits = new Ajv({ allErrors: true, strict: true, strictRequired: false }).compile(schema);

const HEADING = 'Invalid rate limits';

/** Reads limits.yaml and merges in the resources' own limits; every problem stops start-up, located. */
export function loadLimitTable(file: string, registry: Registry, roles: Iterable<string>): LimitTable {
  let parsed: ReturnType<typeof parseLocatedYaml>;
  try {
    parsed = parseLocatedYaml(readFileSync(file, 'utf8'), file);
  } catch (err) {
    throw err instanceof DefinitionError ? new DefinitionError(err.problems, HEADING) : err;
  }
  const { value, locate } = parsed;
  if (!validateLimits(value)) {
    throw new DefinitionError(schemaProblems(validateLimits.errors ?? [], value, locate, 'must be a YAML mapping with tiers and endpoints'), HEADING);
  }
  const doc = value as LimitsFile;
  const problems: string[] = [];
  const sameAs = doc.sameAs ?? {};
  for (const [method, target] of Object.entries(sameAs)) {
    if (sameAs[target]) problems.push(`${locate(['sameAs', method])}: ${target} is itself counted as ${sameAs[target]}; name the last one`);
  }
  const counted = (method: string) => sameAs[method] ?? method;

  const knownRoles = new Set(roles);
  const tiers: TierPolicy[] = doc.tiers.map((t, i) => {
    for (const [j, role] of (t.roles ?? []).entries()) {
      if (!knownRoles.has(role)) problems.push(`${locate(['tiers', i, 'roles', j])}: "${role}" is not a role of roles.yaml`);
    }
    return { name: t.name, kind: 'tier', per: 'caller', roles: t.roles ?? [], requests: t.requests, windowSeconds: t.window, reason: t.reason };
  });
  for (const required of [ANONYMOUS_TIER, AUTHENTICATED_TIER]) {
    const tier = tiers.find((t) => t.name === required);
    if (!tier) problems.push(`${locate(['tiers'])}: a tier named "${required}" is required`);
    else if (tier.roles.length) problems.push(`${locate(['tiers', tiers.indexOf(tier), 'roles'])}: the ${required} tier applies by token, not by role`);
  }
  tiers.forEach((t, i) => {
    if (![ANONYMOUS_TIER, AUTHENTICATED_TIER].includes(t.name) && !t.roles.length) problems.push(`${locate(['tiers', i])}: tier "${t.name}" must list its roles`);
  });

  const endpoints: EndpointPolicy[] = doc.endpoints.map((e, i) => {
    if (sameAs[e.method]) problems.push(`${locate(['endpoints', i, 'method'])}: ${e.method} is counted as ${sameAs[e.method]} (sameAs); limit ${sameAs[e.method]}`);
    const paths = e.paths ?? [e.path!];
    return { name: `${e.method} ${paths[0]}`, kind: 'endpoint', per: e.per ?? 'caller', method: counted(e.method), paths, requests: e.requests, windowSeconds: e.window, reason: e.reason, source: file };
  });

  // A resource's own limits cover its path and every alias under one count, and replace an entry
  // of limits.yaml for the same method and path.
  for (const resource of registry.values()) {
    for (const limit of resource.definition.limits ?? []) {
      const paths = resource.paths.map((p) => `/api/${p}${limit.path ?? ''}`);
      const policy: EndpointPolicy = {
        name: `${limit.method} ${paths[0]}`,
        kind: 'endpoint',
        per: limit.per ?? 'caller',
        method: limit.method,
        paths,
        requests: limit.requests,
        windowSeconds: limit.window,
        reason: limit.reason,
        source: resource.file,
      };
      const replaced = endpoints.findIndex((e) => e.method === policy.method && e.paths.some((p) => paths.includes(p)));
      if (replaced < 0) endpoints.push(policy);
      else if (endpoints[replaced].source === file) endpoints[replaced] = policy;
      else problems.push(`${resource.file}: the limit for ${policy.name} is also declared in ${endpoints[replaced].source}`);
    }
  }
  const names = new Set<string>();
  for (const policy of [...tiers, ...endpoints]) {
    if (names.has(policy.name)) problems.push(`${file}: the limit "${policy.name}" is declared twice`);
    names.add(policy.name);
  }
  if (problems.length) throw new DefinitionError(problems, HEADING);
  const exempt = (doc.exempt ?? []).map((e) => ({ method: counted(e.method), paths: e.paths ?? [e.path!] }));
  return { tiers, endpoints, sameAs, exempt };
}

/** Settings that tune a table for development and tests without editing it. */
export interface LimitScaling {
  /** Multiplies every `requests` (rounded, at least 1). */
  scale: number;
  /** Multiplies every window (short windows let tests see a reset). */
  windowScale: number;
}

export function scaleLimitTable(table: LimitTable, { scale, windowScale }: LimitScaling): LimitTable {
  if (scale === 1 && windowScale === 1) return table;
  const tune = <P extends LimitPolicy>(p: P): P => ({
    ...p,
    requests: Math.max(1, Math.round(p.requests * scale)),
    windowSeconds: p.windowSeconds * windowScale,
  });
  return { ...table, tiers: table.tiers.map(tune), endpoints: table.endpoints.map(tune) };
}

/** The router treats /a/b/ as /a/b; so do the limits, or a trailing slash would dodge them. */
export const normalizedPath = (path: string) => (path.length > 1 && path.endsWith('/') ? path.slice(0, -1) : path);

/**
 * Policy paths indexed so that a request path finds those it falls under with one Map lookup per
 * segment, however many paths the table has: exact paths by themselves, /x/* by x.
 */
class PathIndex<T> {
  private readonly exact = new Map<string, T[]>();
  private readonly below = new Map<string, T[]>();
  /** Order of addition: a request meets its policies in table order. */
  private readonly order = new Map<T, number>();

  add(pattern: string, item: T): void {
    if (!this.order.has(item)) this.order.set(item, this.order.size);
    const [map, key] = pattern.endsWith('/*') ? [this.below, pattern.slice(0, -2)] : [this.exact, pattern];
    map.set(key, [...(map.get(key) ?? []), item]);
  }

  /** @param path normalized (no trailing slash) */
  find(path: string): T[] {
    const found: T[] = [...(this.exact.get(path) ?? [])];
    // The path itself and each of its ancestors, down to the root ("" stands for /*).
    for (let end = path.length; end >= 0; end = path.lastIndexOf('/', end - 1)) {
      const items = this.below.get(path.slice(0, end));
      if (items) found.push(...items);
      if (end === 0) break;
    }
    if (found.length < 2) return found;
    return [...new Set(found)].sort((a, b) => this.order.get(a)! - this.order.get(b)!);
  }
}

/** Answers, per request, which policies count it: compiled once from a table. */
export class PolicyMatcher {
  private readonly byMethod = new Map<string, PathIndex<EndpointPolicy>>();
  private readonly exemptByMethod = new Map<string, PathIndex<true>>();
  private readonly tierByRole = new Map<string, TierPolicy>();
  private readonly anonymous: TierPolicy;
  private readonly authenticated: TierPolicy;

  constructor(readonly table: LimitTable) {
    const indexOf = <T>(map: Map<string, PathIndex<T>>, method: string) => {
      let index = map.get(method);
      if (!index) map.set(method, (index = new PathIndex<T>()));
      return index;
    };
    for (const policy of table.endpoints) for (const path of policy.paths) indexOf(this.byMethod, policy.method).add(path, policy);
    for (const entry of table.exempt) for (const path of entry.paths) indexOf(this.exemptByMethod, entry.method).add(path, true);
    for (const tier of table.tiers) for (const role of tier.roles) if (!this.tierByRole.has(role)) this.tierByRole.set(role, tier);
    this.anonymous = table.tiers.find((t) => t.name === ANONYMOUS_TIER)!;
    this.authenticated = table.tiers.find((t) => t.name === AUTHENTICATED_TIER)!;
  }

  countedMethod(method: string): string {
    return this.table.sameAs[method] ?? method;
  }

  /** The tier of a caller: anonymous without a valid token, else by role. */
  tierOf(role: string | undefined): TierPolicy {
    if (role === undefined) return this.anonymous;
    return this.tierByRole.get(role) ?? this.authenticated;
  }

  isExempt(method: string, path: string): boolean {
    const index = this.exemptByMethod.get(this.countedMethod(method));
    return index !== undefined && index.find(normalizedPath(path)).length > 0;
  }

  /** The method and endpoint policies a request meets (its tier comes on top). */
  endpointPolicies(method: string, path: string): EndpointPolicy[] {
    const index = this.byMethod.get(this.countedMethod(method));
    return index ? index.find(normalizedPath(path)) : [];
  }
}
