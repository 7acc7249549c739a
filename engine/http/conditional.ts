// Conditional requests (RFC 9110 §8.8.3, §13): entity tags on answers, If-None-Match on reads
// (304 when the client's copy is current), If-Match on writes (the versions a write may change;
// the write's own statement checks them, engine/resource/sql/version.ts).
// A record's tag is strong: "<version>" for the record as stored, "<version>.<digest>" for an
// answer shaped by relations[], select[] or written children (the digest tells the shapes apart).
// A list's tag is weak, a digest of the page as answered.
import { hash } from 'node:crypto';
import type { Context } from 'koa';
import { badRequest, HttpError } from '../errors.js';

export const ETAG_HEADER = 'ETag';

/** The most tags one header may list: a client names the few versions it holds, not thousands. */
const MAX_TAGS = 64;

/** What a version looks like (sql/version.ts: a 64-bit hash in hex): anything else names no version. */
const VERSION_PATTERN = /^[0-9a-f]{1,16}$/;

interface EntityTag {
  weak: boolean;
  opaque: string;
}

/** One list element: an entity-tag (W/ optional, then a quoted run of visible characters but the quote) or nothing, and what ends it. */
const ELEMENT = /[ \t]*(?:(W\/)?"([\x21\x23-\x7e\x80-\xff]*)")?[ \t]*(,|$)/y;

/** '*' or the header's tags (empty list elements allowed, as the list syntax allows them); anything else is a 400 naming the header. */
function entityTags(name: string, value: string): '*' | EntityTag[] {
  if (value.trim() === '*') return '*';
  const malformed = () => badRequest(`${name} must be * or a list of entity tags ("…" or W/"…")`);
  const tags: EntityTag[] = [];
  ELEMENT.lastIndex = 0;
  for (;;) {
    const match = ELEMENT.exec(value);
    if (!match) throw malformed();
    if (match[2] !== undefined) tags.push({ weak: Boolean(match[1]), opaque: match[2] });
    if (tags.length > MAX_TAGS) throw badRequest(`${name} may list at most ${MAX_TAGS} entity tags`);
    if (match[3] === '') break;
  }
  if (!tags.length) throw malformed();
  return tags;
}

/** One-shot (crypto.hash): no Hash object per answer. */
const digest = (text: string) => hash('sha1', text, 'base64url').slice(0, 16);

/** A record's strong tag: its version, and a digest of the answer when the answer is shaped. */
export function recordTag(version: string, shapedAnswer?: string): string {
  return shapedAnswer === undefined ? `"${version}"` : `"${version}.${digest(shapedAnswer)}"`;
}

/** What If-None-Match holds: '*' or the opaque parts of its tags; undefined when it is absent. */
export type HeldTags = '*' | string[] | undefined;

/**
 * The tags the client holds, read before the request does any work: a malformed If-None-Match is
 * a 400 before anything is read or set on the answer.
 */
export function heldTags(ctx: Context): HeldTags {
  const header = ctx.get('If-None-Match');
  if (!header) return undefined;
  const tags = entityTags('If-None-Match', header);
  return tags === '*' ? '*' : tags.map((t) => t.opaque);
}

/**
 * Tags a read's answer; true when it is a 304 (If-None-Match named the tag, weak comparison: W/
 * set aside), and then nothing else is said of it. Otherwise the body is set, as JSON text when
 * the tag digests it, so it is serialized once.
 */
function answerTagged(ctx: Context, held: HeldTags, tag: string, body: unknown, text?: string): boolean {
  ctx.set(ETAG_HEADER, tag);
  const opaque = tag.slice(tag.indexOf('"') + 1, -1);
  if (held === '*' || held?.includes(opaque)) {
    ctx.status = 304;
    return true;
  }
  if (text === undefined) ctx.body = body;
  else {
    ctx.body = text;
    ctx.type = 'application/json';
  }
  return false;
}

/** A record read: its strong tag, or 304. `shaped`: relations[] or select[] made the answer differ from the record as stored. */
export function answerRecord(ctx: Context, held: HeldTags, record: unknown, version: string, shaped: boolean): boolean {
  if (!shaped) return answerTagged(ctx, held, recordTag(version), record);
  const text = JSON.stringify(record);
  return answerTagged(ctx, held, recordTag(version, text), record, text);
}

/** A page of a list: a weak tag over the answer and whether its total is exact (a header beside it), or 304 (true). */
export function answerPage(ctx: Context, held: HeldTags, page: unknown, exact: boolean): boolean {
  const text = JSON.stringify(page);
  return answerTagged(ctx, held, `W/"${digest(exact ? text : `${text}~`)}"`, page, text);
}

/** The tag of a written record's answer (a write is never answered 304). */
export function tagWritten(ctx: Context, version: string, shaped: boolean, body: unknown): void {
  ctx.set(ETAG_HEADER, shaped ? recordTag(version, JSON.stringify(body)) : recordTag(version));
}

export const preconditionFailed = () => new HttpError(412, 'The record has changed since the ETag you sent (If-Match): read it again and retry');

export const preconditionRequired = () => new HttpError(428, 'This resource takes changes only with If-Match: send the ETag of the record you are changing');

/**
 * The versions If-Match allows a write to change: undefined when the header is absent (or *: any
 * version of a record that exists), otherwise those of its strong tags (a weak tag never matches
 * a write's strong comparison; none left: the write fails with 412 if the record exists).
 * `required`: the resource takes no write without the header (428).
 */
export function ifMatchVersions(ctx: Context, required: boolean): string[] | undefined {
  const header = ctx.request.headers['if-match'];
  if (header === undefined) {
    if (required) throw preconditionRequired();
    return undefined;
  }
  // Sent empty (a template variable left blank, say) it names no tag: a 400, never a blind write.
  const tags = entityTags('If-Match', header);
  if (tags === '*') return undefined;
  return tags.filter((t) => !t.weak).map((t) => t.opaque.split('.')[0]).filter((version) => VERSION_PATTERN.test(version));
}
