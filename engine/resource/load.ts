// Reading definitions: YAML → plain objects checked against the format's JSON Schema.
// Every problem names the file, the line, the path inside the file and the fault, and stops start-up.
import { readFileSync, readdirSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { Ajv, type ErrorObject } from 'ajv';
import { LineCounter, parseDocument, isNode } from 'yaml';
import type { ResourceDefinition } from './types.js';

export class DefinitionError extends Error {
  constructor(readonly problems: string[]) {
    super(`Invalid resource definition:\n  ${problems.join('\n  ')}`);
  }
}

/** A loaded definition keeps its source so later checks can point into it. */
export interface SourcedDefinition {
  definition: ResourceDefinition;
  file: string;
  locate(pathInFile: Array<string | number>): string;
}

const schemaFile = fileURLToPath(new URL('./definition.schema.json', import.meta.url));
const ajv = new Ajv({ allErrors: true, strict: true, strictRequired: false, allowUnionTypes: true });
const validateFormat = ajv.compile(JSON.parse(readFileSync(schemaFile, 'utf8')));

/** Files in a resources folder that are configuration, not resource definitions. */
const NOT_DEFINITIONS = new Set(['roles.yaml', 'limits.yaml']);

function segments(instancePath: string): string[] {
  return instancePath.split('/').slice(1).map((s) => s.replace(/~1/g, '/').replace(/~0/g, '~'));
}

function describe(error: ErrorObject): { at: string[]; fault: string } {
  const at = segments(error.instancePath);
  const p = error.params as Record<string, any>;
  switch (error.keyword) {
    case 'additionalProperties':
      return { at: [...at, p.additionalProperty], fault: 'is not a known property' };
    case 'required':
      return { at, fault: `is missing the required property "${p.missingProperty}"` };
    case 'enum':
      return { at, fault: `must be one of: ${p.allowedValues.join(', ')}` };
    case 'oneOf':
      return { at, fault: 'a relation needs exactly one of: belongsTo with via, hasMany with via, manyToMany with through' };
    case 'propertyNames':
      return { at: [...at, p.propertyName], fault: 'is not a valid name (letters and digits, starting with a letter)' };
    default:
      return { at, fault: error.message ?? 'is invalid' };
  }
}

/** Ajv reports every branch of a failed oneOf; keep the oneOf itself and drop the branch noise. */
function relevant(errors: ErrorObject[]): ErrorObject[] {
  const oneOfPaths = errors.filter((e) => e.keyword === 'oneOf').map((e) => e.instancePath);
  return errors.filter(
    (e) =>
      e.keyword === 'oneOf' ||
      !oneOfPaths.some((p) => e.instancePath === p || (e.schemaPath.includes('/oneOf/') && e.instancePath.startsWith(p))) ||
      e.keyword === 'additionalProperties' ||
      e.keyword === 'type',
  );
}

export function parseDefinition(text: string, file: string): SourcedDefinition {
  const lineCounter = new LineCounter();
  const doc = parseDocument(text, { lineCounter, prettyErrors: false });
  const locate = (at: Array<string | number>) => {
    let node: unknown = doc.getIn(at, true);
    for (let up = at.length; !isNode(node) && up > 0; up--) node = doc.getIn(at.slice(0, up - 1), true);
    const offset = isNode(node) && node.range ? node.range[0] : 0;
    const { line, col } = lineCounter.linePos(offset);
    return `${file}:${line}:${col} ${at.length ? at.join('.') : '(top level)'}`;
  };
  if (doc.errors.length) {
    throw new DefinitionError(doc.errors.map((e) => {
      const { line, col } = lineCounter.linePos(e.pos[0]);
      return `${file}:${line}:${col} YAML syntax: ${e.message.split('\n')[0]}`;
    }));
  }
  const value = doc.toJS();
  if (!validateFormat(value)) {
    throw new DefinitionError(relevant(validateFormat.errors ?? []).map((e) => {
      const { at, fault } = describe(e);
      return `${locate(at)}: ${fault}`;
    }));
  }
  return { definition: value as ResourceDefinition, file, locate };
}

export function loadDefinitionFile(file: string): SourcedDefinition {
  return parseDefinition(readFileSync(file, 'utf8'), path.relative(process.cwd(), file) || file);
}

/** Every *.yaml in a folder (not its subfolders), sorted by name. */
export function loadDefinitionDir(dir: string): SourcedDefinition[] {
  return readdirSync(dir)
    .filter((f) => f.endsWith('.yaml') && !NOT_DEFINITIONS.has(f))
    .sort()
    .map((f) => loadDefinitionFile(path.join(dir, f)));
}
