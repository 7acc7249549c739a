// The bodies of the bulk writes (resource/bulk.ts), checked before anything is counted or read:
// POST an array of create bodies, PATCH an array of {id, …changes}, DELETE {ids: [...]}; at
// least one item, at most the configured number, each id a UUID named once. A failure that
// concerns items names them: `errors: [{index, message}]` beside the envelope's sentences.
import { badRequest, HttpError } from '../errors.js';
import { isPlainObject } from '../objects.js';
import { UUID_PATTERN } from './fields.js';

export interface ItemError {
  index: number;
  message: string;
}

/** The answer lists at most this many item errors (and its message at most MAX_MESSAGES sentences). */
export const MAX_ITEM_ERRORS = 1000;

/**
 * A failure of items as one answer: a 400 lists every broken rule of every item (`[3] name should
 * not be empty`); another status (403, 404, 409) keeps its one sentence and names the items.
 */
export function itemsFailed(status: number, errors: ItemError[]): HttpError {
  const listed = errors.slice(0, MAX_ITEM_ERRORS);
  if (status === 400) {
    const bad = badRequest(errors.map((e) => `[${e.index}] ${e.message}`));
    return new HttpError(400, bad.messages, {}, { errors: listed });
  }
  return new HttpError(status, errors[0].message, {}, { errors: listed });
}

/** `where` (the body, or its ids) as a list of items: an array of 1 to `max` of them (`what` words them). */
function itemsOf(value: unknown, max: number, where: string, what: string): unknown[] {
  if (!Array.isArray(value)) throw badRequest(`${where} must be an array of ${what}`);
  if (!value.length) throw badRequest(`${where} must hold at least one item`);
  if (value.length > max) throw badRequest(`${where} must hold at most ${max} items (it holds ${value.length}): split them over several requests`);
  return value;
}

/** Each id a UUID and named once; their lower-case spelling, in order. */
function checkIds(ids: unknown[], label: string): string[] {
  const errors: ItemError[] = [];
  const seen = new Map<string, number>();
  const checked = ids.map((id, index) => {
    if (typeof id !== 'string' || !UUID_PATTERN.test(id)) {
      errors.push({ index, message: `${label} must be a UUID` });
      return '';
    }
    const lower = id.toLowerCase();
    const first = seen.get(lower);
    if (first !== undefined) errors.push({ index, message: `${label} ${lower} is also item ${first}: name each record once` });
    else seen.set(lower, index);
    return lower;
  });
  if (errors.length) throw itemsFailed(400, errors);
  return checked;
}

/** POST: the create bodies, each checked later as a create's body would be. */
export function createBodies(body: unknown, max: number): unknown[] {
  return itemsOf(body, max, 'body', 'records to create');
}

/** PATCH: the ids and what changes for each. */
export function patchBodies(body: unknown, max: number): Array<{ id: string; changes: Record<string, unknown> }> {
  const items = itemsOf(body, max, 'body', 'changes ({id, …fields})');
  const notObjects = items.flatMap((item, index) => (isPlainObject(item) ? [] : [{ index, message: 'must be an object with the id of the record to change' }]));
  if (notObjects.length) throw itemsFailed(400, notObjects);
  const objects = items as Array<Record<string, unknown>>;
  const ids = checkIds(objects.map((item) => item.id), 'id');
  return objects.map(({ id: _id, ...changes }, i) => ({ id: ids[i], changes }));
}

/** DELETE: the ids. */
export function deleteIds(body: unknown, max: number): string[] {
  if (!isPlainObject(body)) throw badRequest('body must be an object: {ids: [...]}');
  const unknown = Object.keys(body).filter((key) => key !== 'ids');
  if (unknown.length) throw badRequest(unknown.map((key) => `property ${key} should not exist`));
  return checkIds(itemsOf(body.ids, max, 'ids', 'record ids'), 'id');
}
