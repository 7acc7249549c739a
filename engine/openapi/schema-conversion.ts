// The JSON Schemas that Ajv enforces (draft-07) → OpenAPI 3.0 schema objects, so the document is
// derived from exactly what the server checks. OpenAPI 3.0 has no type arrays (nullable instead),
// boolean exclusiveMinimum/Maximum, no const, and knows nothing of our 'iso-date' format.
import { DATE_STRING_PATTERN } from '../resource/fields.js';

type Json = Record<string, unknown>;

/** Keywords an OpenAPI 3.0 schema object accepts; anything else is dropped. */
const KEPT = new Set([
  'title', 'description', 'default', 'example', 'readOnly', 'writeOnly', 'deprecated', 'format', 'nullable',
  'multipleOf', 'minimum', 'maximum', 'minLength', 'maxLength', 'pattern',
  'minItems', 'maxItems', 'uniqueItems', 'minProperties', 'maxProperties', 'required', 'enum', '$ref',
]);

/** Keywords whose value is itself a schema, or a list or map of schemas. */
const SUBSCHEMA = new Set(['items', 'not']);
const SUBSCHEMA_LISTS = new Set(['allOf', 'anyOf', 'oneOf']);

const ISO_DATE_HINT =
  'ISO 8601 date (2026-01-05, midnight UTC) or date-time (2026-01-05T09:30:00Z, 2026-01-05T11:30:00+02:00; ' +
  'without a zone, 2026-01-05T09:30:00, it is read as UTC); years 1000 to 9999';

const isObject = (v: unknown): v is Json => typeof v === 'object' && v !== null && !Array.isArray(v);

function convertBounds(source: Json, target: Json) {
  // draft-07 exclusive bounds are numbers; OpenAPI 3.0's are flags on minimum/maximum.
  for (const [exclusive, inclusive] of [['exclusiveMinimum', 'minimum'], ['exclusiveMaximum', 'maximum']] as const) {
    const bound = source[exclusive];
    if (typeof bound === 'boolean') {
      if (bound) target[exclusive] = true;
    } else if (typeof bound === 'number') {
      const other = source[inclusive];
      const stricter = typeof other !== 'number' || (inclusive === 'minimum' ? bound >= other : bound <= other);
      if (stricter) {
        target[inclusive] = bound;
        target[exclusive] = true;
      }
    }
  }
}

function convertType(source: Json, target: Json): Json | undefined {
  const raw = source.type;
  if (raw === undefined) return undefined;
  const types = (Array.isArray(raw) ? raw : [raw]).filter((t): t is string => typeof t === 'string');
  const nullable = types.includes('null');
  const concrete = types.filter((t) => t !== 'null');
  if (nullable) target.nullable = true;
  if (concrete.length === 1) {
    target.type = concrete[0];
    return undefined;
  }
  // Several concrete types: one branch per type, each carrying the keywords that apply to it.
  return { oneOf: concrete.map((type) => ({ type })), ...(nullable ? { nullable: true } : {}) };
}

/** One schema, recursively. Unknown keywords are dropped rather than producing an invalid document. */
export function toOpenApiSchema(schema: unknown): Json {
  if (!isObject(schema)) return {};
  const out: Json = {};
  const union = convertType(schema, out);
  for (const [key, value] of Object.entries(schema)) {
    if (KEPT.has(key)) out[key] = key === 'enum' && Array.isArray(value) ? [...value] : value;
    else if (key === 'const') out.enum = [value];
    else if (SUBSCHEMA.has(key)) out[key] = toOpenApiSchema(value);
    else if (SUBSCHEMA_LISTS.has(key) && Array.isArray(value)) out[key] = value.map(toOpenApiSchema);
    else if (key === 'properties' && isObject(value)) {
      out.properties = Object.fromEntries(Object.entries(value).map(([name, sub]) => [name, toOpenApiSchema(sub)]));
    } else if (key === 'additionalProperties') {
      out.additionalProperties = typeof value === 'boolean' ? value : toOpenApiSchema(value);
    }
  }
  convertBounds(schema, out);
  if (out.format === 'iso-date') {
    // Neither OpenAPI format fits: 'date' rejects date-times and 'date-time' rejects plain dates.
    // The pattern is the server's own (engine/resource/fields.ts): every date schema of the document is this one.
    delete out.format;
    out.pattern = DATE_STRING_PATTERN;
    out.description = out.description ? `${out.description}. ${ISO_DATE_HINT}` : ISO_DATE_HINT;
    if (out.example === undefined) out.example = '2026-01-05';
  }
  if (Array.isArray(out.required) && out.required.length === 0) delete out.required;
  if (out.type === 'array' && out.items === undefined) out.items = {};
  if (union) {
    delete out.type;
    delete out.nullable;
    return { ...union, ...out };
  }
  return out;
}
