// What the SQL-builder unit tests (test/engine/sql-*.test.ts) share: a few resources compiled by
// the engine's own loader and compiler from inline definitions, list plans made by the engine's
// own parser, the callers, and a connection that records statements instead of running them.
// No database: these tests pin the text and the bound values a plan becomes.
import type { Knex } from 'knex';
import type { Caller } from '../../engine/caller.js';
import { compileDefinitions } from '../../engine/resource/compile.js';
import type { CompiledResource } from '../../engine/resource/compiled.js';
import { parseListQuery, type ListQuery } from '../../engine/resource/list-query.js';
import { parseDefinition } from '../../engine/resource/load.js';
import type { Statement } from '../../engine/resource/sql/runner.js';

export const TENANT = '7e1a0000-0000-4000-8000-000000000001';
export const EMPLOYEE = '7e1a0000-0000-4000-8000-0000000000e1';

/**
 * project: tenant-scoped, searchable, a hidden column, notes below it.
 * work-note: an owner field (authorId), a date range, labels as its tag filter, camelCase columns.
 * label: of an organization or of none (organizationId may be filtered on null).
 * team: the organization root the labels belong to.
 */
export const DEFINITIONS: Record<string, string> = {
  project: `
name: project
scope: tenant
permissions: { read: authenticated, write: PROJECT_EDIT }
fields:
  name: { type: string, required: true }
  code: { type: string }
  secret: { type: string, hidden: true }
relations:
  notes: { hasMany: work-note, via: projectId }
filters: [name]
sort: [name]
search: [name, code]
`,
  'work-note': `
name: work-note
scope: tenant
owner: authorId
permissions: { read: authenticated, write: authenticated }
fields:
  authorId: { type: uuid, required: true }
  projectId: { type: uuid, references: project }
  minutes: { type: integer }
  writtenOn: { type: date }
relations:
  project: { belongsTo: project, via: projectId }
  labels: { manyToMany: label, through: { table: label_work_note, from: workNoteId, to: labelId }, writable: true }
filters: [minutes, projectId]
sort: [minutes]
dateRange: writtenOn
tagFilter: labels
maxTake: 20
`,
  label: `
name: label
scope: organization
organizationOptional: true
permissions: { read: authenticated, write: authenticated }
fields:
  name: { type: string }
filters: [name]
`,
  team: `
name: team
scope: tenant
organizationRoot: {}
permissions: { read: authenticated, write: authenticated }
fields:
  name: { type: string }
`,
};

/** Definitions (name → YAML text) compiled as the app compiles its resource folder. */
export function compile(definitions: Record<string, string>) {
  const sources = Object.entries(definitions).map(([name, text]) => parseDefinition(text, `inline/${name}.yaml`));
  return compileDefinitions(sources, { permissions: new Set(['PROJECT_EDIT']), owner: { role: 'EMPLOYEE', claim: 'employeeId', ownerIs: 'its own employee' } });
}

const registry = compile(DEFINITIONS);

export function resource(name: string): CompiledResource {
  const found = registry.get(name);
  if (!found) throw new Error(`no resource ${name} among the inline definitions`);
  return found;
}

/**
 * Every caller of these tests, made here only (the Caller's shape is the engine's to change: one
 * edit here follows it). `ownerScoped`: the role the owner rule applies to, limited to the records
 * whose owner field holds its employee id; otherwise a role that sees its whole tenant.
 */
export function callerOf({ ownerScoped = false, employeeId = EMPLOYEE }: { ownerScoped?: boolean; employeeId?: string | null } = {}): Caller {
  return {
    userId: '7e1a0000-0000-4000-8000-0000000000a1',
    tenantId: TENANT,
    role: ownerScoped ? 'EMPLOYEE' : 'ADMIN',
    claims: { employeeId: employeeId ?? undefined },
    permissions: new Set(),
  };
}

/** A list plan from list parameters, as a request's query string or search body gives them. */
export const plan = (of: CompiledResource, parameters: Record<string, unknown> = {}): ListQuery => parseListQuery(of, parameters, TENANT);

/**
 * Stands in for knex where a builder runs its statements itself (relations, counts): hands out a
 * connection that records each statement and answers the rows `answer` gives for it.
 */
export function recordingDatabase(answer: (statement: Statement) => Array<Record<string, unknown>> = () => []) {
  const statements: Statement[] = [];
  const connection = {
    async query(text: string, values: unknown[]) {
      const statement = { text, values };
      statements.push(statement);
      return { rows: answer(statement) };
    },
  };
  const client = { acquireConnection: async () => connection, releaseConnection: async () => {}, emit: () => {} };
  return { db: { client } as unknown as Knex, statements };
}

/** A work note's version: its row's xmin, hashed (engine/resource/sql/version.ts; no salt outside an app). */
export const NOTE_VERSION = 'to_hex(hashtextextended("work_note".xmin::text, 0))';
