// Values valid by a schema of the OpenAPI document, as fast-check arbitraries: what a client
// generated from the document may send (formats, patterns, enums, bounds, required properties),
// never more. readOnly properties are left out of request bodies, as OpenAPI 3.0 says a client
// does. `pick` lets the caller choose a value by name (the caller's own tenant and organization,
// ids of records that exist) wherever the schema allows it.
import fc from 'fast-check';
import { resolve } from './operations.js';

type Json = Record<string, any>;

/** A value for a property or parameter of this name and schema, or undefined to let the schema decide. */
export type Pick = (name: string, schema: Json) => fc.Arbitrary<unknown> | undefined;

const DEPTH = 4;

const FORMATS: Record<string, fc.Arbitrary<string>> = {
  uuid: fc.uuid({ version: 4 }),
  'date-time': fc.date({ min: new Date('2000-01-01T00:00:00Z'), max: new Date('2099-12-31T00:00:00Z'), noInvalidDate: true }).map((d) => d.toISOString()),
  date: fc.date({ min: new Date('2000-01-01T00:00:00Z'), max: new Date('2099-12-31T00:00:00Z'), noInvalidDate: true }).map((d) => d.toISOString().slice(0, 10)),
  email: fc.stringMatching(/^[a-z]{1,10}$/).map((local) => `${local}@example.com`),
  uri: fc.stringMatching(/^[a-z]{1,10}$/).map((name) => `https://example.com/${name}`),
};

/**
 * The pattern values are drawn from. fast-check draws each character of a negated class (`[^,]`)
 * by filtering every character it could make, which made this suite most of a CI lane: a class
 * that excludes no letter or digit draws from those instead. What is drawn is still checked
 * against the document's own pattern (stringOf).
 */
function drawingPattern(pattern: string): string {
  return pattern.replace(/\[\^((?:\\.|[^\]\\])*)\]/g, (whole, inner: string) => (/[a-zA-Z0-9]|\\[dwsDWSpP]/.test(inner) ? whole : '[a-zA-Z0-9]'));
}

/** One arbitrary per pattern: building one from a long pattern costs more than drawing from it. */
const byPattern = new Map<string, fc.Arbitrary<string>>();

function matching(pattern: string): fc.Arbitrary<string> {
  let arbitrary = byPattern.get(pattern);
  if (!arbitrary) {
    const document = new RegExp(pattern, 'u');
    arbitrary = fc.stringMatching(new RegExp(drawingPattern(pattern), 'u')).filter((v) => document.test(v));
    byPattern.set(pattern, arbitrary);
  }
  return arbitrary;
}

function stringOf(s: Json): fc.Arbitrary<string> {
  const min = s.minLength ?? 0;
  const max = Math.min(s.maxLength ?? 24, min + 24);
  if (s.format && FORMATS[s.format]) return FORMATS[s.format].filter((v) => v.length >= min && v.length <= (s.maxLength ?? Infinity));
  if (s.pattern) {
    return matching(s.pattern).filter((v) => v.length >= min && v.length <= (s.maxLength ?? Infinity) && !/[\u0000-\u001f]/.test(v));
  }
  // Printable text: what a field holds (control characters are the hostile suite's to send).
  return fc.string({ minLength: min, maxLength: max, unit: fc.constantFrom(...'abcdefghijklmnopqrstuvwxyz ABCDEFGHIJ0123456789-_.'.split('')) });
}

function numberOf(s: Json, integer: boolean): fc.Arbitrary<number> {
  const exclusive = (flag: unknown, bound: unknown) => (typeof flag === 'number' ? flag : flag === true ? bound : undefined);
  const lowEx = exclusive(s.exclusiveMinimum, s.minimum) as number | undefined;
  const highEx = exclusive(s.exclusiveMaximum, s.maximum) as number | undefined;
  const min = lowEx !== undefined ? lowEx + (integer ? 1 : 0.001) : s.minimum ?? (integer ? -1000 : -1000);
  const max = highEx !== undefined ? highEx - (integer ? 1 : 0.001) : s.maximum ?? Math.max(min + 1000, 1000);
  // Small values most of the time: a huge take or amount is valid but says little more.
  const top = Math.min(max, min + 10_000);
  if (integer) return fc.integer({ min: Math.ceil(min), max: Math.floor(top) });
  const value = fc.double({ min, max: top, noNaN: true, noDefaultInfinity: true }).map((v) => Math.round(v * 100) / 100).filter((v) => v >= min && v <= max);
  return s.multipleOf ? value.map((v) => Math.round(v / s.multipleOf) * s.multipleOf) : value;
}

/** An object: every required property, and some of the optional ones. */
function objectOf(doc: Json, s: Json, pick: Pick | undefined, depth: number, request: boolean): fc.Arbitrary<unknown> {
  const properties = Object.entries<Json>(s.properties ?? {}).filter(([, p]) => !(request && resolve(doc, p)?.readOnly));
  const required = new Set<string>(s.required ?? []);
  const entries = properties.map(([name, p]) => {
    const value = valueOf(doc, p, pick, depth + 1, request, name);
    return required.has(name) ? value.map((v) => [[name, v]] as Array<[string, unknown]>) : fc.option(value.map((v) => [[name, v]] as Array<[string, unknown]>), { freq: 2, nil: [] as Array<[string, unknown]> });
  });
  const min = s.minProperties ?? 0;
  return fc.tuple(...entries).map((parts) => Object.fromEntries(parts.flat())).filter((o) => Object.keys(o).length >= min);
}

const isScalar = (doc: Json, p: unknown) => {
  const r = resolve(doc, p);
  return Boolean(r && (r.enum || ['string', 'integer', 'number', 'boolean'].includes(r.type)));
};

/**
 * Deep enough: an object of its scalar properties only (its required ones, or one when it needs
 * some), so that a recursive schema (a where's groups of related filters) ends.
 */
function shallowObjectOf(doc: Json, s: Json, pick: Pick | undefined, depth: number, request: boolean): fc.Arbitrary<unknown> {
  const scalars = Object.entries<Json>(s.properties ?? {}).filter(([, p]) => isScalar(doc, p));
  const required = new Set<string>(s.required ?? []);
  const kept = scalars.filter(([name]) => required.has(name));
  // One it needs: a scalar one if it has any, else its first (which ends the same way, a level down).
  const first = scalars[0] ?? Object.entries<Json>(s.properties ?? {})[0];
  if (!kept.length && (s.minProperties ?? 0) > 0 && first) kept.push(first);
  return objectOf(doc, { ...s, properties: Object.fromEntries(kept), required: kept.map(([name]) => name), minProperties: 0 }, pick, depth, request);
}

/** The branches of a schema's allOf merged into one (properties, required): enough for the document's own use of allOf. */
function merged(doc: Json, s: Json): Json {
  const out: Json = { ...s, allOf: undefined };
  for (const part of s.allOf ?? []) {
    const p = resolve(doc, part);
    const inner = p.allOf ? merged(doc, p) : p;
    out.type ??= inner.type;
    out.properties = { ...inner.properties, ...out.properties };
    out.required = [...new Set([...(out.required ?? []), ...(inner.required ?? [])])];
    if (inner.additionalProperties === false) out.additionalProperties = false;
    if (inner.minProperties !== undefined) out.minProperties = Math.max(out.minProperties ?? 0, inner.minProperties);
  }
  return out;
}

/** A value valid by the schema; `request`: leave readOnly properties out. */
export function valueOf(doc: Json, schema: unknown, pick?: Pick, depth = 0, request = true, name = ''): fc.Arbitrary<unknown> {
  let s = resolve(doc, schema) as Json | undefined;
  if (!s || typeof s !== 'object') return fc.constant('x');
  if (s.allOf) s = merged(doc, s);
  const chosen = name ? pick?.(name, s) : undefined;
  if (chosen) return chosen;
  if (s.enum) return fc.constantFrom(...(s.enum as unknown[]).filter((v) => v !== null || s!.nullable));
  const branches = s.anyOf ?? s.oneOf;
  if (branches) {
    const type = s.type;
    const options = (branches as unknown[]).map((b) => resolve(doc, b)).filter((b) => b && !(b.enum && b.enum.every((v: unknown) => v === null)));
    // A branch that only narrows (anyOf [{format: uuid}, {enum: [null]}] beside a type) carries the type outside.
    return fc.oneof(...options.map((b) => valueOf(doc, type && !b.type ? { type, ...b } : b, pick, depth + 1, request, name)));
  }
  // Deep enough: objects of scalars only, and arrays as short as they may be (an in list needs one).
  if (depth > DEPTH && s.type === 'object') return shallowObjectOf(doc, s, pick, depth, request);
  if (depth > DEPTH && s.type === 'array' && !s.minItems) return fc.constant([]);
  switch (s.type) {
    case 'string':
      return stringOf(s);
    case 'integer':
      return numberOf(s, true);
    case 'number':
      return numberOf(s, false);
    case 'boolean':
      return fc.boolean();
    case 'array': {
      const min = s.minItems ?? 0;
      const max = Math.min(s.maxItems ?? 3, min + 3);
      const item = valueOf(doc, s.items ?? {}, pick, depth + 1, request, name);
      return s.uniqueItems ? fc.uniqueArray(item, { minLength: min, maxLength: max, selector: (v) => JSON.stringify(v) }) : fc.array(item, { minLength: min, maxLength: max });
    }
    case 'object':
      return objectOf(doc, s, pick, depth, request);
    default:
      return s.properties ? objectOf(doc, s, pick, depth, request) : fc.constant('x');
  }
}
