// Idempotency keys kept in the database (the engine's store when REDIS_URL is not set): one row
// per caller and key, swept once expired (engine/idempotency/).
import type { Knex } from 'knex';
import { createIdempotencyTable, dropIdempotencyTable } from '../migration-helpers.js';

export async function up(knex: Knex) {
  await createIdempotencyTable(knex);
}

export async function down(knex: Knex) {
  await dropIdempotencyTable(knex);
}
