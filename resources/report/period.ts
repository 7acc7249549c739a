// The range a report covers when the client leaves startDate or endDate out, and the longest
// range it accepts. All in UTC; the end of a range is exclusive.

const DAY_MS = 86_400_000;

export interface Range {
  start?: number;
  end?: number;
}

export interface PeriodRule {
  /** Said in the catalogue, OpenAPI and docs/modules.md. */
  description: string;
  /** Both bounds absent. */
  defaults(now: number): Range;
  /** Only startDate given: the end that goes with it (undefined: unbounded). */
  endFrom(start: number): number | undefined;
  /** Only endDate given: the start that goes with it. */
  startFrom(end: number): number | undefined;
  /** The longest range, in days, for reports that make a row per day or week. */
  maxDays?: number;
}

const midnight = (ms: number) => Math.floor(ms / DAY_MS) * DAY_MS;

/** The Monday 00:00 UTC of the ISO week holding ms. */
const mondayOf = (ms: number) => midnight(ms) - ((new Date(ms).getUTCDay() + 6) % 7) * DAY_MS;

/** ms moved by n calendar months, the day clamped to the target month's last (Jan 31 + 1 → Feb 28). */
function addMonths(ms: number, n: number): number {
  const d = new Date(ms);
  const first = Date.UTC(d.getUTCFullYear(), d.getUTCMonth() + n, 1);
  const target = new Date(first);
  const lastDay = new Date(Date.UTC(target.getUTCFullYear(), target.getUTCMonth() + 1, 0)).getUTCDate();
  return first + (Math.min(d.getUTCDate(), lastDay) - 1) * DAY_MS + (ms - midnight(ms));
}

/** The last n UTC days, today included; one bound given: n days from or to it. */
export function lastDays(n: number, maxDays: number): PeriodRule {
  const span = n * DAY_MS;
  return {
    description: `Default: the last ${n} UTC days, today included. With only startDate, ${n} days from it; with only endDate, the ${n} days up to it. At most ${maxDays} days.`,
    defaults: (now) => ({ start: midnight(now) + DAY_MS - span, end: midnight(now) + DAY_MS }),
    endFrom: (start) => start + span,
    startFrom: (end) => end - span,
    maxDays,
  };
}

/** The last n ISO weeks, the current one included; one bound given: n weeks from or to it. */
export function lastWeeks(n: number, maxDays: number): PeriodRule {
  const span = n * 7 * DAY_MS;
  return {
    description: `Default: the last ${n} ISO weeks (Monday 00:00 UTC), the current one included. With only startDate, ${n} weeks from it; with only endDate, the ${n} weeks up to it. At most ${maxDays} days.`,
    defaults: (now) => ({ start: mondayOf(now) + 7 * DAY_MS - span, end: mondayOf(now) + 7 * DAY_MS }),
    endFrom: (start) => start + span,
    startFrom: (end) => end - span,
    maxDays,
  };
}

/** The current UTC calendar month; one bound given: one calendar month from or to it. */
export function currentMonth(maxDays: number): PeriodRule {
  return {
    description: `Default: the current UTC calendar month. With only startDate, one calendar month from it; with only endDate, the month up to it. At most ${maxDays} days.`,
    defaults: (now) => {
      const d = new Date(now);
      return { start: Date.UTC(d.getUTCFullYear(), d.getUTCMonth(), 1), end: Date.UTC(d.getUTCFullYear(), d.getUTCMonth() + 1, 1) };
    },
    endFrom: (start) => addMonths(start, 1),
    startFrom: (end) => addMonths(end, -1),
    maxDays,
  };
}

/** Everything ever logged unless bounded; one bound given, the other side stays open. */
export function allTime(): PeriodRule {
  return {
    description: 'Default: all time. With only startDate or only endDate the other side stays open. No maximum.',
    defaults: () => ({}),
    endFrom: () => undefined,
    startFrom: () => undefined,
  };
}

export { DAY_MS };
