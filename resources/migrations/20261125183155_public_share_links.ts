// Share links of invoices and estimates (resources/public-share/): an estimate's answer from its
// customer, and the links themselves. Only a SHA-256 of a link's token is kept (the token is shown
// once, to whoever created the link), with its expiry and when it was revoked; a revoked link stays
// as a record of who shared what.
import type { Knex } from 'knex';
import { recordColumns } from '../migration-helpers.js';

export async function up(knex: Knex) {
  await knex.schema.alterTable('invoice', (t) => {
    t.string('estimateStatus', 16);
    t.timestamp('estimateDecidedAt', { useTz: true });
  });
  await knex.schema.createTable('invoice_share_link', (t) => {
    recordColumns(knex, t, 'tenant');
    // A link exists only for its invoice.
    t.uuid('invoiceId').notNullable().references('id').inTable('invoice').onDelete('CASCADE');
    t.string('tokenHash', 64).notNullable().unique();
    t.timestamp('expiresAt', { useTz: true }).notNullable();
    t.timestamp('revokedAt', { useTz: true });
    // Who shared it; the link outlives a deleted user.
    t.uuid('createdById').references('id').inTable('user').onDelete('SET NULL');
    // An invoice's links, newest first.
    t.index(['invoiceId', 'createdAt']);
  });
}

export async function down(knex: Knex) {
  await knex.schema.dropTableIfExists('invoice_share_link');
  await knex.schema.alterTable('invoice', (t) => {
    t.dropColumn('estimateDecidedAt');
    t.dropColumn('estimateStatus');
  });
}
