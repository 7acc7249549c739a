// Reading definitions: YAML → plain objects checked against the format's JSON Schema.
// Every problem names the file, the line, the path inside the file and the fault, and stops start-up.
import { readFileSync, readdirSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { Ajv, type ErrorObject } from 'ajv';
import { LineCounter, parseDocument, isMap, isNode, isScalar, type Document } from 'yaml';
import type { ResourceDefinition } from './types.js';

export class DefinitionError extends Error {
  constructor(
    readonly problems: string[],
    heading = 'Invalid resource definition',
  ) {
    super(`${heading}:\n  ${problems.join('\n  ')}`);
  }
}

/** A loaded definition keeps its source so later checks can point into it. */
export interface SourcedDefinition {
  definition: ResourceDefinition;
  file: string;
  /**
   * "file:line:col path" of a place in the file: the value at that path, or with `key` the key
   * itself (an unknown property is pointed at by its name). A path that is not in the file points
   * at its nearest ancestor that is.
   */
  locate(pathInFile: Array<string | number>, options?: { key?: boolean }): string;
}

const schemaFile = fileURLToPath(new URL('./definition.schema.json', import.meta.url));
const ajv = new Ajv({ allErrors: true, strict: true, strictRequired: false, allowUnionTypes: true });
const validateFormat = ajv.compile(JSON.parse(readFileSync(schemaFile, 'utf8')));

/** Files in a resources folder that are configuration, not resource definitions. */
const NOT_DEFINITIONS = new Set(['roles.yaml', 'limits.yaml']);

function segments(instancePath: string): string[] {
  return instancePath.split('/').slice(1).map((s) => s.replace(/~1/g, '/').replace(/~0/g, '~'));
}

const RELATION_KINDS = ['belongsTo', 'hasMany', 'manyToMany'];

function describe(error: ErrorObject, value: unknown, topLevel: string): { at: string[]; key?: boolean; fault: string } {
  const at = segments(error.instancePath);
  const p = error.params as Record<string, any>;
  switch (error.keyword) {
    case 'additionalProperties':
      return { at: [...at, p.additionalProperty], key: true, fault: 'is not a known property' };
    case 'required':
      return { at, fault: `is missing the required property "${p.missingProperty}"` };
    case 'enum':
      return { at, fault: `must be one of: ${p.allowedValues.join(', ')}` };
    case 'oneOf': {
      const relation = at.reduce<any>((node, segment) => node?.[segment], value);
      const kinds = RELATION_KINDS.filter((kind) => relation && typeof relation === 'object' && kind in relation);
      const has = kinds.length ? `this one has ${kinds.join(' and ')}` : 'this one has none';
      return { at, fault: `a relation needs exactly one of: belongsTo with via, hasMany with via, manyToMany with through (${has})` };
    }
    case 'propertyNames':
      return { at: [...at, p.propertyName], key: true, fault: 'is not a valid name (letters and digits, starting with a letter)' };
    case 'type':
      if (at.length === 0) return { at, fault: topLevel };
      return { at, fault: error.message ?? 'is invalid' };
    default:
      return { at, fault: error.message ?? 'is invalid' };
  }
}

/** Offset of the node at a path (or of its key), or of its nearest ancestor present in the file. */
function offsetOf(doc: Document, at: Array<string | number>, key: boolean): number {
  if (key && at.length) {
    const parent = doc.getIn(at.slice(0, -1), true);
    const last = String(at[at.length - 1]);
    const pair = isMap(parent) ? parent.items.find((item) => isScalar(item.key) && String(item.key.value) === last) : undefined;
    if (pair && isNode(pair.key) && pair.key.range) return pair.key.range[0];
  }
  for (let up = at.length; up >= 0; up--) {
    const node = up === 0 ? doc.contents : doc.getIn(at.slice(0, up), true);
    if (isNode(node) && node.range) return node.range[0];
  }
  return 0;
}

/**
 * Ajv reports every branch of a failed oneOf; keep the oneOf itself and drop the branch noise. A
 * failed anyOf of "a name or { … }" (filters, search entries) keeps the faults of the form the entry
 * was written in: an object's own, or a name's.
 */
function relevant(errors: ErrorObject[], value: unknown): ErrorObject[] {
  const anyOfErrors = errors.filter((e) => e.keyword === 'anyOf');
  const anyOfPaths = anyOfErrors.map((e) => e.instancePath);
  if (anyOfPaths.length) {
    const kept = errors.filter((e) => {
      if (e.keyword === 'anyOf') return false;
      const path = anyOfPaths.find((p) => e.instancePath === p || e.instancePath.startsWith(`${p}/`));
      if (path === undefined) return true;
      const entry = segments(path).reduce<any>((node, segment) => node?.[segment], value);
      // An object: its own faults, not the name branch's "must be string". A name: the name branch's only.
      if (entry !== null && typeof entry === 'object' && !Array.isArray(entry)) return !(e.instancePath === path && e.keyword === 'type');
      return e.instancePath === path && !(e.keyword === 'type' && e.params.type === 'object');
    });
    // Never nothing: an entry none of whose faults is kept is told by the anyOf itself.
    const told = (p: string) => kept.some((e) => e.instancePath === p || e.instancePath.startsWith(`${p}/`));
    errors = [...kept, ...anyOfErrors.filter((e) => !told(e.instancePath))];
  }
  const oneOfPaths = errors.filter((e) => e.keyword === 'oneOf').map((e) => e.instancePath);
  return errors.filter(
    (e) =>
      e.keyword === 'oneOf' ||
      !oneOfPaths.some((p) => e.instancePath === p || (e.schemaPath.includes('/oneOf/') && e.instancePath.startsWith(p))) ||
      e.keyword === 'additionalProperties' ||
      e.keyword === 'type',
  );
}

/** A YAML file's value, and a way to point at any place in it ("file:line:col path"). */
export function parseLocatedYaml(text: string, file: string): { value: unknown; locate: SourcedDefinition['locate'] } {
  const lineCounter = new LineCounter();
  const doc = parseDocument(text, { lineCounter, prettyErrors: false });
  const locate = (at: Array<string | number>, options: { key?: boolean } = {}) => {
    const { line, col } = lineCounter.linePos(offsetOf(doc, at, Boolean(options.key)));
    return `${file}:${line}:${col} ${at.length ? at.join('.') : '(top level)'}`;
  };
  if (doc.errors.length) {
    throw new DefinitionError(doc.errors.map((e) => {
      const { line, col } = lineCounter.linePos(e.pos[0]);
      return `${file}:${line}:${col} YAML syntax: ${e.message.split('\n')[0]}`;
    }));
  }
  return { value: doc.toJS(), locate };
}

/** One line per schema fault, each pointing into the file. */
export function schemaProblems(
  errors: ErrorObject[],
  value: unknown,
  locate: SourcedDefinition['locate'],
  topLevel = 'must be a YAML mapping with at least name, scope, permissions and fields',
): string[] {
  const problems = relevant(errors, value).map((e) => {
    const { at, key, fault } = describe(e, value, topLevel);
    return `${locate(at, { key })}: ${fault}`;
  });
  return [...new Set(problems)];
}

export function parseDefinition(text: string, file: string): SourcedDefinition {
  const { value, locate } = parseLocatedYaml(text, file);
  if (!validateFormat(value)) throw new DefinitionError(schemaProblems(validateFormat.errors ?? [], value, locate));
  return { definition: value as ResourceDefinition, file, locate };
}

export function loadDefinitionFile(file: string): SourcedDefinition {
  return parseDefinition(readFileSync(file, 'utf8'), path.relative(process.cwd(), file) || file);
}

/** Every *.yaml in a folder (not its subfolders), sorted by name; the problems of every file are reported together. */
export function loadDefinitionDir(dir: string): SourcedDefinition[] {
  const problems: string[] = [];
  const sources: SourcedDefinition[] = [];
  for (const f of readdirSync(dir).filter((f) => f.endsWith('.yaml') && !NOT_DEFINITIONS.has(f)).sort()) {
    try {
      sources.push(loadDefinitionFile(path.join(dir, f)));
    } catch (err) {
      if (!(err instanceof DefinitionError)) throw err;
      problems.push(...err.problems);
    }
  }
  if (problems.length) throw new DefinitionError(problems);
  return sources;
}
