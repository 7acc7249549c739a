// A list's filter operators: which ones exist, which a field allows (its definition's `filters`
// entry, or the defaults of its type), and how one where[field][operator] value is read and
// checked. The SQL they become is written in sql/conditions.ts; the OpenAPI schemas in
// engine/openapi/filter-schemas.ts.
import { isPlainObject } from '../objects.js';
import { coercer, type Coerced } from './fields.js';
import type { FieldDefinition, FieldType } from './types.js';

export const FILTER_OPERATORS = ['eq', 'ne', 'in', 'nin', 'lt', 'lte', 'gt', 'gte', 'between', 'ilike', 'isNull'] as const;
export type FilterOperator = (typeof FILTER_OPERATORS)[number];

/** null: the field is empty (where[organizationId]=null, where a resource allows it). */
export type FilterValue = string | number | boolean | null;

export interface Condition {
  field: string;
  op: FilterOperator;
  /** A list for in, nin and between; a boolean for isNull; a pattern for ilike. */
  value: FilterValue | FilterValue[];
}

const RANGE: FilterOperator[] = ['eq', 'ne', 'in', 'nin', 'lt', 'lte', 'gt', 'gte', 'between', 'isNull'];

/** What a field allows when its definition does not say. */
export const DEFAULT_OPERATORS: Record<FieldType, readonly FilterOperator[]> = {
  string: ['eq', 'ne', 'in', 'nin', 'ilike', 'isNull'],
  text: ['eq', 'ne', 'in', 'nin', 'ilike', 'isNull'],
  uuid: ['eq', 'ne', 'in', 'nin', 'isNull'],
  integer: RANGE,
  number: RANGE,
  date: RANGE,
  timestamp: RANGE,
  boolean: ['eq', 'ne', 'isNull'],
};

/**
 * What a definition may give a field of each type: strings may also be compared (in the
 * database's collation order); ilike is for text only, ranges for what has an order.
 */
const POSSIBLE_OPERATORS: Record<FieldType, readonly FilterOperator[]> = {
  ...DEFAULT_OPERATORS,
  string: FILTER_OPERATORS,
  text: FILTER_OPERATORS,
};

export const possibleOperators = (type: FieldType) => POSSIBLE_OPERATORS[type];

/** The most values an in, nin list takes. */
export const MAX_LIST_VALUES = 500;
/** The longest ilike pattern. */
export const MAX_PATTERN_LENGTH = 200;

export interface CompiledFilter {
  type: FieldType;
  /** The field's own definition (its enum, for the document). */
  definition: FieldDefinition;
  operators: readonly FilterOperator[];
  /** True where `eq` takes null (the word null in a query string) for an empty field. */
  matchesNull: boolean;
  /** One value coerced to the field's type, or the problem, naming `label`. */
  coerce(raw: unknown, label: string): Coerced;
}

export function compileFilter(definition: FieldDefinition, operators: readonly FilterOperator[], matchesNull = false): CompiledFilter {
  const typed = coercer(definition, '', matchesNull);
  return {
    type: definition.type,
    definition,
    operators,
    matchesNull,
    coerce(raw, label) {
      const result = typed(raw);
      return result.ok ? result : { ok: false, message: `${label}${result.message}` };
    },
  };
}

/** What isNull takes: a boolean, or its query-string text. */
const IS_NULL_VALUE = compileFilter({ type: 'boolean' }, []);

/** in, nin, between: an array (a JSON array, or where[f][in][]=a repeated), or comma-separated text. */
function listOf(raw: unknown): unknown[] | undefined {
  if (Array.isArray(raw)) return raw;
  if (typeof raw === 'string') return raw === '' ? [] : raw.split(',');
  return undefined;
}

/** Ends in a backslash that escapes nothing (PostgreSQL refuses such a LIKE pattern). */
const danglingEscape = (pattern: string) => /(^|[^\\])(\\\\)*\\$/.test(pattern);

/** One operator's value, checked; undefined after recording a problem. */
function operand(filter: CompiledFilter, op: FilterOperator, raw: unknown, label: string, problems: string[]): Condition['value'] | undefined {
  const one = (value: unknown, at: string) => {
    const result = filter.coerce(value, at);
    if (result.ok && result.value === null && op !== 'eq' && op !== 'ne') {
      problems.push(`${at} must not be null: use isNull`);
      return undefined;
    }
    if (!result.ok) problems.push(result.message);
    return result.ok ? result.value : undefined;
  };
  switch (op) {
    case 'in':
    case 'nin':
    case 'between': {
      const values = listOf(raw);
      const example = op === 'between' ? 'two values, e.g. [1, 10] or 1,10' : 'a list, e.g. [a, b] or a,b';
      if (!values) {
        problems.push(`${label} must be ${example}`);
        return undefined;
      }
      if (op === 'between' && values.length !== 2) {
        problems.push(`${label} must be two values (from, to), e.g. [1, 10] or 1,10`);
        return undefined;
      }
      if (!values.length) {
        problems.push(`${label} should not be empty`);
        return undefined;
      }
      if (values.length > MAX_LIST_VALUES) {
        problems.push(`${label} must not hold more than ${MAX_LIST_VALUES} values`);
        return undefined;
      }
      const typed = values.map((value, i) => one(value, `${label}.${i}`));
      return typed.some((value) => value === undefined) ? undefined : (typed as FilterValue[]);
    }
    case 'isNull': {
      const result = IS_NULL_VALUE.coerce(raw, label);
      if (!result.ok) problems.push(result.message);
      return result.ok ? result.value : undefined;
    }
    case 'ilike':
      if (typeof raw !== 'string') problems.push(`${label} must be a string`);
      else if (raw.length > MAX_PATTERN_LENGTH) problems.push(`${label} must be shorter than or equal to ${MAX_PATTERN_LENGTH} characters`);
      else if (danglingEscape(raw)) problems.push(`${label} must not end with a lone backslash (\\\\ matches a backslash)`);
      else return raw;
      return undefined;
    default:
      if (Array.isArray(raw) || isPlainObject(raw)) {
        problems.push(`${label} must be a single value`);
        return undefined;
      }
      return one(raw, label);
  }
}

/**
 * where[field]=v (eq) or where[field][op]=v for each op given (all must hold): the conditions,
 * or none after recording every problem. `label` is where.field as the client wrote it.
 */
export function parseConditions(filter: CompiledFilter, field: string, raw: unknown, label: string, problems: string[]): Condition[] {
  if (!isPlainObject(raw)) {
    const value = operand(filter, 'eq', raw, label, problems);
    return value === undefined ? [] : [{ field, op: 'eq', value }];
  }
  const entries = Object.entries(raw);
  if (!entries.length) {
    problems.push(`${label} should not be empty: give a value, or operators such as ${label}[${filter.operators[0]}]`);
    return [];
  }
  const conditions: Condition[] = [];
  for (const [op, value] of entries) {
    const at = `${label}.${op}`;
    if (!(FILTER_OPERATORS as readonly string[]).includes(op)) {
      problems.push(`${label}: '${op}' is not an operator; ${field} takes ${filter.operators.join(', ')}`);
    } else if (!filter.operators.includes(op as FilterOperator)) {
      problems.push(`${at} is not allowed: ${field} takes ${filter.operators.join(', ')}`);
    } else {
      const checked = operand(filter, op as FilterOperator, value, at, problems);
      if (checked !== undefined) conditions.push({ field, op: op as FilterOperator, value: checked });
    }
  }
  return conditions;
}
