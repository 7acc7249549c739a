// Text is valid UTF-8 or refused, never stored damaged. A decoder that meets bytes that are not
// UTF-8 puts U+FFFD in their place, and JSON.parse takes a lone surrogate escape ("\ud800") that no
// UTF-8 text can hold (the database driver would write U+FFFD for it): either way a 201 would
// store something other than what was sent. So the body, its declared charset, the URL and the
// text fields of a form are checked here before anything reads them as text.
import { isUtf8 } from 'node:buffer';
import type { Context, Next } from 'koa';
import { badRequest, HttpError } from '../errors.js';

/** Whether `text` holds no lone surrogate (String.prototype.isWellFormed, in Node since 20). */
export const isWellFormed = (text: string): boolean => (text as unknown as { isWellFormed(): boolean }).isWellFormed();

/** The names of UTF-8 a Content-Type may give (RFC 2978 lists `utf8` as an alias), in any case. */
const UTF8_NAMES = /^utf-?8$/i;

/** A 415 for a Content-Type charset other than UTF-8; none means UTF-8. */
export function otherCharset(ctx: Context): HttpError | undefined {
  const charset = ctx.request.charset;
  if (!charset || UTF8_NAMES.test(charset)) return undefined;
  return new HttpError(415, `Unsupported charset ${charset}: send UTF-8 text`);
}

/** `bytes` as text; bytes that are not UTF-8 are a 400 naming `what`. */
export function utf8Text(bytes: Buffer, what: string): string {
  if (!isUtf8(bytes)) throw badRequest(`${what} must be UTF-8 text`);
  return bytes.toString('utf8');
}

/**
 * Whether text that a library decoded came through whole: no U+FFFD, which decoders put in place
 * of bytes that are not UTF-8, and no lone surrogate. (A form field that means U+FFFD itself is
 * refused too: the price of not seeing the bytes.)
 */
export const decodedWhole = (text: string): boolean => !text.includes('\uFFFD') && isWellFormed(text);

/** A percent-escaped byte outside ASCII: the only way a URL can spell something that is not UTF-8. */
const ESCAPED_HIGH_BYTE = /%[89a-f][0-9a-f]/i;

const HEX = /^[0-9a-f]{2}$/i;

/** The bytes a URL stands for: each %XX its byte, every other character (ASCII) itself. */
function percentDecoded(url: string): Buffer {
  const bytes = Buffer.allocUnsafe(url.length);
  let n = 0;
  for (let i = 0; i < url.length; i++) {
    const hex = url.slice(i + 1, i + 3);
    if (url[i] === '%' && HEX.test(hex)) {
      bytes[n++] = parseInt(hex, 16);
      i += 2;
    } else {
      bytes[n++] = url.charCodeAt(i);
    }
  }
  return bytes.subarray(0, n);
}

/**
 * Whether the URL's escapes, decoded, are UTF-8 (every URL without a non-ASCII escape is: one
 * indexOf, and a regular expression test when there is a %). Node's parser refuses raw bytes
 * outside ASCII in a URL.
 */
export function isUtf8Url(url: string): boolean {
  return url.indexOf('%') < 0 || !ESCAPED_HIGH_BYTE.test(url) || isUtf8(percentDecoded(url));
}

/**
 * Refuses, on every route, a path or query string whose percent-escapes do not decode to UTF-8
 * (`?search=%FF`): the query parsers would read them as U+FFFD, the router keep them undecoded.
 */
export function utf8Url() {
  return function utf8Url(ctx: Context, next: Next) {
    if (!isUtf8Url(ctx.url)) throw badRequest('the URL must be UTF-8 once its percent-escapes are decoded');
    return next();
  };
}
