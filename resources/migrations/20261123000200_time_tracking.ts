// Time tracking: timesheets, time logs and their activity slots, daily plans, time-off requests
// with their documents (image assets), and entity subscriptions. Builds on the work tables
// (task, organization_project, organization_team) of 20261123000100_work.
import type { Knex } from 'knex';
import { atLeastRule, joinTable, recordColumns, secondsBetweenColumn } from '../migration-helpers.js';

export async function up(knex: Knex) {
  await knex.schema.createTable('image_asset', (t) => {
    recordColumns(knex, t, 'organization');
    t.string('name', 255);
    t.string('url', 2048);
    t.integer('width');
    t.integer('height');
    t.integer('size');
    t.string('mimeType', 255);
    t.boolean('isFeatured').notNullable().defaultTo(false);
    t.string('storageProvider', 16).notNullable().defaultTo('LOCAL');
  });
  await knex.schema.createTable('timesheet', (t) => {
    recordColumns(knex, t, 'organization');
    // An employee's time goes with the employee.
    t.uuid('employeeId').notNullable().references('id').inTable('employee').onDelete('CASCADE');
    t.timestamp('startedAt', { useTz: true }).notNullable();
    t.timestamp('stoppedAt', { useTz: true }).notNullable();
    t.integer('duration');
    t.integer('keyboard');
    t.integer('mouse');
    t.integer('overall');
    t.string('status', 16).notNullable().defaultTo('PENDING');
    t.boolean('isBilled').notNullable().defaultTo(false);
    t.timestamp('approvedAt', { useTz: true });
    t.timestamp('submittedAt', { useTz: true });
    t.uuid('approvedById').references('id').inTable('user').onDelete('SET NULL');
    t.index(['employeeId']);
    t.index(['approvedById']);
    atLeastRule(t, 'timesheet', 'stoppedAt', 'startedAt');
  });
  await knex.schema.createTable('time_log', (t) => {
    recordColumns(knex, t, 'organization');
    t.uuid('employeeId').notNullable().references('id').inTable('employee').onDelete('CASCADE');
    t.timestamp('startedAt', { useTz: true }).notNullable();
    t.timestamp('stoppedAt', { useTz: true });
    secondsBetweenColumn(knex, t, 'duration', 'startedAt', 'stoppedAt');
    t.string('logType', 16).notNullable().defaultTo('TRACKED');
    t.string('source', 32).notNullable().defaultTo('WEB_TIMER');
    t.text('description');
    t.text('reason');
    t.boolean('isBillable').notNullable().defaultTo(false);
    // Logged time outlives the project, task, timesheet or team it was logged against.
    t.uuid('projectId').references('id').inTable('organization_project').onDelete('SET NULL');
    t.uuid('taskId').references('id').inTable('task').onDelete('SET NULL');
    t.uuid('timesheetId').references('id').inTable('timesheet').onDelete('SET NULL');
    t.uuid('organizationTeamId').references('id').inTable('organization_team').onDelete('SET NULL');
    t.index(['employeeId', 'startedAt']);
    t.index(['projectId']);
    t.index(['taskId']);
    t.index(['timesheetId']);
    t.index(['organizationTeamId']);
    atLeastRule(t, 'time_log', 'stoppedAt', 'startedAt');
  });
  await knex.schema.createTable('time_slot', (t) => {
    recordColumns(knex, t, 'organization');
    t.uuid('employeeId').notNullable().references('id').inTable('employee').onDelete('CASCADE');
    t.timestamp('startedAt', { useTz: true }).notNullable();
    t.integer('duration');
    t.integer('keyboard');
    t.integer('mouse');
    t.integer('overall');
    t.index(['employeeId', 'startedAt']);
  });
  await knex.schema.createTable('daily_plan', (t) => {
    recordColumns(knex, t, 'organization');
    t.timestamp('date', { useTz: true }).notNullable();
    t.double('workTimePlanned').notNullable();
    t.string('status', 16).notNullable();
    t.uuid('employeeId').notNullable().references('id').inTable('employee').onDelete('CASCADE');
    t.uuid('organizationTeamId').references('id').inTable('organization_team').onDelete('SET NULL');
    t.index(['employeeId', 'date']);
    t.index(['organizationTeamId']);
  });
  await knex.schema.createTable('time_off_request', (t) => {
    recordColumns(knex, t, 'organization');
    t.timestamp('start', { useTz: true }).notNullable();
    t.timestamp('end', { useTz: true }).notNullable();
    t.timestamp('requestDate', { useTz: true }).notNullable();
    t.string('status', 16).notNullable().defaultTo('REQUESTED');
    t.string('description', 2000);
    t.boolean('isHoliday').notNullable().defaultTo(false);
    t.string('documentUrl', 2048);
    // A document in use cannot be deleted from under the request.
    t.uuid('documentId').references('id').inTable('image_asset').onDelete('RESTRICT');
    t.uuid('employeeId').references('id').inTable('employee').onDelete('CASCADE');
    t.index(['documentId']);
    t.index(['employeeId']);
    atLeastRule(t, 'time_off_request', 'end', 'start');
  });
  await knex.schema.createTable('entity_subscription', (t) => {
    recordColumns(knex, t, 'organization');
    t.string('entity', 32).notNullable();
    t.uuid('entityId').notNullable();
    t.string('type', 32).notNullable();
    t.uuid('employeeId').notNullable().references('id').inTable('employee').onDelete('CASCADE');
    t.index(['employeeId']);
    // Who follows a record is looked up per record.
    t.index(['entity', 'entityId']);
  });
  await joinTable(knex, 'time_slot_time_log', ['timeSlotId', 'time_slot'], ['timeLogId', 'time_log']);
  await joinTable(knex, 'daily_plan_task', ['dailyPlanId', 'daily_plan'], ['taskId', 'task']);
  await joinTable(knex, 'time_off_request_employee', ['timeOffRequestId', 'time_off_request'], ['employeeId', 'employee']);
}

export async function down(knex: Knex) {
  for (const table of [
    'time_off_request_employee',
    'daily_plan_task',
    'time_slot_time_log',
    'entity_subscription',
    'time_off_request',
    'daily_plan',
    'time_slot',
    'time_log',
    'timesheet',
    'image_asset',
  ]) {
    await knex.schema.dropTableIfExists(table);
  }
}
