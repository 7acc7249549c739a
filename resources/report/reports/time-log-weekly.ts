import { lastWeeks } from '../period.js';
import { timeLogReport } from './time-log.js';

export const timeLogWeekly = timeLogReport({
  slug: 'time-log-weekly',
  name: 'Time per week',
  description:
    'Tracked and billable seconds per ISO week (Monday 00:00 UTC, shown as the Monday), employee and project. A log crossing ' +
    'a week boundary counts in each week for its part of it; only the part of a log inside the range counts; a running log counts nothing.',
  bucket: 'week',
  period: lastWeeks(4, 371),
});
