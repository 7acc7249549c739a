// The caller scope on a knex builder (engine/resource/query.ts, what hand-written modules and the
// has-many child writes use) renders the same conditions as the compiled statements do: tenant,
// then the owner field for the owner-scoped role, `false` when that role has no employee. knex
// compiles to text without a connection, so no database is needed.
import knex from 'knex';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { scope } from '../../engine/resource/query.js';
import { readStatement } from '../../engine/resource/sql/select.js';
import { callerOf, EMPLOYEE, resource, TENANT } from '../helpers/sql-plans.js';

const pg = knex({ client: 'pg' });
const note = resource('work-note');
const RECORD_ID = '7e1a0000-0000-4000-8000-0000000000ff';

/** The scoped `select id` of one record, through knex. */
const viaKnex = (caller: ReturnType<typeof callerOf>, ref?: string) =>
  scope(pg(ref ? `work_note as ${ref}` : 'work_note').select('id').where('id', RECORD_ID), note, caller, ref).toSQL().toNative();

test('the tenant scope, and the owner scope, as knex writes them', () => {
  assert.equal(viaKnex(callerOf()), {
    sql: 'select "id" from "work_note" where "id" = $1 and "work_note"."tenantId" = $2',
    bindings: [RECORD_ID, TENANT],
  });
  assert.equal(viaKnex(callerOf({ ownerScoped: true }), 'n'), {
    sql: 'select "id" from "work_note" as "n" where "id" = $1 and "n"."tenantId" = $2 and "n"."authorId" = $3',
    bindings: [RECORD_ID, TENANT, EMPLOYEE],
  });
  assert.equal(viaKnex(callerOf({ ownerScoped: true, employeeId: null })), {
    sql: 'select "id" from "work_note" where "id" = $1 and false',
    bindings: [RECORD_ID],
  });
});

test('knex and the compiled statements bind the same scope values in the same order', () => {
  for (const caller of [callerOf(), callerOf({ ownerScoped: true }), callerOf({ ownerScoped: true, employeeId: null })]) {
    assert.equal(viaKnex(caller).bindings, readStatement(note, caller, RECORD_ID).values);
  }
});

test.after(() => pg.destroy());

test.run();
