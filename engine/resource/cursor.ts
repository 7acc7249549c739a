// Cursor pages: a list's nextCursor holds the order values of its last item (and its id), signed
// together with what the list was (resource, tenant, order, filters), so that ?cursor=… continues
// after that item by keyset, whatever number of rows comes before it. The signature (HMAC-SHA256
// with a key derived from JWT_SECRET, and the previous secret still accepted after a rotation) makes
// a cursor tamper-evident and binds it to its list: one made for another resource, order or
// filter, or altered, is a 400. Its content is readable (base64url JSON): it only holds values of
// a record the caller has been shown.
import { createHmac, hkdfSync, timingSafeEqual } from 'node:crypto';
import { badRequest } from '../errors.js';
import type { CompiledResource } from './compiled.js';
import type { Direction, FilterGroup, ListQuery } from './list-query.js';

/** The longest cursor read (a few order values and an id, base64url, and the signature). */
export const MAX_CURSOR_LENGTH = 2048;
const VERSION = 1;

interface Payload {
  v: number;
  r: string;
  /** The order as field:direction, the id last. */
  o: string;
  /** The last item's values of those fields, in that order. */
  k: unknown[];
}

/** The order key of a ranked fulltext search: how well the record matches (sql/search.ts: rankSql), best first. */
export const RANK_KEY = '@rank';

/**
 * The order a page is read in: the one asked for (createdAt DESC by default, the rank of a fulltext
 * search), the id last to break ties.
 */
export function effectiveOrder(query: Pick<ListQuery, 'order' | 'rank'>): Array<[string, Direction]> {
  const order = query.order.length ? [...query.order] : ([[query.rank ? RANK_KEY : 'createdAt', 'DESC']] as Array<[string, Direction]>);
  if (!order.some(([field]) => field === 'id')) order.push(['id', order[order.length - 1][1]]);
  return order;
}

const orderText = (order: Array<[string, Direction]>) => order.map(([field, direction]) => `${field}:${direction}`).join(',');

const groupText = (group: FilterGroup) => [group.where, group.nested.map((n) => [n.relation.name, n.conditions])];

/** A request's filter text, once: a cursor page both opens a cursor and seals the next one. */
const filterTexts = new WeakMap<ListQuery, string>();

/** Everything but paging and order that decides which records a list holds, as one text. */
function filterText(query: ListQuery): string {
  let text = filterTexts.get(query);
  if (text === undefined) {
    text = JSON.stringify([groupText(query), query.or.map(groupText), query.search ?? null, query.startDate ?? null, query.endDate ?? null, query.tags ?? null, query.withDeleted ?? false]);
    filterTexts.set(query, text);
  }
  return text;
}

const invalid = () => badRequest('cursor is not valid for this list: it was made for another resource, order or filter, or altered; start again without it');

export class ListCursors {
  private readonly keys: Buffer[];

  /** `secrets`: the current signing secret first, then any still accepted. */
  constructor(secrets: Array<string | undefined>) {
    this.keys = secrets.filter((s): s is string => !!s).map((secret) => Buffer.from(hkdfSync('sha256', secret, 'list cursor', 'list cursor v1', 32)));
  }

  private sign(key: Buffer, body: string, resource: CompiledResource, tenantId: string, query: ListQuery): Buffer {
    return createHmac('sha256', key).update(`${body}\n${resource.name}\n${tenantId.toLowerCase()}\n${filterText(query)}`).digest();
  }

  /** The cursor of the page after `last` (a row with the order's values: see keyValues). */
  seal(resource: CompiledResource, tenantId: string, query: ListQuery, values: unknown[]): string {
    const payload: Payload = { v: VERSION, r: resource.name, o: orderText(effectiveOrder(query)), k: values };
    const body = Buffer.from(JSON.stringify(payload)).toString('base64url');
    return `${body}.${this.sign(this.keys[0], body, resource, tenantId, query).toString('base64url')}`;
  }

  /** The last item's order values a cursor carries, once it is shown to belong to this list; a 400 otherwise. */
  open(resource: CompiledResource, tenantId: string, query: ListQuery, cursor: string): unknown[] {
    const [body, signature, extra] = cursor.split('.');
    if (!body || !signature || extra !== undefined) throw invalid();
    const given = Buffer.from(signature, 'base64url');
    const signed = this.keys.some((key) => {
      const expected = this.sign(key, body, resource, tenantId, query);
      return given.length === expected.length && timingSafeEqual(given, expected);
    });
    if (!signed) throw invalid();
    let payload: Payload;
    try {
      payload = JSON.parse(Buffer.from(body, 'base64url').toString('utf8')) as Payload;
    } catch {
      throw invalid();
    }
    const order = effectiveOrder(query);
    if (payload.v !== VERSION || payload.r !== resource.name || !Array.isArray(payload.k) || payload.k.length !== order.length) throw invalid();
    if (payload.o !== orderText(order)) {
      throw badRequest(`cursor was made for the order ${payload.o.replaceAll(':', ' ').replaceAll(',', ', ')}: send the same order with it, or start again without it`);
    }
    return payload.k;
  }
}
