// One place that knows what each field type means: its JSON Schema (validation and OpenAPI),
// how a query-string value becomes a typed value, and how a written value is normalised.
import type { FieldDefinition, FieldType } from './types.js';

export const UUID_PATTERN = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

// The pieces of DATE_STRING_PATTERN. No flags ([Tt ], [Zz] rather than /i) and no lookaheads: an
// OpenAPI pattern carries no flags, and clients that generate values from it seldom read lookaheads.
const DAYS_TO_28 = '(?:0[1-9]|1\\d|2[0-8])';
const MONTH_DAYS = {
  january: '01-(?:0[1-9]|[12]\\d|3[01])',
  fromFebruary: `(?:02-${DAYS_TO_28}|(?:0[3578]|1[02])-(?:0[1-9]|[12]\\d|3[01])|(?:0[469]|11)-(?:0[1-9]|[12]\\d|30))`,
};
/** Every day of a common year; with one day fewer at either end of the range of years. */
const COMMON_YEAR = `(?:${MONTH_DAYS.january}|${MONTH_DAYS.fromFebruary})`;
const NOT_JANUARY_1 = `(?:01-(?:0[2-9]|[12]\\d|3[01])|${MONTH_DAYS.fromFebruary})`;
const NOT_DECEMBER_31 = `(?:${MONTH_DAYS.january}|02-${DAYS_TO_28}|(?:0[3578]|10)-(?:0[1-9]|[12]\\d|3[01])|(?:0[469]|11)-(?:0[1-9]|[12]\\d|30)|12-(?:0[1-9]|[12]\\d|30))`;
/** Years 1001 to 9998, and the leap years among them (by 4, but not by 100 unless by 400). */
const INNER_YEAR = '(?:100[1-9]|10[1-9]\\d|1[1-9]\\d\\d|[2-8]\\d{3}|9[0-8]\\d\\d|99[0-8]\\d|999[0-8])';
const LEAP_YEAR = '(?:[1-9]\\d(?:0[48]|[2468][048]|[13579][26])|(?:[2468][048]|[13579][26])00)';
const TIME = '[Tt ](?:[01]\\d|2[0-3]):[0-5]\\d(?::[0-5]\\d(?:\\.\\d{1,9})?)?';
const OFFSET = '(?:[01]\\d|2[0-3])(?::?[0-5]\\d)?';
const ZERO = '00(?::?00)?';

/**
 * The date strings the API accepts: a date, or a date and time with or without a zone (Z or an
 * offset of at most 23:59; none means UTC), on a real calendar day of the years 1000 to 9999.
 * At the two ends of that range a zone may not move the instant out of it: on 1000-01-01 no
 * offset ahead of UTC, on 9999-12-31 none behind it. The OpenAPI document's pattern for every
 * date field and parameter is this very text (engine/openapi/schema-conversion.ts), and the
 * server tests it first, so a client that follows the document is never refused a date.
 */
export const DATE_STRING_PATTERN =
  '^(?:' +
  `(?:${INNER_YEAR}-${COMMON_YEAR}|${LEAP_YEAR}-02-29|1000-${NOT_JANUARY_1}|9999-${NOT_DECEMBER_31})(?:${TIME}(?:[Zz]|[+-]${OFFSET})?)?` +
  `|1000-01-01(?:${TIME}(?:[Zz]|-${OFFSET}|\\+${ZERO})?)?` +
  `|9999-12-31(?:${TIME}(?:[Zz]|\\+${OFFSET}|-${ZERO})?)?` +
  ')$';
const DATE_PATTERN = new RegExp(DATE_STRING_PATTERN);
/** The parts of a date string DATE_PATTERN accepts: year, month, day, hour, minute, second, zone. */
const DATE_PARTS = /^(\d{4})-(\d{2})-(\d{2})(?:[Tt ](\d{2}):(\d{2})(?::(\d{2})(?:\.\d{1,9})?)?([Zz]|[+-]\d{2}(?::?\d{2})?)?)?$/;

// Years 1000 to 9999: the PostgreSQL drivers read years below 100 back as 19xx, and a
// workforce date before 1000 is a typo, not a record.
const EARLIEST_INSTANT = Date.parse('1000-01-01T00:00:00.000Z');
export const LATEST_INSTANT = Date.parse('9999-12-31T23:59:59.999Z');

/** A number filter's text: decimal only (Number() would also read '0x10', '0b11' and '1e3'). */
const DECIMAL = /^-?\d+(\.\d+)?$/;
/** An integer filter's text (the int4 range is checked after). */
const INTEGER_TEXT = /^-?\d{1,15}$/;

/**
 * The texts of a filter value the document declares, unanchored (a comma-separated list is made
 * of them): an integer of at most 15 digits (INTEGER_TEXT, leading zeros counted) within int4,
 * and a decimal of at most 308 integer digits after its leading zeros (more may be Infinity,
 * which is refused).
 */
const INT4_TEXT = (() => {
  // n significant digits, after at most 15 - n leading zeros.
  const short = Array.from({ length: 9 }, (_, i) => `0{0,${14 - i}}[1-9]\\d{${i}}`);
  const ten = '(?:1\\d{9}|20\\d{8}|21[0-3]\\d{7}|214[0-6]\\d{6}|2147[0-3]\\d{5}|21474[0-7]\\d{4}|214748[0-2]\\d{3}|2147483[0-5]\\d{2}|21474836[0-3]\\d|214748364[0-7])';
  return `(?:-?(?:0{1,15}|${short.join('|')}|0{0,5}${ten})|-0{0,5}2147483648)`;
})();
const DECIMAL_TEXT = '-?(?:0+|0*[1-9]\\d{0,307})(?:\\.\\d+)?';
const UUID_TEXT = '[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}';
const escapeRegExp = (text: string) => text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
/** A boolean filter's texts. */
const TRUE_TEXTS = ['true', '1'];
const FALSE_TEXTS = ['false', '0'];

/** integer fields are PostgreSQL integers (int4): a wider value would fail in the database. */
export const INT4_MIN = -2147483648;
export const INT4_MAX = 2147483647;

/**
 * A calendar date (2026-01-05) or a date-time, with a zone or without one (then UTC, as a
 * date-only value is midnight UTC); a real day and time, not 2026-02-31 or 24:00.
 */
export function isDateString(value: string): boolean {
  return readDate(value) !== undefined;
}

/** Dates are stored as timestamptz; a date-only value means midnight UTC that day. Only for a value isDateString accepts. */
export function toTimestamp(value: string): string {
  const instant = readDate(value);
  if (instant === undefined) throw new RangeError(`not a date the API accepts: ${JSON.stringify(value)}`);
  return instant;
}

export const isDateOnly = (value: string) => value.length === 10;

/**
 * The last strings read as dates, with what they read as: a body's date is checked (ajv's
 * format) and then converted (toColumnValue), a filter's likewise, and each read is a pattern
 * match and two parses. Emptied when full: it only has to span one request's fields.
 */
const READ_DATES = new Map<string, string | null>();
const READ_DATES_CAP = 64;

/** The longest date string the pattern accepts (2026-01-05T09:00:00.123456789+02:00). */
const LONGEST_DATE = 35;

/** The instant a date string names (an ISO string), or undefined for one the API does not accept. */
function readDate(value: string): string | undefined {
  // Nothing longer is a date: neither matched nor kept (a body may send megabytes in a date field).
  if (value.length > LONGEST_DATE) return undefined;
  const known = READ_DATES.get(value);
  if (known !== undefined) return known ?? undefined;
  const instant = parseDate(value);
  if (READ_DATES.size >= READ_DATES_CAP) READ_DATES.clear();
  READ_DATES.set(value, instant ?? null);
  return instant;
}

function parseDate(value: string): string | undefined {
  const m = DATE_PATTERN.test(value) ? DATE_PARTS.exec(value) : null;
  if (!m) return undefined;
  const [, y, mo, d, h, mi, s, zone] = m;
  const day = new Date(Date.UTC(+y, +mo - 1, +d));
  if (day.getUTCFullYear() !== +y || day.getUTCMonth() !== +mo - 1 || day.getUTCDate() !== +d) return undefined;
  if (h !== undefined && (+h > 23 || +mi > 59 || (s !== undefined && +s > 59))) return undefined;
  const instant = Date.parse(parseable(value, zone));
  // A zone offset can push 9999-12-31 into year 10000, which PostgreSQL refuses to store.
  if (!(instant >= EARLIEST_INSTANT && instant <= LATEST_INSTANT)) return undefined;
  return new Date(instant).toISOString();
}

/**
 * What Date.parse reads: midnight UTC for a date, T between date and time, ±hh:mm offsets (ISO
 * allows ±hh and ±hhmm), and Z for a date-time without a zone (Date.parse would take local time).
 */
function parseable(value: string, zone: string | undefined): string {
  if (isDateOnly(value)) return `${value}T00:00:00.000Z`;
  const withT = value.replace(' ', 'T');
  if (zone === undefined) return `${withT}Z`;
  return withT.replace(/([+-])(\d{2}):?(\d{2})?$/, (_, sign: string, hh: string, mm?: string) => `${sign}${hh}:${mm ?? '00'}`);
}

const isDateType = (t: FieldType) => t === 'date' || t === 'timestamp';

/** The JSON Schema of one field's value, for a request body. */
export function valueSchema(field: FieldDefinition, nullable: boolean): Record<string, unknown> {
  const schema: Record<string, unknown> = {};
  switch (field.type) {
    case 'string':
    case 'text':
      schema.type = 'string';
      if (field.minLength !== undefined) schema.minLength = field.minLength;
      if (field.maxLength !== undefined) schema.maxLength = field.maxLength;
      if (field.format) schema.format = field.format;
      if (field.enum) schema.enum = nullable ? [...field.enum, null] : field.enum;
      break;
    case 'uuid':
      schema.type = 'string';
      schema.format = 'uuid';
      break;
    case 'date':
    case 'timestamp':
      schema.type = 'string';
      schema.format = 'iso-date';
      break;
    case 'integer':
    case 'number':
      schema.type = field.type;
      for (const k of ['minimum', 'maximum', 'exclusiveMinimum', 'exclusiveMaximum'] as const) {
        if (field[k] !== undefined) schema[k] = field[k];
      }
      if (field.type === 'integer') {
        if (field.minimum === undefined && field.exclusiveMinimum === undefined) schema.minimum = INT4_MIN;
        if (field.maximum === undefined && field.exclusiveMaximum === undefined) schema.maximum = INT4_MAX;
      }
      break;
    case 'boolean':
      schema.type = 'boolean';
      break;
  }
  if (nullable) schema.type = [schema.type, 'null'];
  if (field.description) schema.description = field.description;
  return schema;
}

export type Coerced = { ok: true; value: string | number | boolean | null } | { ok: false; message: string };

const messages: Record<FieldType, string> = {
  string: 'must be a string',
  text: 'must be a string',
  uuid: 'must be a UUID',
  integer: 'must be an integer number',
  number: 'must be a number',
  boolean: 'must be a boolean value',
  date: 'must be a valid ISO 8601 date string',
  timestamp: 'must be a valid ISO 8601 date string',
};

export const typeMessage = (type: FieldType) => messages[type];

/**
 * A filter value (from a query string, so a string, or from a search body, so already typed)
 * coerced to the field's type. Built once per field at start-up. `matchesNull`: null (JSON null,
 * or the word null in a query string) is a value too, matching the records where the field is
 * empty (kept to uuid fields, where the word cannot be a value of its own).
 */
export function coercer(field: FieldDefinition, label: string, matchesNull = false): (raw: unknown) => Coerced {
  const typed = typedCoercer(field, label);
  if (!matchesNull || field.type !== 'uuid') return typed;
  return (raw) => (raw === null || raw === 'null' ? { ok: true, value: null } : typed(raw));
}

function typedCoercer(field: FieldDefinition, label: string): (raw: unknown) => Coerced {
  const fail = (message: string): Coerced => ({ ok: false, message: `${label} ${message}` });
  const typeFail = () => fail(messages[field.type]);
  const allowed = field.enum ? new Set(field.enum) : undefined;
  switch (field.type) {
    case 'string':
    case 'text':
      return (raw) => {
        if (typeof raw !== 'string') return typeFail();
        if (allowed && !allowed.has(raw)) return fail(`must be one of the following values: ${field.enum!.join(', ')}`);
        return { ok: true, value: raw };
      };
    case 'uuid':
      return (raw) => (typeof raw === 'string' && UUID_PATTERN.test(raw) ? { ok: true, value: raw.toLowerCase() } : typeFail());
    case 'integer':
      return (raw) => {
        const n = typeof raw === 'number' ? raw : typeof raw === 'string' && INTEGER_TEXT.test(raw) ? Number(raw) : NaN;
        if (!Number.isInteger(n)) return typeFail();
        if (n < INT4_MIN || n > INT4_MAX) return fail(`must not be less than ${INT4_MIN} or greater than ${INT4_MAX}`);
        return { ok: true, value: n };
      };
    case 'number':
      return (raw) => {
        const n = typeof raw === 'number' ? raw : typeof raw === 'string' && DECIMAL.test(raw) ? Number(raw) : NaN;
        return Number.isFinite(n) ? { ok: true, value: n } : typeFail();
      };
    case 'boolean':
      return (raw) => {
        if (raw === true || TRUE_TEXTS.includes(raw as string)) return { ok: true, value: true };
        if (raw === false || FALSE_TEXTS.includes(raw as string)) return { ok: true, value: false };
        return typeFail();
      };
    case 'date':
    case 'timestamp':
      return (raw) => (typeof raw === 'string' && isDateString(raw) ? { ok: true, value: toTimestamp(raw) } : typeFail());
  }
}

/**
 * The JSON Schema of exactly what coercer() takes for a field: a typed value (a search body) or
 * the text a query string carries. The OpenAPI document's where[field] schemas are these, so
 * the document accepts what the server does (a filter value has no length or range rules of
 * the field's own: a value no record can have matches nothing).
 */
export function filterSchema(field: FieldDefinition): Record<string, unknown> {
  const text = (pattern: string) => ({ type: 'string', pattern: `^${pattern}$`, description: 'as the query string carries it' });
  switch (field.type) {
    case 'string':
    case 'text':
      return field.enum ? { type: 'string', enum: [...field.enum] } : { type: 'string' };
    case 'uuid':
      return { type: 'string', format: 'uuid' };
    case 'integer':
      return { anyOf: [{ type: 'integer', minimum: INT4_MIN, maximum: INT4_MAX }, text(INT4_TEXT)] };
    case 'number':
      return { anyOf: [{ type: 'number' }, text(DECIMAL_TEXT)] };
    case 'boolean':
      return { anyOf: [{ type: 'boolean' }, { type: 'string', enum: [...TRUE_TEXTS, ...FALSE_TEXTS], description: 'as the query string carries it' }] };
    case 'date':
    case 'timestamp':
      return { type: 'string', format: 'iso-date' };
  }
}

/**
 * One value of a comma-separated in, nin or between list as the server reads it (coercer()), as
 * an unanchored pattern; undefined for a free string (any text without a comma).
 */
export function filterItemPattern(field: FieldDefinition): string | undefined {
  switch (field.type) {
    case 'string':
    case 'text':
      return field.enum ? `(?:${field.enum.filter((v) => !v.includes(',')).map(escapeRegExp).join('|')})` : undefined;
    case 'uuid':
      return `(?:${UUID_TEXT})`;
    case 'integer':
      return INT4_TEXT;
    case 'number':
      return `(?:${DECIMAL_TEXT})`;
    case 'boolean':
      return `(?:${[...TRUE_TEXTS, ...FALSE_TEXTS].join('|')})`;
    case 'date':
    case 'timestamp':
      // The date pattern without its anchors: ^(?:…)$ → (?:…).
      return DATE_STRING_PATTERN.slice(1, -1);
  }
}

/** A validated body value as it is written to its column. */
export function toColumnValue(field: FieldDefinition, value: unknown): unknown {
  if (value === null || value === undefined) return value;
  if (isDateType(field.type) && typeof value === 'string') return toTimestamp(value);
  if (field.type === 'uuid' && typeof value === 'string') return value.toLowerCase();
  return value;
}
