// The time logs a report counts, as two SQL common table expressions every report starts from:
//   clipped: the caller's finished logs that overlap the range, cut to it ([start, end)), with the
//            filters applied; tenant and owner rule come from the time-log resource's scope();
//   pieces:  each clipped log split at UTC day or ISO week boundaries (or left whole), with its
//            whole seconds in that piece. A running log (no stoppedAt) is never counted.
// Bounds are truncated to the second, so the pieces of one log add up to its seconds exactly.
import type { Knex } from 'knex';
import { scope } from '../../engine/resource/query.js';
import type { ReportContext } from './definition.js';

export type Bucket = 'day' | 'week';

/** date_trunc unit and step of each bucket: bound values, never written into the SQL text. */
const BUCKETS: Record<Bucket, { unit: string; step: string }> = {
  day: { unit: 'day', step: '1 day' },
  week: { unit: 'week', step: '7 days' },
};

export interface SourceOptions {
  bucket?: Bucket;
  /** Adds each log's employee bill rate and currency (the employee's, else its organization's). */
  money?: boolean;
}

/** The clipped logs: one row per log, s and e as UTC timestamps without zone. */
function clippedLogs({ db, caller, timeLog, parameters }: ReportContext, money: boolean): Knex.QueryBuilder {
  const { start, end } = parameters;
  const from = start === undefined ? db.raw('tl."startedAt"') : db.raw('greatest(tl."startedAt", ?::timestamptz)', [start]);
  const to = end === undefined ? db.raw('tl."stoppedAt"') : db.raw('least(tl."stoppedAt", ?::timestamptz)', [end]);
  const query = db
    .select('tl.employeeId', 'tl.projectId', 'tl.isBillable')
    .select(db.raw(`date_trunc('second', ? at time zone 'UTC') as s`, [from]))
    .select(db.raw(`date_trunc('second', ? at time zone 'UTC') as e`, [to]))
    .from('time_log as tl')
    .whereNotNull('tl.stoppedAt');
  scope(query, timeLog, caller, 'tl');
  if (start !== undefined) query.where('tl.stoppedAt', '>', start);
  if (end !== undefined) query.where('tl.startedAt', '<', end);
  if (parameters.organizationId) query.where('tl.organizationId', parameters.organizationId);
  if (parameters.employeeIds) query.whereIn('tl.employeeId', parameters.employeeIds);
  if (parameters.projectIds) query.whereIn('tl.projectId', parameters.projectIds);
  if (money) {
    query
      .join('employee as em', function () {
        this.on('em.id', 'tl.employeeId').andOn('em.tenantId', 'tl.tenantId');
      })
      .join('organization as og', function () {
        this.on('og.id', 'em.organizationId').andOn('og.tenantId', 'em.tenantId');
      })
      .select(db.raw('coalesce(em."billRateCurrency", og.currency) as currency'), db.raw('em."billRateValue" as rate'));
  }
  return query;
}

/** `with clipped as (…), pieces as (…)` and its bindings: the start of every report's statement. */
export function piecesSource(context: ReportContext, options: SourceOptions = {}): { sql: string; bindings: unknown[] } {
  const clipped = clippedLogs(context, Boolean(options.money));
  if (!options.bucket) {
    return {
      sql: `with clipped as ?, pieces as (
        select c.*, extract(epoch from c.e - c.s)::bigint as seconds from clipped c where c.e > c.s
      )`,
      bindings: [clipped],
    };
  }
  const { unit, step } = BUCKETS[options.bucket];
  return {
    sql: `with clipped as ?, pieces as (
      select c.*, b.bucket,
        extract(epoch from least(c.e, b.bucket + ?::interval) - greatest(c.s, b.bucket))::bigint as seconds
      from clipped c
      cross join lateral generate_series(date_trunc(?, c.s), c.e, ?::interval) as b(bucket)
      where least(c.e, b.bucket + ?::interval) > greatest(c.s, b.bucket)
    )`,
    bindings: [clipped, step, unit, step, step],
  };
}
