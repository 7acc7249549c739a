// 20261125120000_records_without_organization: the resources whose definitions say
// organizationOptional: true may hold records of no organization (organizationId null, records of
// the whole tenant, as in Ever Gauzy), which a create makes when nothing names an organization (a
// new tenant has none yet). Tag names stay unique per organization (the unique constraint on
// (organizationId, name)) and become unique among the tenant's tags of no organization too: a
// unique index over those rows only, since PostgreSQL never finds two nulls equal.
import type { Knex } from 'knex';
import { tenantWideUnique } from '../migration-helpers.js';

const TABLES = ['task', 'tag', 'skill', 'image_asset', 'comment', 'event_type', 'candidate_source', 'screening_task'];

export async function up(knex: Knex) {
  for (const table of TABLES) {
    await knex.schema.alterTable(table, (t) => {
      t.setNullable('organizationId');
    });
  }
  await knex.schema.alterTable('tag', (t) => {
    tenantWideUnique(knex, t, 'tag', ['organizationId', 'name']);
  });
}

// Refused while a record of no organization exists (the not-null constraint cannot be set): such
// records must be given an organization or deleted first, never dropped here without a word.
export async function down(knex: Knex) {
  await knex.schema.alterTable('tag', (t) => {
    t.dropIndex([], 'tag_tenantid_name_tenant_wide_unique');
  });
  for (const table of [...TABLES].reverse()) {
    await knex.schema.alterTable(table, (t) => {
      t.dropNullable('organizationId');
    });
  }
}
