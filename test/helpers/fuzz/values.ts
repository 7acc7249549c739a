// Hostile values: text, numbers, dates, ids and shapes at the edges of what a field, a filter or
// a body takes. Every string is quiet (leaks.ts): a message that repeats it never looks like a leak.
import fc from 'fast-check';
import { quiet } from './leaks.js';

export const ODD_UUIDS = [
  '00000000-0000-0000-0000-000000000000',
  'ffffffff-ffff-ffff-ffff-ffffffffffff',
  'FFFFFFFF-FFFF-4FFF-BFFF-FFFFFFFFFFFF',
  '123e4567-e89b-12d3-a456-426614174000',
  '123e4567e89b12d3a456426614174000',
  '{123e4567-e89b-12d3-a456-426614174000}',
  'urn:uuid:123e4567-e89b-12d3-a456-426614174000',
  '123e4567-e89b-12d3-a456-42661417400',
  '123e4567-e89b-12d3-a456-4266141740000',
  'g23e4567-e89b-12d3-a456-426614174000',
  ' 123e4567-e89b-12d3-a456-426614174000',
  '123e4567-e89b-12d3-a456-426614174000\u0000',
  '１２３e4567-e89b-12d3-a456-426614174000',
];

export const ODD_DATES = [
  '2026-02-30',
  '2026-13-01',
  '2026-00-10',
  '0000-01-01',
  '0999-12-31',
  '1000-01-01',
  '9999-12-31',
  '9999-12-31T23:59:59.999Z',
  '9999-12-31T23:59:59.999-05:00',
  '10000-01-01',
  '+010000-01-01T00:00:00Z',
  '-000001-01-01T00:00:00Z',
  '2026-01-05T24:00:00Z',
  '2026-01-05T23:59:60Z',
  '2026-01-05T10:00:00',
  '2026-01-05T10:00:00+25:00',
  '2026-01-05T10:00:00+05',
  '2026-01-05 10:00:00Z',
  '2026-01-05T10:00:00.123456789Z',
  '2026-W02',
  '20260105',
  '1e10',
  'now',
  'Mon, 05 Jan 2026 10:00:00 GMT',
  '2026-01-05\u0000',
];

export const ODD_NUMBER_TEXT = ['-1', '0', '1.5', '1e3', '1e400', '0x1F', '00012', '+5', ' 7', '7 ', '2147483648', '-2147483649', '9007199254740993', '100000000000000000000', 'NaN', 'Infinity', '-0', '١٢', '½', '1_000', ''];

export const ODD_TEXT = [
  '',
  ' ',
  '\u0000',
  'a\u0000b',
  '%00',
  '%',
  '%zz',
  '\t\r\n',
  "' OR '1'='1",
  "'; drop table tag; --",
  '"',
  '\\',
  '\\u0000',
  '../../etc/passwd',
  '<script>alert(1)</script>',
  '${7*7}',
  '{{7*7}}',
  '%s%s%n',
  'null',
  'undefined',
  'true',
  '[]',
  '{}',
  '__proto__',
  'constructor',
  'prototype',
  'toString',
  'hasOwnProperty',
  '\u202eevil',
  '\ufeffbom',
  '\ud800',
  '\udfff\ud800x',
  '👩‍💻',
  'Zalgơ̵̡̢̗̰̱̫',
  'ＡＳＣ',
  'İı',
  'ß',
  'a,b,,c',
  'a.b.c.d',
  'x'.repeat(256),
  'y'.repeat(4_000),
  'ASC',
  'desc',
  'DESC ',
  'sideways',
];

/** Object keys that are not the resource's, or are its in a form it should refuse. */
export const ODD_KEYS = ['__proto__', 'constructor', 'prototype', 'toString', 'hasOwnProperty', 'valueOf', '', ' ', 'id', 'tenantId', 'createdAt', 'updatedAt', 'deletedAt', 'hash', 'password', '$where', 'a.b', 'where[x]', '0', 'length', 'then', 'ID', 'unknownField'];

export const text: fc.Arbitrary<string> = fc
  .oneof(
    { weight: 3, arbitrary: fc.constantFrom(...ODD_TEXT) },
    { weight: 2, arbitrary: fc.string({ maxLength: 24 }) },
    { weight: 1, arbitrary: fc.string({ unit: 'grapheme', maxLength: 12 }) },
    { weight: 1, arbitrary: fc.string({ unit: 'binary', maxLength: 12 }) },
  )
  .filter(quiet);

export const number: fc.Arbitrary<number> = fc.oneof(
  fc.constantFrom(0, -1, 1, 2 ** 31 - 1, 2 ** 31, -(2 ** 31) - 1, 2 ** 53 + 2, 1e20, 1e308, -1e308, 0.5, 1.5, 5e-324, -0),
  fc.integer(),
  fc.double({ noNaN: true, noDefaultInfinity: true }),
);

/** A value of any JSON type, scalar or a little nested, keys included. */
export const scalar: fc.Arbitrary<unknown> = fc.oneof(
  { weight: 3, arbitrary: text },
  { weight: 2, arbitrary: number },
  { weight: 1, arbitrary: fc.constantFrom(true, false, null) },
  { weight: 1, arbitrary: fc.constantFrom(...ODD_UUIDS, ...ODD_DATES, ...ODD_NUMBER_TEXT) },
);

export const key: fc.Arbitrary<string> = fc.oneof({ weight: 2, arbitrary: fc.constantFrom(...ODD_KEYS) }, { weight: 1, arbitrary: text });

/** An object made by Object.fromEntries, so a `__proto__` key is an own key and reaches the wire. */
export const objectOf = (keys: fc.Arbitrary<string>, values: fc.Arbitrary<unknown>, maxKeys = 3) =>
  fc.array(fc.tuple(keys, values), { maxLength: maxKeys }).map((entries) => Object.fromEntries(entries));

/** n levels of one-element arrays or one-key objects around a value. */
export function nested(depth: number, kind: 'array' | 'object', inner: unknown = 1): unknown {
  let value = inner;
  for (let i = 0; i < depth; i++) value = kind === 'array' ? [value] : { a: value };
  return value;
}

export const hostile: fc.Arbitrary<unknown> = fc.letrec<{ value: unknown }>((tie) => ({
  value: fc.oneof(
    { depthSize: 'small', maxDepth: 3 },
    { weight: 12, arbitrary: scalar },
    { weight: 2, arbitrary: fc.array(tie('value'), { maxLength: 3 }) },
    { weight: 2, arbitrary: objectOf(key, tie('value')) },
    { weight: 1, arbitrary: fc.constantFrom(nested(64, 'array'), nested(64, 'object'), nested(2_000, 'array'), Array(1_000).fill(7), Object.fromEntries(Array.from({ length: 300 }, (_, i) => [`k${i}`, i]))) },
  ),
})).value;

/** A plausible value beside hostile ones: most requests should get past the first check. */
export const mostly = <T>(valid: fc.Arbitrary<T>, validWeight = 5): fc.Arbitrary<unknown> =>
  fc.oneof({ weight: validWeight, arbitrary: valid }, { weight: 1, arbitrary: hostile });
