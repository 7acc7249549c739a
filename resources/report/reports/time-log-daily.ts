import { lastDays } from '../period.js';
import { timeLogReport } from './time-log.js';

export const timeLogDaily = timeLogReport({
  slug: 'time-log-daily',
  name: 'Time per day',
  description:
    'Tracked and billable seconds per UTC day, employee and project. A log crossing midnight counts on each day for its part of it; ' +
    'only the part of a log inside the range counts; a running log counts nothing.',
  bucket: 'day',
  period: lastDays(7, 366),
});
