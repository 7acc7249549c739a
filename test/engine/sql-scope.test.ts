// The caller scope on a model query (engine/resource/model.ts: what hand-written modules and the
// has-many child writes use) renders the same conditions as the compiled statements do: tenant,
// then the owner field for the owner-scoped role, `false` when that role has no employee. knex
// compiles to text without a connection, so no database is needed.
import knex from 'knex';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { readStatement } from '../../engine/resource/sql/select.js';
import { callerOf, EMPLOYEE, resource, TENANT } from '../helpers/sql-plans.js';

const pg = knex({ client: 'pg' });
const note = resource('work-note');
const RECORD_ID = '7e1a0000-0000-4000-8000-0000000000ff';

/** The scoped `select id` of one record, through the model (on its table, or an alias). */
const viaModel = (caller: ReturnType<typeof callerOf>, ref?: string) => {
  const query = note.model.scoped(caller, pg).select('id').where('id', RECORD_ID);
  return (ref ? query.alias(ref) : query).toKnexQuery().toSQL().toNative();
};

test('the tenant scope, and the owner scope, as the model writes them', () => {
  assert.equal(viaModel(callerOf()), {
    sql: 'select "id" from "work_note" where "work_note"."tenantId" = $1 and "id" = $2',
    bindings: [TENANT, RECORD_ID],
  });
  assert.equal(viaModel(callerOf({ ownerScoped: true }), 'n'), {
    sql: 'select "id" from "work_note" as "n" where "n"."tenantId" = $1 and "n"."authorId" = $2 and "id" = $3',
    bindings: [TENANT, EMPLOYEE, RECORD_ID],
  });
  assert.equal(viaModel(callerOf({ ownerScoped: true, employeeId: null })), {
    sql: 'select "id" from "work_note" where false and "id" = $1',
    bindings: [RECORD_ID],
  });
});

test('the model and the compiled statements bind the same scope values in the same order', () => {
  for (const caller of [callerOf(), callerOf({ ownerScoped: true }), callerOf({ ownerScoped: true, employeeId: null })]) {
    const scopeOnly = note.model.scoped(caller, pg).select('id').toKnexQuery().toSQL().toNative().bindings;
    // readStatement binds the id first, then the scope.
    assert.equal(scopeOnly, readStatement(note, caller, RECORD_ID).values.slice(1));
  }
});

test.after(() => pg.destroy());

test.run();
