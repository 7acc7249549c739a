// The time logs a report counts, as two SQL common table expressions every report starts from:
//   clipped: the caller's finished logs that overlap the range, cut to it ([start, end)), with the
//            filters applied; tenant and owner rule come from the time-log model's scoped();
//   pieces:  each clipped log split at UTC day or ISO week boundaries (or left whole), with its
//            whole seconds in that piece. A running log (no stoppedAt) is never counted.
// A piece's seconds are counted from the log's own start, as the generated duration column floors
// the whole span: floor(seconds from startedAt to the piece's end) − floor(seconds from startedAt
// to the piece's start). The pieces of a log therefore add up to its duration exactly, whatever
// its fractions of a second (10:00:00.600 → 10:00:01.400 is 0 s, not 1; flooring each bound to
// the second on its own would count it). Pieces of 0 s are left out.
import type { Knex } from 'knex';
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

/**
 * The clipped logs: one row per log; t0 (the log's start), s and e as UTC timestamps without zone.
 * The log's employee (and that employee's organization) and its project are joined on the log's
 * own tenant, and ids are read and filtered through those rows, never from the log's columns
 * alone: a corrupted log naming another tenant's employee counts nowhere (in every report alike,
 * since they all start here), one naming another tenant's project counts as time without a
 * project, and no other tenant's id ever reaches an answer or matches a filter.
 */
function clippedLogs({ db, caller, timeLog, employee, project, parameters }: ReportContext, money: boolean): Knex.QueryBuilder {
  const { start, end } = parameters;
  const from = start === undefined ? db.raw('tl."startedAt"') : db.raw('greatest(tl."startedAt", ?::timestamptz)', [start]);
  const to = end === undefined ? db.raw('tl."stoppedAt"') : db.raw('least(tl."stoppedAt", ?::timestamptz)', [end]);
  const query = timeLog.model
    .scoped(caller, db)
    .alias('tl')
    .select('em.id as employeeId', 'op.id as projectId', 'tl.isBillable')
    .select(db.raw(`tl."startedAt" at time zone 'UTC' as t0`))
    .select(db.raw(`? at time zone 'UTC' as s`, [from]))
    .select(db.raw(`? at time zone 'UTC' as e`, [to]))
    .join(`${employee.model.tableName} as em`, (on) => on.on('em.id', 'tl.employeeId').andOn('em.tenantId', 'tl.tenantId'))
    .join('organization as og', (on) => on.on('og.id', 'em.organizationId').andOn('og.tenantId', 'em.tenantId'))
    .leftJoin(`${project.model.tableName} as op`, (on) => on.on('op.id', 'tl.projectId').andOn('op.tenantId', 'tl.tenantId'))
    .whereNotNull('tl.stoppedAt');
  if (start !== undefined) query.where('tl.stoppedAt', '>', start);
  if (end !== undefined) query.where('tl.startedAt', '<', end);
  const { organizationId } = parameters;
  if (organizationId) {
    // Only an organization of the caller's tenant matches, whatever a corrupted log says.
    query.where('tl.organizationId', organizationId).whereExists((lo) =>
      lo.select(db.raw('1')).from('organization as lo').where('lo.id', organizationId).where('lo.tenantId', caller.tenantId),
    );
  }
  if (parameters.employeeIds) query.whereIn('em.id', parameters.employeeIds);
  if (parameters.projectIds) query.whereIn('op.id', parameters.projectIds);
  if (money) query.select(db.raw('coalesce(em."billRateCurrency", og.currency) as currency'), db.raw('em."billRateValue" as rate'));
  // A knex builder: bound into the raw text of the report's statement (piecesSource).
  return query.toKnexQuery();
}

/** Whole seconds of the part of log c between two instants of it, counted from its start. */
const secondsBetween = (from: string, to: string) =>
  `(floor(extract(epoch from ${to} - c.t0)) - floor(extract(epoch from ${from} - c.t0)))::bigint`;

/** `with clipped as (…), pieces as (…)` and its bindings: the start of every report's statement. */
export function piecesSource(context: ReportContext, options: SourceOptions = {}): { sql: string; bindings: unknown[] } {
  const clipped = clippedLogs(context, Boolean(options.money));
  if (!options.bucket) {
    return {
      sql: `with clipped as ?, pieces as (
        select * from (select c.*, ${secondsBetween('c.s', 'c.e')} as seconds from clipped c) as x where x.seconds > 0
      )`,
      bindings: [clipped],
    };
  }
  const { unit, step } = BUCKETS[options.bucket];
  // Buckets from the one holding the clipped start to the one holding its end; each piece is the
  // overlap of the log with its bucket.
  return {
    sql: `with clipped as ?, pieces as (
      select * from (
        select c.*, b.bucket, ${secondsBetween('greatest(c.s, b.bucket)', 'least(c.e, b.bucket + ?::interval)')} as seconds
        from clipped c
        cross join lateral generate_series(date_trunc(?, c.s), c.e, ?::interval) as b(bucket)
      ) as x where x.seconds > 0
    )`,
    bindings: [clipped, step, unit, step],
  };
}
