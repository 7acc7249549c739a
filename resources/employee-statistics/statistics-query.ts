// The whole statistics answer as one SQL statement: the employee (scoped like a read of it, so no
// row means 404), its time logs and tasks (each scoped the same way, by their models), and twelve
// UTC months with each stopped log's seconds split by its overlap with each month. Every value is bound.
import type { Knex } from 'knex';
import type { Caller } from '../../engine/caller.js';
import type { CompiledResource } from '../../engine/resource/compiled.js';

/** Months in the answer, the current one last. */
export const MONTHS = 12;

export interface MonthSeconds {
  /** YYYY-MM, a UTC calendar month. */
  month: string;
  seconds: number;
}

export interface EmployeeStatistics {
  employeeId: string;
  totalSeconds: number;
  billableSeconds: number;
  timeLogCount: number;
  tasksAssigned: number;
  months: MonthSeconds[];
}

/** The three resources the statistics read, and the task relation that names its members. */
export interface StatisticsSources {
  employee: CompiledResource;
  timeLog: CompiledResource;
  task: CompiledResource;
  /** task_employee: taskId → employeeId. */
  members: { table: string; from: string; to: string };
}

/**
 * Seconds of a log inside [startsAt, endsAt). Counted as the difference of whole seconds since
 * the log began, at the overlap's end and at its start, so a log's shares over consecutive
 * months add up exactly to its duration (floor of the whole span) even with fractional seconds.
 */
const MONTH_SHARE = `
  floor(extract(epoch from (least(l."stoppedAt", m."endsAt") - l."startedAt")))
  - floor(extract(epoch from (greatest(l."startedAt", m."startsAt") - l."startedAt")))`;

/**
 * Month starts as UTC wall-clock timestamps (without zone), so that month arithmetic never
 * depends on the session's time zone; converted to instants only to compare with the logs.
 */
const MONTHS_SQL = `
  select to_char(s.local, 'YYYY-MM') as month,
         s.local at time zone 'UTC' as "startsAt",
         (s.local + interval '1 month') at time zone 'UTC' as "endsAt"
  from (
    select date_trunc('month', ?::timestamptz at time zone 'UTC') - make_interval(months => i) as local
    from generate_series(0, ${MONTHS - 1}) as i
  ) as s`;

const MONTHLY_SQL = `
  select m.month, m."startsAt", coalesce(sum(share.seconds), 0)::float8 as seconds
  from months as m
  left join lateral (
    select ${MONTH_SHARE} as seconds
    from logs as l
    where l."stoppedAt" is not null and l."startedAt" < m."endsAt" and l."stoppedAt" > m."startsAt"
  ) as share on true
  group by m.month, m."startsAt"`;

/** The statistics of one employee as the caller may see them; undefined when it sees no such employee. */
export async function employeeStatistics(
  db: Knex,
  sources: StatisticsSources,
  caller: Caller,
  employeeId: string,
  now: Date,
): Promise<EmployeeStatistics | undefined> {
  const { employee, timeLog, task, members } = sources;
  // Each source is its resource's scoped model query, made a knex builder to be a CTE of the one statement.
  const target = employee.model.scoped(caller, db).alias('e').select('e.id').where('e.id', employeeId).toKnexQuery();
  const logs = timeLog.model
    .scoped(caller, db)
    .alias('l')
    .select('l.startedAt', 'l.stoppedAt', 'l.duration', 'l.isBillable')
    .whereIn('l.employeeId', (target) => target.select('id').from('target'))
    .toKnexQuery();
  const assigned = task.model
    .scoped(caller, db)
    .alias('t')
    .count({ n: '*' })
    .whereExists((te) =>
      te.select(db.raw('1')).from(`${members.table} as te`).whereRaw('?? = ??', [`te.${members.from}`, 't.id']).whereRaw('?? = ??', [`te.${members.to}`, 'target.id']),
    )
    .toKnexQuery();
  // pg answers bigint and numeric as strings: every figure is cast to int or float8 in SQL.
  const row = await db
    .with('target', target)
    .with('logs', logs)
    .with('months', db.raw(MONTHS_SQL, [now.toISOString()]))
    .with('monthly', db.raw(MONTHLY_SQL))
    .select(
      'target.id as employeeId',
      db.raw('(select coalesce(sum(duration), 0)::float8 from logs) as "totalSeconds"'),
      db.raw('(select coalesce(sum(duration) filter (where "isBillable"), 0)::float8 from logs) as "billableSeconds"'),
      db.raw('(select count(*)::int from logs) as "timeLogCount"'),
      db.raw('(?)::int as "tasksAssigned"', [assigned]),
      db.raw(`(select json_agg(json_build_object('month', month, 'seconds', seconds) order by "startsAt") from monthly) as months`),
    )
    .from('target')
    .first();
  if (!row) return undefined;
  // json arrives parsed from pg and PGlite alike; a driver that hands back text is parsed here.
  const months = typeof row.months === 'string' ? JSON.parse(row.months) : row.months;
  return {
    employeeId: row.employeeId,
    totalSeconds: Number(row.totalSeconds),
    billableSeconds: Number(row.billableSeconds),
    timeLogCount: Number(row.timeLogCount),
    tasksAssigned: Number(row.tasksAssigned),
    months: (months as MonthSeconds[]).map(({ month, seconds }) => ({ month, seconds: Number(seconds) })),
  };
}
