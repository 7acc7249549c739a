// Candidates with their sources, interviews and skills; invoices with their items and tags.
import type { Knex } from 'knex';
import { atLeastRule, joinTable, recordColumns } from '../migration-helpers.js';

export async function up(knex: Knex) {
  await knex.schema.createTable('candidate_source', (t) => {
    recordColumns(knex, t, 'organization');
    t.string('name', 255).notNullable();
  });
  await knex.schema.createTable('candidate', (t) => {
    recordColumns(knex, t, 'organization');
    // A user who is a candidate cannot be deleted from under the application.
    t.uuid('userId').notNullable().references('id').inTable('user').onDelete('RESTRICT');
    t.string('status', 16).notNullable().defaultTo('APPLIED');
    t.timestamp('appliedDate', { useTz: true });
    t.timestamp('hiredDate', { useTz: true });
    t.timestamp('rejectDate', { useTz: true });
    t.string('candidateLevel', 255);
    t.string('cvUrl', 2048);
    t.double('rating');
    // Deleting a source leaves its candidates in place, with no source.
    t.uuid('sourceId').references('id').inTable('candidate_source').onDelete('SET NULL');
    t.index(['userId']);
    t.index(['sourceId']);
  });
  await knex.schema.createTable('candidate_interview', (t) => {
    recordColumns(knex, t, 'organization');
    // An interview exists only for its candidate.
    t.uuid('candidateId').notNullable().references('id').inTable('candidate').onDelete('CASCADE');
    t.string('title', 255).notNullable();
    t.timestamp('startTime', { useTz: true });
    t.timestamp('endTime', { useTz: true });
    t.string('location', 255);
    t.text('note');
    t.boolean('isArchived').notNullable().defaultTo(false);
    t.index(['candidateId']);
    atLeastRule(t, 'candidate_interview', 'endTime', 'startTime');
  });
  await joinTable(knex, 'candidate_skill', ['candidateId', 'candidate'], ['skillId', 'skill']);
}

export async function down(knex: Knex) {
  for (const table of ['candidate_skill', 'candidate_interview', 'candidate', 'candidate_source']) {
    await knex.schema.dropTableIfExists(table);
  }
}
