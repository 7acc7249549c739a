// Ajv, compiled once per schema, with its errors turned into NestJS-style sentences
// ("firstName should not be empty") that the 400 envelope carries as an array.
import { Ajv, type ErrorObject, type ValidateFunction } from 'ajv';
import addFormats from 'ajv-formats';
import { badRequest } from './errors.js';
import { isDateString } from './resource/fields.js';

const ajv = new Ajv({ allErrors: true, strict: true, allowUnionTypes: true, coerceTypes: false, useDefaults: false });
addFormats.default(ajv, ['email', 'uri', 'uuid']);
ajv.addFormat('iso-date', { type: 'string', validate: isDateString });

const formatMessages: Record<string, string> = {
  uuid: 'must be a UUID',
  email: 'must be an email',
  uri: 'must be a URL address',
  'iso-date': 'must be a valid ISO 8601 date string',
};

const typeMessages: Record<string, string> = {
  string: 'must be a string',
  integer: 'must be an integer number',
  number: 'must be a number conforming to the specified constraints',
  boolean: 'must be a boolean value',
  object: 'must be an object',
  array: 'must be an array',
};

function label(instancePath: string, root: string): string {
  return instancePath ? instancePath.slice(1).replace(/\//g, '.') : root;
}

export function messageFor(error: ErrorObject, root = 'body'): string {
  const p = error.params as Record<string, any>;
  const at = label(error.instancePath, root);
  const prefix = error.instancePath ? `${at}.` : '';
  switch (error.keyword) {
    case 'required':
      return `${prefix}${p.missingProperty} should not be empty`;
    case 'additionalProperties':
      return `property ${prefix}${p.additionalProperty} should not exist`;
    case 'type':
      return `${at} ${typeMessages[String(p.type).split(',')[0]] ?? `must be ${p.type}`}`;
    case 'minLength':
      return p.limit === 1 ? `${at} should not be empty` : `${at} must be longer than or equal to ${p.limit} characters`;
    case 'maxLength':
      return `${at} must be shorter than or equal to ${p.limit} characters`;
    case 'minimum':
      return `${at} must not be less than ${p.limit}`;
    case 'maximum':
      return `${at} must not be greater than ${p.limit}`;
    case 'exclusiveMinimum':
      return `${at} must be greater than ${p.limit}`;
    case 'exclusiveMaximum':
      return `${at} must be less than ${p.limit}`;
    case 'enum':
      return `${at} must be one of the following values: ${p.allowedValues.filter((v: unknown) => v !== null).join(', ')}`;
    case 'format':
      return `${at} ${formatMessages[p.format] ?? `must match format ${p.format}`}`;
    case 'minItems':
      return `${at} must contain at least ${p.limit} elements`;
    case 'maxItems':
      return `${at} must contain no more than ${p.limit} elements`;
    case 'uniqueItems':
      return `${at} must not contain duplicates`;
    case 'minProperties':
      return `${at} should not be empty`;
    default:
      return `${at} ${error.message ?? 'is invalid'}`;
  }
}

export function messagesFor(errors: ErrorObject[] | null | undefined, root = 'body'): string[] {
  return [...new Set((errors ?? []).map((e) => messageFor(e, root)))];
}

export type Validator<T> = (data: unknown) => T;

/**
 * Compiled schemas by their JSON text. Ajv keeps what it compiles by the schema object, and an
 * app builds its schemas anew, so every app of a process (each test file's) would compile them
 * again and keep every copy; equal text is the same schema (they are plain JSON), compiled once.
 */
const compiled = new Map<string, ValidateFunction>();

/** The schema's validating function, compiled on its first use in the process. */
export function compileSchema(schema: object): ValidateFunction {
  const text = JSON.stringify(schema);
  let validate = compiled.get(text);
  if (!validate) compiled.set(text, (validate = ajv.compile(schema)));
  return validate;
}

/** Compile once; the returned function throws a 400 listing every broken rule. */
export function compileValidator<T = Record<string, unknown>>(schema: object, root = 'body'): Validator<T> {
  const validate = compileSchema(schema);
  return (data: unknown) => {
    if (!validate(data)) throw badRequest(messagesFor(validate.errors, root));
    return data as T;
  };
}
