// Social login: which provider account belongs to which user, the state nonces already spent
// (a state is single-use across every instance), and users without a password (signed up
// through a provider: their hash is null, and password login answers them 401).
import type { Knex } from 'knex';
import { recordColumns } from '../migration-helpers.js';

export async function up(knex: Knex) {
  await knex.schema.createTable('user_identity', (t) => {
    recordColumns(knex, t, 'tenant');
    t.uuid('userId').notNullable().references('id').inTable('user').onDelete('CASCADE');
    t.string('provider', 32).notNullable();
    /** The provider's own id of the account (Google's sub, GitHub's numeric id, ...). */
    t.string('subject', 255).notNullable();
    t.string('email', 254);
    t.unique(['provider', 'subject']);
    t.index(['userId']);
  });
  await knex.schema.createTable('social_login_state', (t) => {
    t.string('nonce', 64).primary();
    t.string('provider', 32).notNullable();
    /** After this the state's signature has expired anyway, so the row can go. */
    t.timestamp('expiresAt', { useTz: true }).notNullable();
    t.index(['expiresAt']);
  });
  await knex.raw('alter table "user" alter column "hash" drop not null');
}

export async function down(knex: Knex) {
  await knex.schema.dropTableIfExists('social_login_state');
  await knex.schema.dropTableIfExists('user_identity');
  // Fails while users signed up through a provider (no hash) exist: they must set a password (or go) first.
  await knex.raw('alter table "user" alter column "hash" set not null');
}
