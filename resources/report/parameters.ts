// The query string of GET /api/report/{slug} → ReportParameters, checked like list parameters:
// the same parser and limits (parseQueryString), the same date rules and messages (the list
// parser reads startDate/endDate), every problem collected into one 400.
import { badRequest, HttpError } from '../../engine/errors.js';
import { parameterLabel } from '../../engine/http/context.js';
import { isPlainObject } from '../../engine/objects.js';
import type { CompiledResource } from '../../engine/resource/compiled.js';
import { LATEST_INSTANT, UUID_PATTERN } from '../../engine/resource/fields.js';
import { parseListQuery } from '../../engine/resource/list-query.js';
import { PARAMETERS, type ReportDefinition, type ReportParameters } from './definition.js';
import { DAY_MS, type Range } from './period.js';

/** At most this many ids in employeeId[] or projectId[]. */
export const MAX_IDS = 100;

/** undefined when repeated or nested (the problem is recorded). */
function single(name: string, raw: unknown, problems: string[]): unknown {
  if (Array.isArray(raw) || isPlainObject(raw)) {
    problems.push(`${name} must be a single value`);
    return undefined;
  }
  return raw;
}

function uuid(name: string, raw: unknown, problems: string[]): string | undefined {
  const value = single(name, raw, problems);
  if (value === undefined) return undefined;
  if (typeof value === 'string' && UUID_PATTERN.test(value)) return value.toLowerCase();
  problems.push(`${name} must be a UUID`);
  return undefined;
}

/** employeeId=a, employeeId=a&employeeId=b, employeeId[]=a and employeeId[0]=a all become a list (duplicates dropped). */
function uuidList(name: string, raw: unknown, problems: string[]): string[] | undefined {
  if (raw === undefined) return undefined;
  if (isPlainObject(raw)) {
    // employeeId[x]=…: named keys are not a list (qs turns only small indexes into an array).
    problems.push(`${name} must be a list: ${name}=…&${name}=…, ${name}[]=… or ${name}[0]=…`);
    return undefined;
  }
  const values = Array.isArray(raw) ? raw : [raw];
  if (values.length > MAX_IDS) {
    problems.push(`${name} must contain no more than ${MAX_IDS} elements`);
    return undefined;
  }
  if (!values.length || !values.every((v) => typeof v === 'string' && UUID_PATTERN.test(v))) {
    problems.push(`each value in ${name} must be a UUID`);
    return undefined;
  }
  return [...new Set(values.map((v) => (v as string).toLowerCase()))];
}

/** The list parser's reading of startDate/endDate (messages, date-only end = whole day, order check). */
function readDates(timeLog: CompiledResource, input: Record<string, unknown>, tenantId: string, problems: string[]): Range {
  const dates: Record<string, unknown> = {};
  if (input.startDate !== undefined) dates.startDate = input.startDate;
  if (input.endDate !== undefined) dates.endDate = input.endDate;
  try {
    const query = parseListQuery(timeLog, dates, tenantId);
    // The list reads a date-only 9999-12-31 as no bound (its next midnight is not storable); here
    // it is that midnight, so a start derived from it is a whole number of days before it, and
    // effectiveRange then stops the range at the last storable instant.
    const end = query.endDate !== undefined ? Date.parse(query.endDate.at) : input.endDate !== undefined ? LATEST_INSTANT + 1 : undefined;
    return { start: query.startDate === undefined ? undefined : Date.parse(query.startDate), end };
  } catch (err) {
    if (!(err instanceof HttpError) || err.status !== 400) throw err;
    problems.push(...(Array.isArray(err.messages) ? err.messages : [err.messages]));
    return {};
  }
}

/** Fills absent bounds from the report's period rule, then checks the span. */
function effectiveRange(report: ReportDefinition, given: Range, input: Record<string, unknown>, now: number, problems: string[]): Range {
  const hasStart = input.startDate !== undefined;
  const hasEnd = input.endDate !== undefined;
  let { start, end } = given;
  if (!hasStart && !hasEnd) ({ start, end } = report.period.defaults(now));
  else if (!hasEnd && start !== undefined) end = report.period.endFrom(start);
  else if (!hasStart && end !== undefined) start = report.period.startFrom(end);
  // A week after 9999-12-30, or the end of 9999-12-31, is past what the database stores: the range
  // stops at the last instant it does (exclusive, so the very last millisecond is not counted).
  if (end !== undefined && end > LATEST_INSTANT) end = LATEST_INSTANT;
  const max = report.period.maxDays;
  if (max !== undefined && (start === undefined || end === undefined || end - start > max * DAY_MS)) {
    problems.push(`the range from startDate to endDate must not be longer than ${max} days`);
  }
  return { start, end };
}

export function parseReportParameters(
  report: ReportDefinition,
  input: Record<string, unknown>,
  timeLog: CompiledResource,
  tenantId: string,
  now = Date.now(),
): ReportParameters {
  const problems: string[] = [];
  for (const key of Object.keys(input)) {
    if (!(PARAMETERS as readonly string[]).includes(key)) {
      problems.push(`${parameterLabel(key)} is not a supported parameter of report ${report.slug}; supported: ${PARAMETERS.join(', ')}`);
    }
  }
  const before = problems.length;
  const given = readDates(timeLog, input, tenantId, problems);
  // Only a range that parsed is measured: one broken date is one message, not two.
  const range = problems.length > before ? given : effectiveRange(report, given, input, now, problems);
  const parameters: ReportParameters = { groupBy: report.defaultGroupBy };
  if (input.organizationId !== undefined) parameters.organizationId = uuid('organizationId', input.organizationId, problems);
  parameters.employeeIds = uuidList('employeeId', input.employeeId, problems);
  parameters.projectIds = uuidList('projectId', input.projectId, problems);
  if (input.groupBy !== undefined) {
    const groupBy = single('groupBy', input.groupBy, problems);
    if (groupBy !== undefined) {
      if (typeof groupBy === 'string' && (report.groupBy as readonly string[]).includes(groupBy)) parameters.groupBy = groupBy as ReportParameters['groupBy'];
      else problems.push(`groupBy must be one of the following values: ${report.groupBy.join(', ')}`);
    }
  }
  if (problems.length) throw badRequest(problems);
  if (range.start !== undefined) parameters.start = new Date(range.start).toISOString();
  if (range.end !== undefined) parameters.end = new Date(range.end).toISOString();
  return parameters;
}
