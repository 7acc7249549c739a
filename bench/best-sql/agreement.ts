// The best-SQL yardstick must answer the question the service answers: before measuring, each
// scenario is asked of both once and their answers compared: status, fields, values (timestamps
// to the millisecond: PostgreSQL's JSON has microseconds, the service's milliseconds), the items
// and their order, total, the X-Total-Exact header, and whether a next cursor, a Link and an ETag
// are given (cursors and tags differ: each server makes its own). What a write makes anew (its
// id, its timestamps) is left out of a write's comparison.
import { call } from '../lib/http.js';
import { pathFor, type Scenario } from '../scenarios.js';

const TIMESTAMP = /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d/;

/** Values as compared: timestamps to the millisecond, arrays of records by id (a relation's order is not the answer's). */
function normal(value: unknown, skip: Set<string>): unknown {
  if (typeof value === 'string' && TIMESTAMP.test(value)) return new Date(value).getTime();
  if (Array.isArray(value)) {
    const items = value.map((v) => normal(v, skip));
    return items.every((v) => v && typeof v === 'object' && 'id' in (v as object)) ? items.sort((a: any, b: any) => String(a.id).localeCompare(String(b.id))) : items;
  }
  if (value && typeof value === 'object') {
    return Object.fromEntries(Object.entries(value).filter(([k]) => !skip.has(k)).sort(([a], [b]) => a.localeCompare(b)).map(([k, v]) => [k, normal(v, skip)]));
  }
  return value;
}

/** The first difference between two normalised answers, as a path and the two values. */
function difference(a: unknown, b: unknown, at = ''): string | undefined {
  if (a && b && typeof a === 'object' && typeof b === 'object') {
    const keys = [...new Set([...Object.keys(a), ...Object.keys(b)])];
    for (const key of keys) {
      if (!(key in (a as object))) return `${at}.${key}: only the best-SQL server answers it`;
      if (!(key in (b as object))) return `${at}.${key}: only the service answers it`;
      const found = difference((a as any)[key], (b as any)[key], `${at}.${key}`);
      if (found) return found;
    }
    return undefined;
  }
  return a === b ? undefined : `${at || 'answer'}: service ${JSON.stringify(a)}, best SQL ${JSON.stringify(b)}`;
}

/**
 * Undefined when the best-SQL server answers `scenario` as the service does, else what differs.
 * `best` is the scenario as the best-SQL server is asked it (its own cursor for a cursor page).
 */
export async function disagreement(serviceUrl: string, bestUrl: string, scenario: Scenario, best: Scenario, token: string, id: string): Promise<string | undefined> {
  const [onService, onBest] = await Promise.all([
    call(serviceUrl, scenario.method, pathFor(scenario, id), scenario.body, token),
    call(bestUrl, best.method, pathFor(best, id), best.body, token),
  ]);
  if (onService.status !== onBest.status) return `status: service ${onService.status}, best SQL ${onBest.status} (${onBest.text.slice(0, 300)})`;
  for (const header of ['x-total-exact', 'etag', 'link']) {
    const [a, b] = [onService.headers[header], onBest.headers[header]];
    if ((a === undefined) !== (b === undefined) || (header === 'x-total-exact' && a !== b)) return `header ${header}: service ${a ?? 'none'}, best SQL ${b ?? 'none'}`;
  }
  const made = scenario.kind === 'write' ? new Set(scenario.method === 'POST' ? ['id', 'createdAt', 'updatedAt'] : ['updatedAt']) : new Set<string>();
  const service = onService.json();
  const bestAnswer = onBest.json();
  // Cursors differ by design (each server signs its own); that one is given is compared.
  for (const answer of [service, bestAnswer]) if (answer && typeof answer === 'object' && 'nextCursor' in answer) answer.nextCursor = true;
  if (Array.isArray(service?.items) && Array.isArray(bestAnswer?.items)) {
    const order = (answer: any) => answer.items.map((item: any) => item.id).join();
    if (order(service) !== order(bestAnswer)) return 'items: not the same records in the same order';
  }
  return difference(normal(service, made), normal(bestAnswer, made));
}
