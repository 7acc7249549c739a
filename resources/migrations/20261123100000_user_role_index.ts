// 20261123100000_user_role_index: written by `npm run db:migration` for these differences between the
// definitions and the migrated schema (read it, and adjust onDelete and lengths where the
// defaults chosen do not fit):
//   - user has no index starting with (roleId); the foreign key of fields.roleId needs one
import type { Knex } from 'knex';

export async function up(knex: Knex) {
  await knex.schema.alterTable('user', (t) => {
    t.index(['roleId']);
  });
}

export async function down(knex: Knex) {
  await knex.schema.alterTable('user', (t) => {
    t.dropIndex(['roleId']);
  });
}
