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

  await knex.schema.createTable('invoice', (t) => {
    recordColumns(knex, t, 'organization');
    t.integer('invoiceNumber').notNullable();
    t.timestamp('invoiceDate', { useTz: true }).notNullable();
    t.timestamp('dueDate', { useTz: true }).notNullable();
    t.string('currency', 3);
    t.double('discountValue').notNullable().defaultTo(0);
    t.string('discountType', 16);
    t.double('tax');
    t.string('taxType', 16);
    t.double('totalValue');
    t.string('status', 16).notNullable().defaultTo('DRAFT');
    t.boolean('isEstimate').notNullable().defaultTo(false);
    t.text('terms');
    // An issued invoice keeps its issuer and its client: neither can be deleted from under it.
    t.uuid('fromOrganizationId').notNullable().references('id').inTable('organization').onDelete('RESTRICT');
    t.uuid('toContactId').references('id').inTable('organization_contact').onDelete('RESTRICT');
    t.unique(['organizationId', 'invoiceNumber']);
    t.index(['fromOrganizationId']);
    t.index(['toContactId']);
    atLeastRule(t, 'invoice', 'dueDate', 'invoiceDate');
  });
  await knex.schema.createTable('invoice_item', (t) => {
    recordColumns(knex, t, 'organization');
    // An item exists only inside its invoice.
    t.uuid('invoiceId').notNullable().references('id').inTable('invoice').onDelete('CASCADE');
    t.string('description', 1000);
    t.double('quantity').notNullable();
    t.double('price').notNullable();
    t.double('totalValue');
    // What an item bills for may go away; the line stays, unlinked.
    t.uuid('taskId').references('id').inTable('task').onDelete('SET NULL');
    t.uuid('employeeId').references('id').inTable('employee').onDelete('SET NULL');
    t.uuid('projectId').references('id').inTable('organization_project').onDelete('SET NULL');
    t.index(['invoiceId']);
    t.index(['taskId']);
    t.index(['employeeId']);
    t.index(['projectId']);
  });
  await joinTable(knex, 'tag_invoice', ['invoiceId', 'invoice'], ['tagId', 'tag']);
}

export async function down(knex: Knex) {
  for (const table of ['tag_invoice', 'invoice_item', 'invoice', 'candidate_skill', 'candidate_interview', 'candidate', 'candidate_source']) {
    await knex.schema.dropTableIfExists(table);
  }
}
