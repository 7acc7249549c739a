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

/** The resources the reports read, from the registry: their tables, scopes and read permissions. */
export interface ReportResources {
  timeLog: CompiledResource;
  employee: CompiledResource;
  project: CompiledResource;
}

/** Resources whose read permission a report may need besides the time logs'. */
export type ReadResource = 'employee' | 'project';

/** What a report's SQL needs: the database, who asks (tenant and owner rule), the resources it reads. */
export interface ReportContext extends ReportResources {
  db: Knex;
  caller: Caller;
  parameters: ReportParameters;
}

export interface ReportDefinition {
  slug: string;
  name: string;
  description: string;
  /**
   * Every report is time logs summed up, so it always needs the time-log read permission; these
   * resources' read permissions are needed too (employee: bill rates; project: budgets).
   */
  reads: readonly ReadResource[];
  /** Further permissions of config/roles.yaml the role must hold (INVOICES_VIEW for money). */
  permissions: readonly string[];
  groupBy: readonly GroupBy[];
  defaultGroupBy: GroupBy;
  period: PeriodRule;
  /** The answer's OpenAPI schema (components are not needed: it is written inline). */
  schema: Record<string, unknown>;
  run(context: ReportContext): Promise<Record<string, unknown>>;
}

/** Every report takes the same parameters (a report may narrow groupBy). */
export const PARAMETERS = ['startDate', 'endDate', 'organizationId', 'employeeId', 'projectId', 'groupBy'] as const;
