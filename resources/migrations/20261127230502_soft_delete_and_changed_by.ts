// 20261127230502_soft_delete_and_changed_by: written by `npm run db:migration` for these differences between the
// definitions and the migrated schema (read it, and adjust onDelete and lengths where the
// defaults chosen do not fit):
//   - candidate.createdById is missing; changedBy needs uuid
//   - candidate.updatedById is missing; changedBy needs uuid
//   - candidate.deletedAt is missing; softDelete needs timestamp with time zone
//   - candidate.deletedById is missing; softDelete needs uuid
//   - invoice.createdById is missing; changedBy needs uuid
//   - invoice.updatedById is missing; changedBy needs uuid
//   - invoice.deletedAt is missing; softDelete needs timestamp with time zone
//   - invoice.deletedById is missing; softDelete needs uuid
//   - invoice has the unique constraint invoice_organizationid_invoicenumber_unique on (organizationId, invoiceNumber) over deleted records too; softDelete needs it over the records not deleted only
//   - invoice has no unique index on (organizationId, invoiceNumber) where deletedAt is null; unique[0] over the records not deleted (softDelete) needs one
//   - task.createdById is missing; changedBy needs uuid
//   - task.updatedById is missing; changedBy needs uuid
//   - task.deletedAt is missing; softDelete needs timestamp with time zone
//   - task.deletedById is missing; softDelete needs uuid
//   - time_log.createdById is missing; changedBy needs uuid
//   - time_log.updatedById is missing; changedBy needs uuid
//   - timesheet.createdById is missing; changedBy needs uuid
//   - timesheet.updatedById is missing; changedBy needs uuid
import type { Knex } from 'knex';
import { uniqueWhereNull } from '../migration-helpers.js';

export async function up(knex: Knex) {
  await knex.schema.alterTable('candidate', (t) => {
    t.uuid('createdById');
    t.uuid('updatedById');
    t.timestamp('deletedAt', { useTz: true });
    t.uuid('deletedById');
  });
  await knex.raw('alter table ?? drop constraint ??', ['invoice', 'invoice_organizationid_invoicenumber_unique']);
  await knex.schema.alterTable('invoice', (t) => {
    t.uuid('createdById');
    t.uuid('updatedById');
    t.timestamp('deletedAt', { useTz: true });
    t.uuid('deletedById');
    uniqueWhereNull(knex, t, 'invoice', ['organizationId', 'invoiceNumber'], ['deletedAt']);
  });
  await knex.schema.alterTable('task', (t) => {
    t.uuid('createdById');
    t.uuid('updatedById');
    t.timestamp('deletedAt', { useTz: true });
    t.uuid('deletedById');
  });
  await knex.schema.alterTable('time_log', (t) => {
    t.uuid('createdById');
    t.uuid('updatedById');
  });
  await knex.schema.alterTable('timesheet', (t) => {
    t.uuid('createdById');
    t.uuid('updatedById');
  });
}

export async function down(knex: Knex) {
  await knex.schema.alterTable('timesheet', (t) => {
    t.dropColumn('updatedById');
    t.dropColumn('createdById');
  });
  await knex.schema.alterTable('time_log', (t) => {
    t.dropColumn('updatedById');
    t.dropColumn('createdById');
  });
  await knex.schema.alterTable('task', (t) => {
    t.dropColumn('deletedById');
    t.dropColumn('deletedAt');
    t.dropColumn('updatedById');
    t.dropColumn('createdById');
  });
  await knex.schema.alterTable('invoice', (t) => {
    t.dropIndex([], 'invoice_organizationid_invoicenumber_where_deletedat_null');
    t.dropColumn('deletedById');
    t.dropColumn('deletedAt');
    t.dropColumn('updatedById');
    t.dropColumn('createdById');
  });
  await knex.schema.alterTable('invoice', (t) => t.unique(['organizationId', 'invoiceNumber'], { indexName: 'invoice_organizationid_invoicenumber_unique' })); // fails while a deleted row shares these values with a live one: remove it first
  await knex.schema.alterTable('candidate', (t) => {
    t.dropColumn('deletedById');
    t.dropColumn('deletedAt');
    t.dropColumn('updatedById');
    t.dropColumn('createdById');
  });
}
