// Refresh tokens, single-use across every instance of the service: only a SHA-256 of each token is
// kept (a leaked table hands out no usable token), with its status, expiry, the token it replaced
// (parentId) and the session it belongs to (sessionId: the id of the first token of a login, also
// the access token's `sid` claim).
import type { Knex } from 'knex';
import { recordColumns } from '../migration-helpers.js';

export async function up(knex: Knex) {
  await knex.schema.createTable('refresh_token', (t) => {
    recordColumns(knex, t, 'tenant');
    // A deleted user's tokens go with it: they could not be refreshed anyway.
    t.uuid('userId').notNullable().references('id').inTable('user').onDelete('CASCADE');
    t.uuid('sessionId').notNullable();
    t.uuid('parentId').references('id').inTable('refresh_token').onDelete('SET NULL');
    t.string('tokenHash', 64).notNullable().unique();
    t.string('status', 16).notNullable().defaultTo('active');
    t.timestamp('expiresAt', { useTz: true }).notNullable();
    t.check(`"status" in ('active', 'spent', 'revoked')`, [], 'refresh_token_status_check');
    // Revoking a session, or every session of a user, finds their live tokens by these.
    t.index(['sessionId', 'status']);
    t.index(['userId', 'status']);
  });
}

export async function down(knex: Knex) {
  await knex.schema.dropTableIfExists('refresh_token');
}
