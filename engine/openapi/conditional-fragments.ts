// The conditional-request parts of the generated operations (engine/http/conditional.ts): the
// If-None-Match and If-Match parameters, the ETag header and the 304 answer.

/**
 * What engine/http/conditional.ts reads: `*`, or a list of entity tags (`"…"` or `W/"…"`, a quoted
 * run of visible characters but the quote), at least one, empty list elements allowed. Anything
 * else is a 400, so the document refuses it too. (The cap of 64 tags is in the description.) The
 * space after a tag belongs to the tag, so that no text can be split two ways (no backtracking blow-up).
 */
const ETAG = '(?:W/)?"[\\x21\\x23-\\x7e\\x80-\\xff]*"';
const TAGS = `[ \\t]*\\*[ \\t]*|(?:[ \\t]*,)*[ \\t]*${ETAG}[ \\t]*(?:,[ \\t]*(?:${ETAG}[ \\t]*)?)*`;
const EXAMPLE = '"5d41402abc4b2a76b9719d911017c592"';
/** If-Match: an empty one is a 400. */
const entityTagsSchema = { type: 'string', pattern: `^(?:${TAGS})$`, example: EXAMPLE };
/** If-None-Match: an empty one counts as none (a read answers as without it). */
const heldTagsSchema = { type: 'string', pattern: `^(?:${TAGS})?$`, example: EXAMPLE };

/** If-None-Match on a read: the tags the client holds; 304 when one is current. */
export function ifNoneMatchParameter(): object {
  return {
    name: 'If-None-Match',
    in: 'header',
    required: false,
    description: 'ETags of copies the client holds (or *), at most 64: when one is the current answer\'s, 304 with no body (weak comparison); an empty one counts as none',
    schema: heldTagsSchema,
  };
}

/** If-Match on an update or delete: the versions the write may change. */
export function ifMatchParameter(required: boolean): object {
  return {
    name: 'If-Match',
    in: 'header',
    required,
    description:
      'ETags of the record (or *), at most 64: the write happens only while the record is at one of them, checked by the write itself, else 412 and nothing changes. ' +
      (required ? 'This resource takes no change without it (428).' : 'Without it the write is unconditional.'),
    schema: entityTagsSchema,
  };
}

/** The ETag header of an answer: a record's strong tag, or a list page's weak one. */
export function etagHeader(weak = false): Record<string, object> {
  return {
    ETag: {
      description: weak
        ? 'Weak tag of this page as answered: send it in If-None-Match to get 304 while the page is unchanged'
        : "Strong tag of the record's current version (and of the answer's shape when relations[], select[] or written children shape it): send it in If-None-Match, or in If-Match to change only this version",
      schema: { type: 'string', pattern: weak ? '^W/"[^"]*"$' : '^"[^"]*"$' },
    },
  };
}

/** 304: the client's copy (If-None-Match) is current; no body. */
export function notModifiedResponse(weak = false): object {
  return { description: 'Not modified: the tag sent in If-None-Match is current; no body', headers: etagHeader(weak) };
}
