// A definition's fields → compiled fields: the columns its scope adds, and the checks that a
// field's rules agree with its type and with each other (its default and enum values included).
import { compileSchema, messagesFor } from '../validation.js';
import { problem, type Check } from './check.js';
import type { CompiledField } from './compiled.js';
import { valueSchema } from './fields.js';
import type { FieldDefinition, ResourceDefinition } from './types.js';

const uuid: FieldDefinition = { type: 'uuid' };
const timestamp: FieldDefinition = { type: 'timestamp' };

const OPTIONAL_ORGANIZATION =
  "The organization the record belongs to; null: none, a record of the whole tenant. Left out on create: the organization header's, " +
  "the caller's own organization (its organizationId claim), or the tenant's only one; else null";

/**
 * The columns every record of a scope has, before the definition's own fields, and those of who
 * changed it (changedBy) and of its deletion (softDelete), which the engine alone writes.
 */
function baseFields(definition: ResourceDefinition, organizationRoot?: string): Array<[string, FieldDefinition, boolean]> {
  const fields: Array<[string, FieldDefinition, boolean]> = [
    ['id', { ...uuid, readOnly: true }, false],
    ['tenantId', { ...uuid, readOnly: true }, false],
  ];
  if (definition.scope === 'organization') {
    const described = definition.organizationOptional ? { description: OPTIONAL_ORGANIZATION } : {};
    fields.push(['organizationId', { ...uuid, references: organizationRoot, ...described }, true]);
  }
  fields.push(['createdAt', { ...timestamp, readOnly: true }, false], ['updatedAt', { ...timestamp, readOnly: true }, false]);
  if (definition.changedBy) {
    fields.push(
      ['createdById', { ...uuid, readOnly: true, description: 'The user whose request created the record' }, false],
      ['updatedById', { ...uuid, readOnly: true, description: 'The user whose request last changed the record (its creator until then)' }, false],
    );
  }
  if (definition.softDelete) {
    fields.push(
      ['deletedAt', { ...timestamp, readOnly: true, description: 'When the record was deleted; null while it is not (deleted records show only with withDeleted=true)' }, false],
      ['deletedById', { ...uuid, readOnly: true, description: 'The user whose request deleted the record; null while it is not deleted' }, false],
    );
  }
  return fields;
}


/** Base columns that may hold null: records written before changedBy, or by a module; a record not deleted. */
const NULLABLE_BASE = new Set(['createdById', 'updatedById', 'deletedAt', 'deletedById']);

const STRING_RULES = ['minLength', 'maxLength', 'enum', 'format'] as const;
const NUMBER_RULES = ['minimum', 'maximum', 'exclusiveMinimum', 'exclusiveMaximum'] as const;

/** Pairs of bounds that, crossed, leave no value able to pass; the boolean says both are inclusive. */
const BOUND_PAIRS = [
  ['minimum', 'maximum', true],
  ['minimum', 'exclusiveMaximum', false],
  ['exclusiveMinimum', 'maximum', false],
  ['exclusiveMinimum', 'exclusiveMaximum', false],
  ['minLength', 'maxLength', true],
] as const;

/**
 * A rule of another type would be dropped without a word by valueSchema (a minimum on a string),
 * and crossed bounds would refuse every value: both are mistakes in the definition, not in requests.
 */
function checkRules(check: Check, name: string, def: FieldDefinition): boolean {
  const before = check.problems.length;
  const stringy = def.type === 'string' || def.type === 'text';
  const numeric = def.type === 'integer' || def.type === 'number';
  for (const key of STRING_RULES) {
    if (!stringy && def[key] !== undefined) problem(check, ['fields', name, key], `applies to string and text fields, not ${def.type}`);
  }
  for (const key of NUMBER_RULES) {
    if (!numeric && def[key] !== undefined) problem(check, ['fields', name, key], `applies to integer and number fields, not ${def.type}`);
  }
  for (const [low, high, inclusive] of BOUND_PAIRS) {
    const [a, b] = [def[low], def[high]];
    if (a === undefined || b === undefined || (inclusive ? a <= b : a < b)) continue;
    problem(check, ['fields', name, low], `${low} ${a} is ${inclusive ? 'greater than' : 'not less than'} ${high} ${b}: no value can pass`);
  }
  return check.problems.length === before;
}

/** The default and every enum value must pass the field's other rules, as a body's value would. */
function checkValues(check: Check, name: string, def: FieldDefinition) {
  const report = (rules: FieldDefinition, value: unknown, at: Array<string | number>) => {
    const validate = compileSchema(valueSchema(rules, false));
    if (!validate(value)) for (const message of messagesFor(validate.errors, JSON.stringify(value))) problem(check, at, message);
  };
  // Only a string field's enum is a rule (another type's is reported by checkRules).
  if (def.enum && (def.type === 'string' || def.type === 'text')) {
    const { enum: values, ...others } = def;
    values.forEach((value, i) => report(others, value, ['fields', name, 'enum', i]));
  }
  if (def.default !== undefined) report(def, def.default, ['fields', name, 'default']);
}

export function compileFields(check: Check, organizationRoot?: string): Map<string, CompiledField> {
  const { definition } = check.source;
  const fields = new Map<string, CompiledField>();
  if (definition.scope === 'organization' && !organizationRoot) {
    problem(check, ['scope'], 'scope "organization" needs a resource marked organizationRoot (the organizations records belong to)');
  }
  for (const [name, def, writable] of baseFields(definition, organizationRoot)) {
    const nullableBase = (name === 'organizationId' && definition.organizationOptional === true) || NULLABLE_BASE.has(name);
    fields.set(name, { name, definition: def, base: true, writable, hidden: false, ...(nullableBase ? { nullableBase } : {}) });
  }
  for (const [name, def] of Object.entries(definition.fields)) {
    if (fields.has(name)) {
      problem(check, ['fields', name], `is added by scope "${definition.scope}" and cannot be redefined`);
      continue;
    }
    const consistent = checkRules(check, name, def);
    if (def.required && (def.readOnly || def.hidden)) {
      problem(check, ['fields', name, 'required'], 'a required field cannot be readOnly or hidden');
    }
    if (def.references && def.type !== 'uuid') problem(check, ['fields', name, 'references'], 'only uuid fields can reference a resource');
    if (def.referencesBy && def.type !== 'uuid') problem(check, ['fields', name, 'referencesBy'], 'only uuid fields can reference a resource');
    if (def.referencesBy && def.references) problem(check, ['fields', name, 'referencesBy'], 'a field has references or referencesBy, not both');
    if (def.callerDefault && def.type !== 'uuid') problem(check, ['fields', name, 'callerDefault'], 'only a uuid field can take the caller\'s id');
    if (def.computed) {
      if (def.type !== 'integer') problem(check, ['fields', name, 'computed'], 'secondsBetween gives whole seconds: the field must be an integer');
      if (def.required || def.default !== undefined || def.callerDefault) problem(check, ['fields', name, 'computed'], 'a computed field cannot be required or have a default');
    }
    const stringy = def.type === 'string' || def.type === 'text';
    const withDefaults: FieldDefinition = stringy && def.required && def.minLength === undefined ? { ...def, minLength: 1 } : def;
    // Values checked against rules that contradict themselves would only repeat the same fault.
    if (consistent) checkValues(check, name, withDefaults);
    fields.set(name, {
      name,
      definition: withDefaults,
      base: false,
      // A computed field is the database's to write (a generated column).
      writable: !def.readOnly && !def.hidden && !def.computed,
      hidden: Boolean(def.hidden),
    });
  }
  return fields;
}