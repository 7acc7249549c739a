// The best-SQL yardstick's routes: one per scenario of bench/scenarios.ts, each parsing its own
// request (path, query string, body, cursor) into the values of its statement (statements.ts),
// and turning the statement's one row into the answer the service gives: the same status, fields,
// total and next cursor (bench/best-sql/agreement.ts checks it against the service's).
import { createHash, createHmac, hkdfSync, timingSafeEqual } from 'node:crypto';
import { COUNT_THRESHOLD, createTimeLog, DEFAULT_ORDER, employeeById, listStatement, patchEmployee, type ListShape, type Order } from './statements.js';

export interface Caller {
  tenantId: string;
  userId: string;
}

export interface Request {
  method: string;
  url: URL;
  /** The id in the path of a by-id route. */
  id?: string;
  body: any;
}

export interface Statement {
  /** A named prepared statement; none: planned for each request's values. */
  name?: string;
  text: string;
  values: unknown[];
}

export interface Answer {
  status: number;
  headers: Record<string, string>;
  body: string;
}

export interface Route {
  key: string;
  method: string;
  /** The path, `{id}` for a record's id. */
  path: string;
  /** The query parameter names the request carries, sorted (the bench's lists differ by them). */
  parameters: string[];
  statement(request: Request, caller: Caller): Statement;
  answer(row: Record<string, any> | undefined, request: Request, caller: Caller): Answer;
}

/** Cursors as the service makes them: base64url JSON of the last item's order values, signed with a key derived from the secret, bound to the list. */
export class Cursors {
  private readonly key: Buffer;
  constructor(secret: string) {
    this.key = Buffer.from(hkdfSync('sha256', secret, 'best sql cursor', 'list cursor v1', 32));
  }
  private signature(body: string, list: string, tenantId: string): Buffer {
    return createHmac('sha256', this.key).update(`${body}\nemployee\n${tenantId}\n${list}`).digest();
  }
  seal(lastJson: string, list: string, tenantId: string): string {
    const body = Buffer.from(`{"v":1,"r":"employee","k":${lastJson}}`).toString('base64url');
    return `${body}.${this.signature(body, list, tenantId).toString('base64url')}`;
  }
  /** The order values a cursor carries, or undefined when it is not this list's. */
  open(cursor: string, list: string, tenantId: string): unknown[] | undefined {
    const [body, signature] = cursor.split('.');
    if (!body || !signature) return undefined;
    const given = Buffer.from(signature, 'base64url');
    const expected = this.signature(body, list, tenantId);
    if (given.length !== expected.length || !timingSafeEqual(given, expected)) return undefined;
    return JSON.parse(Buffer.from(body, 'base64url').toString()).k;
  }
}

const json = (status: number, body: string, headers: Record<string, string> = {}): Answer => ({ status, headers, body });
const notFound = () => json(404, '{"statusCode":404,"error":"Not Found","message":"no such record"}');
const badRequest = (message: string) => json(400, JSON.stringify({ statusCode: 400, error: 'Bad Request', message }));

/** A request's failure the route found: answered as it is (a 400, a 404), not as a server error. */
export class Refused extends Error {
  constructor(readonly answer: Answer) {
    super(answer.body);
  }
}

const takeOf = (url: URL) => {
  const take = Number(url.searchParams.get('take') ?? 10);
  if (!Number.isInteger(take) || take < 1 || take > 100) throw new Refused(badRequest('take must be an integer from 1 to 100'));
  return take;
};

const single = () => (row: Record<string, any> | undefined) =>
  row ? json(200, row.body, { etag: `"${row.version}"` }) : notFound();

/**
 * A list route: its shape, the values of its conditions from the request, and the list's identity
 * for its cursors (what the service signs as the filters).
 */
function listRoute(
  cursors: Cursors,
  key: string,
  method: string,
  path: string,
  parameters: string[],
  shape: ListShape,
  values: (request: Request) => unknown[],
  list: (request: Request) => string,
): Route {
  const name = `best_${key}`;
  // $1 is the tenant; the conditions' values follow ($n written twice is one value).
  const before = 1 + new Set(shape.where.flatMap((w) => w.match(/\$\d+/g) ?? [])).size;
  const texts = new Map<number, string>();
  const textFor = (take: number) => {
    let text = texts.get(take);
    if (!text) texts.set(take, (text = listStatement(shape, before, take)));
    return text;
  };
  return {
    key,
    method,
    path,
    parameters: [...parameters].sort(),
    statement(request, caller) {
      const url = request.url;
      const take = takeOf(url);
      const after: unknown[] = [];
      if (shape.after) {
        const opened = cursors.open(url.searchParams.get('cursor') ?? '', list(request), caller.tenantId);
        if (!opened || opened.length !== shape.order.length) throw new Refused(badRequest('cursor is not valid for this list'));
        after.push(...opened);
      }
      const offset = shape.offset ? [Number(url.searchParams.get('skip'))] : [];
      const all = [caller.tenantId, ...values(request), ...after, ...offset];
      return shape.planEach ? { text: textFor(take), values: all } : { name: `${name}_${take}`, text: textFor(take), values: all };
    },
    answer(row, request, caller) {
      const skip = shape.offset ? Number(request.url.searchParams.get('skip')) : 0;
      const more: boolean = row!.more;
      const headers: Record<string, string> = {};
      let cursor = '';
      const get = request.method === 'GET';
      if (more && row!.last) {
        const next = cursors.seal(row!.last, list(request), caller.tenantId);
        cursor = `,"nextCursor":"${next}"`;
        if (get) {
          const link = new URL(request.url);
          link.searchParams.delete('skip');
          link.searchParams.set('cursor', next);
          headers.link = `<${link.pathname}${link.search}>; rel="next"`;
        }
      }
      const shown = Number(row!.shown);
      let total: number;
      let exact: boolean;
      if (row!.total === null) {
        total = (shape.after ? 0 : skip) + shown + (more ? 1 : 0);
        exact = !more && !shape.after;
      } else {
        total = Number(row!.total);
        exact = Number(row!.counted) <= COUNT_THRESHOLD;
      }
      const body = `{"items":${row!.items},"total":${total}${cursor}}`;
      headers['x-total-exact'] = String(exact);
      // A GET page is tagged as the service tags it: weak, a digest of the answer (and of whether its total is exact).
      if (get) headers.etag = `W/"${createHash('sha1').update(exact ? body : `${body}~`).digest('base64url').slice(0, 16)}"`;
      return json(200, body, headers);
    },
  };
}

export function bestRoutes(secret: string, salt: string): Route[] {
  const cursors = new Cursors(secret);
  const q = (request: Request, name: string) => request.url.searchParams.get(name) ?? '';
  const byName: Order = [['lastName', 'asc'], ['id', 'asc']];
  return [
    {
      key: 'get-by-id',
      method: 'GET',
      path: '/api/employee/{id}',
      parameters: [],
      statement: (request, caller) => ({ name: 'best_get_by_id', text: employeeById(salt), values: [request.id, caller.tenantId] }),
      answer: single(),
    },
    listRoute(cursors, 'list-org-created', 'GET', '/api/employee', ['where[organizationId]', 'order[createdAt]', 'take'], { where: ['e."organizationId" = $2'], order: DEFAULT_ORDER }, (r) => [q(r, 'where[organizationId]')], (r) => `org:${q(r, 'where[organizationId]')}`),
    listRoute(cursors, 'list-relations', 'GET', '/api/employee', ['relations[]'], { where: [], order: DEFAULT_ORDER, relations: true }, () => [], () => 'all'),
    listRoute(
      cursors,
      'search',
      'POST',
      '/api/employee/search',
      [],
      { where: ['e."isActive" = $2'], order: byName },
      (r) => {
        if (typeof r.body?.where?.isActive !== 'boolean') throw new Refused(badRequest('where.isActive must be a boolean'));
        return [r.body.where.isActive];
      },
      (r) => `active:${r.body.where.isActive}`,
    ),
    listRoute(
      cursors,
      'list-range-in',
      'GET',
      '/api/employee',
      ['where[billRateValue][between]', 'where[payPeriod][in]', 'take'],
      { where: ['e."billRateValue" between $2 and $3', 'e."payPeriod" = any($4)'], order: DEFAULT_ORDER, planEach: true },
      (r) => {
        const [low, high] = q(r, 'where[billRateValue][between]').split(',').map(Number);
        if (!Number.isFinite(low) || !Number.isFinite(high)) throw new Refused(badRequest('between takes two numbers'));
        return [low, high, q(r, 'where[payPeriod][in]').split(',')];
      },
      (r) => `range:${q(r, 'where[billRateValue][between]')}:${q(r, 'where[payPeriod][in]')}`,
    ),
    listRoute(cursors, 'list-ilike', 'GET', '/api/employee', ['where[lastName][ilike]', 'take'], { where: ['e."lastName" ilike $2'], order: DEFAULT_ORDER }, (r) => [q(r, 'where[lastName][ilike]')], (r) => `ilike:${q(r, 'where[lastName][ilike]')}`),
    listRoute(
      cursors,
      'search-names',
      'GET',
      '/api/employee',
      ['search', 'take'],
      { where: ['(e."firstName" ilike $2 or e."lastName" ilike $2)'], order: DEFAULT_ORDER },
      // The pattern of a substring search: the words' wildcards escaped.
      (r) => [`%${q(r, 'search').replace(/[\\%_]/g, '\\$&')}%`],
      (r) => `search:${q(r, 'search')}`,
    ),
    listRoute(cursors, 'list-select', 'GET', '/api/employee', ['select[]', 'take'], { where: [], order: DEFAULT_ORDER, columns: ['id', 'firstName', 'lastName'] }, () => [], () => 'select'),
    listRoute(cursors, 'deep-cursor', 'GET', '/api/employee', ['take', 'count', 'cursor'], { where: [], order: DEFAULT_ORDER, uncounted: true, after: true }, () => [], () => 'all'),
    listRoute(cursors, 'deep-skip', 'GET', '/api/employee', ['take', 'count', 'skip'], { where: [], order: DEFAULT_ORDER, uncounted: true, offset: true }, () => [], () => 'all'),
    {
      key: 'create-time-log',
      method: 'POST',
      path: '/api/time-log',
      parameters: [],
      statement(request, caller) {
        const b = request.body ?? {};
        for (const field of ['organizationId', 'employeeId', 'startedAt', 'stoppedAt', 'logType']) {
          if (typeof b[field] !== 'string') throw new Refused(badRequest(`${field} is required`));
        }
        return { name: 'best_create_time_log', text: createTimeLog(salt), values: [b.organizationId, b.employeeId, b.startedAt, b.stoppedAt, b.logType, b.description ?? null, caller.userId, caller.tenantId] };
      },
      answer: (row) => (row ? json(201, row.body, { etag: `"${row.version}"` }) : badRequest('organizationId or employeeId names no record of yours')),
    },
    {
      key: 'patch',
      method: 'PATCH',
      path: '/api/employee/{id}',
      parameters: [],
      statement(request, caller) {
        if (typeof request.body?.lastName !== 'string') throw new Refused(badRequest('lastName must be a string'));
        return { name: 'best_patch', text: patchEmployee(salt), values: [request.body.lastName, request.id, caller.tenantId] };
      },
      answer: single(),
    },
  ];
}
