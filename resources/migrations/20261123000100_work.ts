// The work an organization plans: contacts, projects, teams, sprints, tasks, their screening
// and comments, with the join tables of their members, teams and tags.
import type { Knex } from 'knex';
import { atLeastRule, joinTable, recordColumns } from '../migration-helpers.js';

export async function up(knex: Knex) {
  await knex.schema.createTable('organization_contact', (t) => {
    recordColumns(knex, t, 'organization');
    t.string('name', 255).notNullable();
    t.string('primaryEmail', 254);
    t.string('primaryPhone', 64);
    t.string('contactType', 16);
    t.double('budget');
    t.string('budgetType', 16);
  });
  await knex.schema.createTable('organization_project', (t) => {
    recordColumns(knex, t, 'organization');
    t.string('name', 255).notNullable();
    t.timestamp('startDate', { useTz: true });
    t.timestamp('endDate', { useTz: true });
    t.string('billing', 16);
    t.string('currency', 3);
    t.boolean('public');
    t.boolean('billable');
    t.string('owner', 16);
    t.double('budget');
    t.string('budgetType', 16);
    t.string('color', 64);
    t.string('description', 2000);
    // A contact with projects cannot be deleted: the projects would silently lose their client.
    t.uuid('organizationContactId').references('id').inTable('organization_contact').onDelete('RESTRICT');
    t.index(['organizationContactId']);
    atLeastRule(t, 'organization_project', 'endDate', 'startDate');
  });
  await knex.schema.createTable('organization_team', (t) => {
    recordColumns(knex, t, 'organization');
    t.string('name', 255).notNullable();
    t.string('color', 64);
    t.string('emoji', 64);
    t.boolean('public').notNullable().defaultTo(false);
  });
  await knex.schema.createTable('organization_sprint', (t) => {
    recordColumns(knex, t, 'organization');
    t.string('name', 255).notNullable();
    // A sprint only exists inside its project: deleting the project deletes its sprints.
    t.uuid('projectId').notNullable().references('id').inTable('organization_project').onDelete('CASCADE');
    t.integer('length').notNullable().defaultTo(7);
    t.string('goal', 2000);
    t.timestamp('startDate', { useTz: true });
    t.timestamp('endDate', { useTz: true });
    t.string('status', 16);
    t.integer('dayStart');
    t.index(['projectId']);
    atLeastRule(t, 'organization_sprint', 'endDate', 'startDate');
  });
  await knex.schema.createTable('task', (t) => {
    recordColumns(knex, t, 'organization');
    t.string('title', 255).notNullable();
    t.text('description');
    t.string('status', 32).notNullable().defaultTo('open');
    t.string('priority', 16);
    t.string('size', 16);
    t.integer('estimate');
    t.timestamp('dueDate', { useTz: true });
    t.timestamp('startDate', { useTz: true });
    t.integer('number');
    t.string('prefix', 32);
    t.boolean('isDraft').notNullable().defaultTo(false);
    t.boolean('public').notNullable().defaultTo(true);
    // Deleting a project, parent task, sprint or user leaves the task in place, unlinked.
    t.uuid('projectId').references('id').inTable('organization_project').onDelete('SET NULL');
    t.uuid('parentId').references('id').inTable('task').onDelete('SET NULL');
    t.uuid('organizationSprintId').references('id').inTable('organization_sprint').onDelete('SET NULL');
    t.uuid('creatorId').references('id').inTable('user').onDelete('SET NULL');
    t.index(['projectId']);
    t.index(['parentId']);
    t.index(['organizationSprintId']);
    t.index(['creatorId']);
  });
  await knex.schema.createTable('screening_task', (t) => {
    recordColumns(knex, t, 'organization');
    t.uuid('taskId').notNullable().references('id').inTable('task').onDelete('CASCADE');
    t.string('status', 16).notNullable().defaultTo('pending');
    t.timestamp('onHoldUntil', { useTz: true });
    t.uuid('creatorId').references('id').inTable('user').onDelete('SET NULL');
    t.index(['taskId']);
    t.index(['creatorId']);
  });
  await knex.schema.createTable('comment', (t) => {
    recordColumns(knex, t, 'organization');
    t.string('entity', 32).notNullable();
    t.uuid('entityId').notNullable();
    t.text('comment').notNullable();
    t.string('actorType', 16).notNullable().defaultTo('User');
    t.boolean('resolved').notNullable().defaultTo(false);
    t.timestamp('resolvedAt', { useTz: true });
    // Replies go with the comment they answer.
    t.uuid('parentId').references('id').inTable('comment').onDelete('CASCADE');
    t.uuid('employeeId').references('id').inTable('employee').onDelete('SET NULL');
    t.index(['parentId']);
    t.index(['employeeId']);
    // Comments are listed per commented record.
    t.index(['entity', 'entityId']);
  });
  await joinTable(knex, 'task_employee', ['taskId', 'task'], ['employeeId', 'employee']);
  await joinTable(knex, 'task_team', ['taskId', 'task'], ['organizationTeamId', 'organization_team']);
  await joinTable(knex, 'tag_task', ['taskId', 'task'], ['tagId', 'tag']);
  await joinTable(knex, 'organization_project_employee', ['organizationProjectId', 'organization_project'], ['employeeId', 'employee']);
  await joinTable(knex, 'organization_project_team', ['organizationProjectId', 'organization_project'], ['organizationTeamId', 'organization_team']);
  await joinTable(knex, 'tag_organization_project', ['organizationProjectId', 'organization_project'], ['tagId', 'tag']);
  await joinTable(knex, 'organization_team_employee', ['organizationTeamId', 'organization_team'], ['employeeId', 'employee']);
  await joinTable(knex, 'tag_organization_team', ['organizationTeamId', 'organization_team'], ['tagId', 'tag']);
  await joinTable(knex, 'tag_organization_contact', ['organizationContactId', 'organization_contact'], ['tagId', 'tag']);
}

export async function down(knex: Knex) {
  for (const table of [
    'tag_organization_contact',
    'tag_organization_team',
    'organization_team_employee',
    'tag_organization_project',
    'organization_project_team',
    'organization_project_employee',
    'tag_task',
    'task_team',
    'task_employee',
    'comment',
    'screening_task',
    'task',
    'organization_sprint',
    'organization_team',
    'organization_project',
    'organization_contact',
  ]) {
    await knex.schema.dropTableIfExists(table);
  }
}
