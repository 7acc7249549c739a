// What bounds guessing across reissued codes: one row per code issued and per wrong try, per user
// and purpose. A per-code try counter alone resets with every new code; these rows do not, so the
// limits hold over a sliding hour whatever the number of codes asked for.
import type { Knex } from 'knex';

export async function up(knex: Knex) {
  await knex.schema.createTable('email_code_event', (t) => {
    t.uuid('id').primary().defaultTo(knex.raw('gen_random_uuid()'));
    t.uuid('userId').notNullable().references('id').inTable('user').onDelete('CASCADE');
    t.string('purpose', 32).notNullable();
    /** 'issued' (a code was mailed) or 'wrong' (a wrong code was entered against a live one). */
    t.string('kind', 16).notNullable();
    t.timestamp('createdAt', { useTz: true }).notNullable().defaultTo(knex.fn.now());
    t.index(['userId', 'purpose', 'kind', 'createdAt']);
  });
}

export async function down(knex: Knex) {
  await knex.schema.dropTableIfExists('email_code_event');
}
