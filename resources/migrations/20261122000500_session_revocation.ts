// Sessions as rows of their own, so that ending one ends its ACCESS tokens too: every protected
// request looks its `sid` up here (by primary key), and a refresh token is only exchanged while its
// session lives. Revocation sets revokedAt; a successor token inserted by an exchange running at the
// same moment is thus born into a revoked session and refused wherever it is shown, with no lock
// between the two.
import type { Knex } from 'knex';

export async function up(knex: Knex) {
  await knex.schema.createTable('user_session', (t) => {
    // The session id: the id of the first refresh token of the sign-in, the access token's `sid`.
    t.uuid('id').primary();
    t.uuid('tenantId').notNullable().references('id').inTable('tenant').onDelete('CASCADE');
    t.uuid('userId').notNullable().references('id').inTable('user').onDelete('CASCADE');
    t.timestamp('revokedAt', { useTz: true });
    t.timestamp('createdAt', { useTz: true }).notNullable().defaultTo(knex.fn.now());
    // Revoking every session of a user.
    t.index(['userId']);
  });
  // Sessions still live when this runs keep working; the others (revoked, spent out, expired)
  // have no row, so their access tokens are refused from now on, as they should have been.
  await knex.raw(
    `insert into "user_session" ("id", "tenantId", "userId")
     select distinct on ("sessionId") "sessionId", "tenantId", "userId" from "refresh_token"
      where "status" = 'active' and "expiresAt" > now()
      order by "sessionId"`,
  );
}

export async function down(knex: Knex) {
  await knex.schema.dropTableIfExists('user_session');
}
