// 20261125184923_time_log_tags: time logs get tags, as in Ever Gauzy (written on create and
// update, loaded with relations[]=tags, filtered with tags[]).
// Written by `npm run db:migration` for this difference:
//   - table tag_time_log is missing; relations.tags of time-log (resources/time-log.yaml) needs it
import type { Knex } from 'knex';
import { joinTable } from '../migration-helpers.js';

export async function up(knex: Knex) {
  await joinTable(knex, 'tag_time_log', ['timeLogId', 'time_log'], ['tagId', 'tag']);
}

export async function down(knex: Knex) {
  await knex.schema.dropTableIfExists('tag_time_log');
}
