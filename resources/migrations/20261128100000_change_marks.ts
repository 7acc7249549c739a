// Change marks (engine/db/change-marks.ts): every resource table's writes, whoever makes them,
// leave a mark that a list reads in its own snapshot, so that a kept total is answered only while
// the table has not changed (engine/resource/total-cache.ts).
import type { Knex } from 'knex';
import { createChangeMarks, dropChangeMarks, markChanges, unmarkChanges } from '../migration-helpers.js';

const TABLES = [
  'candidate', 'candidate_interview', 'candidate_source', 'comment', 'contact', 'daily_plan', 'employee', 'entity_subscription',
  'event_type', 'image_asset', 'invoice', 'invoice_item', 'organization', 'organization_contact', 'organization_project',
  'organization_sprint', 'organization_team', 'role', 'screening_task', 'skill', 'tag', 'task', 'time_log', 'time_off_request',
  'time_slot', 'timesheet', 'user',
];

export async function up(knex: Knex) {
  await createChangeMarks(knex);
  for (const table of TABLES) await markChanges(knex, table);
}

export async function down(knex: Knex) {
  for (const table of TABLES) await unmarkChanges(knex, table);
  await dropChangeMarks(knex);
}
