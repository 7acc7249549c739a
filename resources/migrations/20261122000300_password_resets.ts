// Password reset tokens: only a SHA-256 of each token is kept (the token itself lives in one email),
// with its expiry and the moment it was spent, so a token works once, on any instance.
import type { Knex } from 'knex';
import { recordColumns } from '../migration-helpers.js';

export async function up(knex: Knex) {
  await knex.schema.createTable('password_reset', (t) => {
    recordColumns(knex, t, 'tenant');
    t.uuid('userId').notNullable().references('id').inTable('user').onDelete('CASCADE');
    t.string('tokenHash', 64).notNullable().unique();
    t.timestamp('expiresAt', { useTz: true }).notNullable();
    t.timestamp('usedAt', { useTz: true });
    // A new request and a successful reset spend the user's outstanding tokens.
    t.index(['userId']);
  });
}

export async function down(knex: Knex) {
  await knex.schema.dropTableIfExists('password_reset');
}
