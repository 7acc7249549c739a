// The first slice: tenants, roles, users, organizations, employees, tags, skills, event types.
import type { Knex } from 'knex';
import { joinTable, recordColumns } from '../migration-helpers.js';

export async function up(knex: Knex) {
  await knex.schema.createTable('tenant', (t) => {
    t.uuid('id').primary().defaultTo(knex.raw('gen_random_uuid()'));
    t.string('name', 255).notNullable();
    t.timestamp('createdAt', { useTz: true }).notNullable().defaultTo(knex.fn.now());
    t.timestamp('updatedAt', { useTz: true }).notNullable().defaultTo(knex.fn.now());
  });
  await knex.schema.createTable('role', (t) => {
    recordColumns(knex, t, 'tenant');
    t.string('name', 50).notNullable();
    t.unique(['tenantId', 'name']);
  });
  await knex.schema.createTable('user', (t) => {
    recordColumns(knex, t, 'tenant');
    t.string('email', 254).notNullable().unique();
    t.string('firstName', 255);
    t.string('lastName', 255);
    t.string('name', 511);
    t.text('hash').notNullable();
    t.uuid('roleId').notNullable().references('id').inTable('role').onDelete('RESTRICT');
    t.boolean('isActive').notNullable().defaultTo(true);
    t.boolean('isEmailVerified').notNullable().defaultTo(false);
    t.string('imageUrl', 2048);
  });
  await knex.schema.createTable('organization', (t) => {
    recordColumns(knex, t, 'tenant');
    t.string('name', 255).notNullable();
    t.string('currency', 3).notNullable();
    t.boolean('isDefault').notNullable().defaultTo(false);
    t.string('timeZone', 64);
    t.string('startWeekOn', 16);
    t.string('bonusType', 32);
    t.double('bonusPercentage');
    t.string('website', 2048);
    t.boolean('isActive').notNullable().defaultTo(true);
  });
  await knex.schema.createTable('employee', (t) => {
    recordColumns(knex, t, 'organization');
    t.string('firstName', 255).notNullable();
    t.string('lastName', 255).notNullable();
    t.uuid('userId').notNullable().references('id').inTable('user').onDelete('RESTRICT');
    t.timestamp('startedWorkOn', { useTz: true });
    t.timestamp('endWork', { useTz: true });
    t.integer('billRateValue');
    t.string('billRateCurrency', 3);
    t.string('payPeriod', 32);
    t.boolean('isActive').notNullable().defaultTo(true);
    t.unique(['userId', 'organizationId']);
  });
  await knex.schema.createTable('tag', (t) => {
    recordColumns(knex, t, 'organization');
    t.string('name', 255).notNullable();
    t.string('color', 64).notNullable();
    t.string('textColor', 64);
    t.string('description', 1000);
    t.boolean('isSystem').notNullable().defaultTo(false);
    t.unique(['organizationId', 'name']);
  });
  await knex.schema.createTable('skill', (t) => {
    recordColumns(knex, t, 'organization');
    t.string('name', 255).notNullable();
    t.string('description', 1000);
    t.string('color', 64);
  });
  await knex.schema.createTable('event_type', (t) => {
    recordColumns(knex, t, 'organization');
    t.string('title', 255).notNullable();
    t.string('description', 2000);
    t.string('durationUnit', 16).notNullable();
    t.double('duration').notNullable();
    t.boolean('isActive').notNullable().defaultTo(true);
    t.uuid('employeeId').references('id').inTable('employee').onDelete('CASCADE');
    t.index(['employeeId']);
  });
  await joinTable(knex, 'tag_employee', ['employeeId', 'employee'], ['tagId', 'tag']);
  await joinTable(knex, 'skill_employee', ['employeeId', 'employee'], ['skillId', 'skill']);
  await joinTable(knex, 'tag_organization', ['organizationId', 'organization'], ['tagId', 'tag']);
  await joinTable(knex, 'skill_organization', ['organizationId', 'organization'], ['skillId', 'skill']);
  await joinTable(knex, 'tag_event_type', ['eventTypeId', 'event_type'], ['tagId', 'tag']);
}

export async function down(knex: Knex) {
  for (const table of ['tag_event_type', 'skill_organization', 'tag_organization', 'skill_employee', 'tag_employee', 'event_type', 'skill', 'tag', 'employee', 'organization', 'user', 'role', 'tenant']) {
    await knex.schema.dropTableIfExists(table);
  }
}
