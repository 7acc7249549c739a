// The writes of a parent's writable children and the references that meet soft delete, as SQL
// (engine/resource/sql/write.ts), without HTTP or a database: a ledger (softDelete, changedBy)
// whose entries are its writable children, an account (softDelete) an entry may name, and a
// remark naming an entry. A reference is found only among records not deleted, and an entry only
// while its ledger is not (its own alias's live-parent check); an entry written touches its
// ledger in the same statement, a moved one the ledger it left too.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { readStatement } from '../../engine/resource/sql/select.js';
import { deleteStatement, insertStatement, updateStatement } from '../../engine/resource/sql/write.js';
import { callerOf, compile, EMPLOYEE, TENANT } from '../helpers/sql-plans.js';

const registry = compile({
  account: `
name: account
scope: tenant
softDelete: true
permissions: { read: authenticated, write: authenticated }
fields:
  name: { type: string }
`,
  ledger: `
name: ledger
scope: tenant
softDelete: true
changedBy: true
permissions: { read: authenticated, write: authenticated }
fields:
  title: { type: string }
relations:
  entries: { hasMany: ledger-entry, via: ledgerId, writable: true }
`,
  'ledger-entry': `
name: ledger-entry
scope: tenant
permissions: { read: authenticated, write: authenticated }
fields:
  ledgerId: { type: uuid, required: true, references: ledger }
  accountId: { type: uuid, references: account }
  amount: { type: number }
`,
  remark: `
name: remark
scope: tenant
permissions: { read: authenticated, write: authenticated }
fields:
  entryId: { type: uuid, references: ledger-entry }
  text: { type: string }
`,
});
const resource = (name: string) => registry.get(name)!;
const account = resource('account');
const ledger = resource('ledger');
const entry = resource('ledger-entry');
const remark = resource('remark');
const admin = callerOf();

const LEDGER = '7e1a0000-0000-4000-8000-0000000000c1';
const ACCOUNT = '7e1a0000-0000-4000-8000-0000000000d1';
const ENTRY = '7e1a0000-0000-4000-8000-0000000000f1';
const ENTRY_RETURNING =
  'returning "ledger_entry"."id", "ledger_entry"."tenantId", "ledger_entry"."createdAt", "ledger_entry"."updatedAt", "ledger_entry"."ledgerId", ' +
  '"ledger_entry"."accountId", "ledger_entry"."amount", to_hex(hashtextextended("ledger_entry".xmin::text, 0)) as "@version"';
const LIVE_LEDGER = ' and exists (select 1 from "ledger" as "ledger_entry_live0" where "ledger_entry_live0"."id" = "ledger_entry"."ledgerId" and "ledger_entry_live0"."deletedAt" is null offset 0)';
const TOUCH_LEDGER = '"touched0" as (update "ledger" set "updatedAt" = CURRENT_TIMESTAMP, "updatedById" = ';

/** Each placeholder $1…$n appears in order of first use and every value is bound to one. */
function assertPlaceholders(text: string, values: unknown[]) {
  const first = [...new Set([...text.matchAll(/\$(\d+)/g)].map((m) => Number(m[1])))];
  assert.equal(first, values.map((_, i) => i + 1), text);
}

test('a child created without a key: "written" opened by its parent touch, references live and in scope, its parent touched', () => {
  const references = [
    { target: ledger, ids: [LEDGER], caller: admin },
    { target: account, ids: [ACCOUNT], caller: admin },
  ];
  const { text, values } = insertStatement(entry, { tenantId: TENANT, ledgerId: LEDGER, accountId: ACCOUNT, amount: 5 }, EMPLOYEE, undefined, references);
  assert.is(
    text,
    'with "written" as (insert into "ledger_entry" ("tenantId", "ledgerId", "accountId", "amount") select $1, $2, $3, $4 where true' +
      ' and exists (select 1 from "ledger" as "@ref0" where "@ref0"."id" = $5 and "@ref0"."tenantId" = $6 and "@ref0"."deletedAt" is null)' +
      ' and exists (select 1 from "account" as "@ref1" where "@ref1"."id" = $7 and "@ref1"."tenantId" = $8 and "@ref1"."deletedAt" is null) ' +
      `${ENTRY_RETURNING}), ${TOUCH_LEDGER}$9` +
      ' where ("ledger"."id", "ledger"."tenantId") in (select "written"."ledgerId", "written"."tenantId" from "written")) select * from "written"',
  );
  assert.equal(values, [TENANT, LEDGER, ACCOUNT, 5, LEDGER, TENANT, ACCOUNT, TENANT, EMPLOYEE]);
  assertPlaceholders(text, values);
});

test("a reference to a record whose parent may be deleted: the parent's check runs on the reference's own alias", () => {
  const { text, values } = insertStatement(remark, { tenantId: TENANT, entryId: ENTRY }, EMPLOYEE, undefined, [{ target: entry, ids: [ENTRY], caller: admin }]);
  assert.match(
    text,
    'insert into "remark" ("tenantId", "entryId") select $1, $2 where true' +
      ' and exists (select 1 from "ledger_entry" as "@ref0" where "@ref0"."id" = $3 and "@ref0"."tenantId" = $4' +
      ' and exists (select 1 from "ledger" as "@ref0_live0" where "@ref0_live0"."id" = "@ref0"."ledgerId" and "@ref0_live0"."deletedAt" is null)) returning ',
  );
  assert.equal(values, [TENANT, ENTRY, ENTRY, TENANT]);
  assertPlaceholders(text, values);
});

test('a child moved to another parent: "before" and the references in one statement, both parents touched', () => {
  const { text, values } = updateStatement(entry, admin, ENTRY, { ledgerId: LEDGER, amount: 7 }, undefined, [{ target: ledger, ids: [LEDGER], caller: admin }]);
  assert.is(
    text,
    // "before" locks the entry first (in scope, in sight) and the update joins it: a move that
    // commits while this one waits leaves "before" on the parent that move made.
    'with "before" as (select "ledger_entry"."id", "ledger_entry"."tenantId", "ledger_entry"."ledgerId" from "ledger_entry"' +
      ' where "ledger_entry"."id" = $1 and "ledger_entry"."tenantId" = $2' +
      LIVE_LEDGER +
      ' for no key update),' +
      ' "written" as (update "ledger_entry" set "ledgerId" = $3, "amount" = $4, "updatedAt" = CURRENT_TIMESTAMP' +
      ' from "before" where "ledger_entry"."id" = "before"."id" and "ledger_entry"."tenantId" = $5' +
      // The entry itself is in sight only while the ledger it is in (its row's value before the update) is not deleted.
      LIVE_LEDGER +
      ' and exists (select 1 from "ledger" as "@ref0" where "@ref0"."id" = $6 and "@ref0"."tenantId" = $7 and "@ref0"."deletedAt" is null) ' +
      `${ENTRY_RETURNING}), ${TOUCH_LEDGER}$8 where ("ledger"."id", "ledger"."tenantId") in (select "written"."ledgerId", "written"."tenantId" from "written"` +
      ' union select "before"."ledgerId", "before"."tenantId" from "before" join "written" on "written"."id" = "before"."id")) select * from "written"',
  );
  assert.equal(values, [ENTRY, TENANT, LEDGER, 7, TENANT, LEDGER, TENANT, admin.userId]);
  assertPlaceholders(text, values);
});

test("a read joins the entry's ledger; a delete looks it up per row, as the entry is when the delete has its lock", () => {
  const read = readStatement(entry, admin, ENTRY).text;
  assert.ok(read.endsWith(LIVE_LEDGER.replace(' offset 0)', ')')), read);
  assert.not.match(read, 'offset 0');
  const { text, values } = deleteStatement(entry, admin, ENTRY);
  assert.is(
    text,
    'with "written" as (delete from "ledger_entry" where "ledger_entry"."id" = $1 and "ledger_entry"."tenantId" = $2' +
      LIVE_LEDGER +
      ' returning "ledger_entry"."id", "ledger_entry"."ledgerId", "ledger_entry"."tenantId"),' +
      ` ${TOUCH_LEDGER}$3 where ("ledger"."id", "ledger"."tenantId") in (select "written"."ledgerId", "written"."tenantId" from "written")) select * from "written"`,
  );
  assert.equal(values, [ENTRY, TENANT, admin.userId]);
  assertPlaceholders(text, values);
});

test.run();
