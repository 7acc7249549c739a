// Six-digit codes mailed to prove an address: verifying the account's email, and changing it.
// Only a keyed hash of the code is stored; one live code per user and purpose (a new one replaces it).
import type { Knex } from 'knex';

export async function up(knex: Knex) {
  await knex.schema.createTable('email_code', (t) => {
    t.uuid('id').primary().defaultTo(knex.raw('gen_random_uuid()'));
    t.uuid('userId').notNullable().references('id').inTable('user').onDelete('CASCADE');
    t.string('purpose', 32).notNullable();
    /** The new address, for an email change; null for verifying the current one. */
    t.string('email', 254);
    t.string('codeHash', 64).notNullable();
    t.timestamp('expiresAt', { useTz: true }).notNullable();
    /** Tries made against this code, right or wrong: it dies when they reach the limit. */
    t.integer('attempts').notNullable().defaultTo(0);
    t.timestamp('createdAt', { useTz: true }).notNullable().defaultTo(knex.fn.now());
    t.unique(['userId', 'purpose']);
  });
}

export async function down(knex: Knex) {
  await knex.schema.dropTable('email_code');
}
