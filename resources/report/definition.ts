// What a report is: catalogue data (slug, words, permission, groupings, period rule) and the SQL
// that runs it. One file per report under reports/ fills this in; catalogue.ts lists them.
import type { Knex } from 'knex';
import type { Caller } from '../../engine/caller.js';
import type { CompiledResource } from '../../engine/resource/compiled.js';
import type { PeriodRule } from './period.js';

export const GROUP_BY = ['date', 'employee', 'project'] as const;
export type GroupBy = (typeof GROUP_BY)[number];

/** The validated parameters of one run; ids are lower-case UUIDs, bounds ISO instants. */
export interface ReportParameters {
  /** Inclusive; undefined = unbounded (only a report without a default period has that). */
  start?: string;
  /** Exclusive. */
  end?: string;
  organizationId?: string;
  employeeIds?: string[];
  projectIds?: string[];
  groupBy: GroupBy;
}

/** What a report's SQL needs: the database, who asks (tenant and owner rule), the resources it reads. */
export interface ReportContext {
  db: Knex;
  caller: Caller;
  timeLog: CompiledResource;
  project: CompiledResource;
  parameters: ReportParameters;
}

export interface ReportDefinition {
  slug: string;
  name: string;
  description: string;
  /** A permission of resources/roles.yaml the caller's role must hold. */
  permission: string;
  groupBy: readonly GroupBy[];
  defaultGroupBy: GroupBy;
  period: PeriodRule;
  /** The answer's OpenAPI schema (components are not needed: it is written inline). */
  schema: Record<string, unknown>;
  run(context: ReportContext): Promise<Record<string, unknown>>;
}

/** Every report takes the same parameters (a report may narrow groupBy). */
export const PARAMETERS = ['startDate', 'endDate', 'organizationId', 'employeeId', 'projectId', 'groupBy'] as const;
