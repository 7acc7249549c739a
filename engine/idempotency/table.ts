// The table of the database store (database-store.ts), for an application's migration to make:
// the engine names the table and its columns, the application decides when it is created.
import type { Knex } from 'knex';

export const IDEMPOTENCY_TABLE = 'idempotency_key';

export async function createIdempotencyTable(knex: Knex) {
  await knex.schema.createTable(IDEMPOTENCY_TABLE, (t) => {
    // Text, not uuid: the engine takes a caller's ids as its authenticator gives them.
    t.text('tenantId').notNullable();
    t.text('userId').notNullable();
    t.string('key', 255).notNullable();
    t.text('fingerprint').notNullable();
    t.text('state').notNullable();
    t.text('token').notNullable();
    t.jsonb('answer');
    t.timestamp('claimedAt', { useTz: true }).notNullable();
    t.timestamp('expiresAt', { useTz: true }).notNullable();
    t.primary(['tenantId', 'userId', 'key']);
    t.index(['expiresAt']);
  });
}

export async function dropIdempotencyTable(knex: Knex) {
  await knex.schema.dropTableIfExists(IDEMPOTENCY_TABLE);
}
