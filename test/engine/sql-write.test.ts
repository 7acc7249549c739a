// The writes as SQL (engine/resource/sql/write.ts), and the identifier quoting under every
// statement (sql/text.ts), without HTTP or a database: a row in, the exact text and values out.
// An update or delete reaches only a record in the caller's scope; a column left undefined is
// left out (its default applies), never written as null.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { col, id, SqlText } from '../../engine/resource/sql/text.js';
import { deleteStatement, existingCountsStatement, insertStatement, updateStatement } from '../../engine/resource/sql/write.js';
import { callerOf, EMPLOYEE, NOTE_VERSION, resource, TENANT } from '../helpers/sql-plans.js';

const note = resource('work-note');
const project = resource('project');
const admin = callerOf();
const employee = callerOf({ ownerScoped: true });

const RETURNING =
  ' returning "work_note"."id", "work_note"."tenantId", "work_note"."createdAt", "work_note"."updatedAt", ' +
  `"work_note"."authorId", "work_note"."projectId", "work_note"."minutes", "work_note"."writtenOn", ${NOTE_VERSION} as "@version"`;
const RECORD_ID = '7e1a0000-0000-4000-8000-0000000000ff';
const PROJECT_ID = '7e1a0000-0000-4000-8000-0000000000b1';

test('identifiers are double-quoted, a quote inside doubled; a column is "table"."column"', () => {
  assert.is(id('workNote'), '"workNote"');
  assert.is(id('select'), '"select"');
  assert.is(id('a"b'), '"a""b"');
  assert.is(col('work_note', 'authorId'), '"work_note"."authorId"');
});

test('placeholders count the values in the order they are bound', () => {
  const sql = new SqlText().sql('a = ').value('x').sql(' and b = any(').value([1, 2]).sql(')');
  assert.equal(sql.statement(), { text: 'a = $1 and b = any($2)', values: ['x', [1, 2]] });
});

test('an insert: the columns of the row as given, undefined ones left out, the visible columns back', () => {
  assert.equal(insertStatement(note, { tenantId: TENANT, authorId: EMPLOYEE, projectId: undefined, minutes: 0, writtenOn: null }, EMPLOYEE), {
    text: `insert into "work_note" ("tenantId", "authorId", "minutes", "writtenOn") values ($1, $2, $3, $4)${RETURNING}`,
    values: [TENANT, EMPLOYEE, 0, null],
  });
});

test('an insert never returns a hidden column', () => {
  const statement = insertStatement(project, { tenantId: TENANT, name: 'Apollo', secret: 's' }, EMPLOYEE);
  assert.equal(statement, {
    text: 'insert into "project" ("tenantId", "name", "secret") values ($1, $2, $3) returning "project"."id", "project"."tenantId", "project"."createdAt", "project"."updatedAt", "project"."name", "project"."code", to_hex(hashtextextended("project".xmin::text, 0)) as "@version"',
    values: [TENANT, 'Apollo', 's'],
  });
});

test('an insert with references checks them in its own statement, and writes only when each exists', () => {
  const references = [{ target: project, ids: [PROJECT_ID], caller: admin }];
  assert.equal(insertStatement(note, { tenantId: TENANT, projectId: PROJECT_ID }, EMPLOYEE, undefined, references), {
    text:
      'insert into "work_note" ("tenantId", "projectId") select $1, $2 where true' +
      ' and exists (select 1 from "project" as "@ref0" where "@ref0"."id" = $3 and "@ref0"."tenantId" = $4)' +
      RETURNING,
    values: [TENANT, PROJECT_ID, PROJECT_ID, TENANT],
  });
});

test('several ids of one reference: the write needs all of them, counted', () => {
  const other = '7e1a0000-0000-4000-8000-0000000000b2';
  const references = [{ target: project, ids: [PROJECT_ID, other], caller: employee }];
  const { text, values } = insertStatement(note, { tenantId: TENANT, minutes: 1 }, EMPLOYEE, undefined, references);
  assert.is(
    text,
    'insert into "work_note" ("tenantId", "minutes") select $1, $2 where true' +
      ' and (select count(*) from "project" as "@ref0" where "@ref0"."id" = any($3) and "@ref0"."tenantId" = $4) = 2' +
      RETURNING,
  );
  assert.equal(values, [TENANT, 1, [PROJECT_ID, other], TENANT]);
});

test("a reference to an owned record is looked up with the owner rule on its own alias; without an employee, never found", () => {
  const references = [{ target: note, ids: [RECORD_ID], caller: employee }];
  const { text, values } = insertStatement(project, { tenantId: TENANT, name: 'P' }, EMPLOYEE, undefined, references);
  assert.match(text, / where true and exists \(select 1 from "work_note" as "@ref0" where "@ref0"."id" = \$3 and "@ref0"."tenantId" = \$4 and "@ref0"."authorId" = \$5\) returning /);
  assert.equal(values, [TENANT, 'P', RECORD_ID, TENANT, EMPLOYEE]);
  const nobody = callerOf({ ownerScoped: true, employeeId: null });
  const refused = insertStatement(project, { tenantId: TENANT, name: 'P' }, EMPLOYEE, undefined, [{ target: note, ids: [RECORD_ID], caller: nobody }]);
  assert.match(refused.text, / where true and exists \(select 1 from "work_note" as "@ref0" where "@ref0"."id" = \$3 and false\) returning /);
});

test('an update with a reference checks it after the caller scope, in the same statement', () => {
  const references = [{ target: project, ids: [PROJECT_ID], caller: admin }];
  assert.equal(updateStatement(note, employee, RECORD_ID, { projectId: PROJECT_ID }, undefined, references), {
    text:
      'update "work_note" set "projectId" = $1, "updatedAt" = CURRENT_TIMESTAMP' +
      ' where "work_note"."id" = $2 and "work_note"."tenantId" = $3 and "work_note"."authorId" = $4' +
      ` and exists (select 1 from "project" as "@ref0" where "@ref0"."id" = $5 and "@ref0"."tenantId" = $6)${RETURNING}`,
    values: [PROJECT_ID, RECORD_ID, TENANT, EMPLOYEE, PROJECT_ID, TENANT],
  });
});

test('an insert with references and a key: every placeholder bound once, in order, to its value', () => {
  const key = {
    claim: (sql: SqlText) => void sql.sql('"claim" as (select ').value('k-claim').sql(' as "free")'),
    free: (sql: SqlText) => void sql.sql('(select "free" from "claim")'),
    keep: (sql: SqlText, written: string) => void sql.sql(', "kept" as (select ').value('k-keep').sql(` from ${written})`),
    isConflict: () => false,
  };
  const references = [{ target: project, ids: [PROJECT_ID], caller: admin }];
  const { text, values } = insertStatement(note, { tenantId: TENANT, projectId: PROJECT_ID, minutes: 5 }, EMPLOYEE, key, references);
  const placeholders = [...text.matchAll(/\$(\d+)/g)].map((m) => Number(m[1]));
  assert.equal(placeholders, values.map((_, i) => i + 1), text);
  assert.equal(values, ['k-claim', TENANT, PROJECT_ID, 5, PROJECT_ID, TENANT, 'k-keep']);
  assert.match(text, /^with "claim" as \(select \$1 as "free"\), "written" as \(insert into "work_note" /);
  assert.match(text, /where true and exists \(select 1 from "project" as "@ref0" where "@ref0"."id" = \$5 and "@ref0"."tenantId" = \$6\) and \(select "free" from "claim"\) returning/);
  assert.match(text, /, "kept" as \(select \$7 from "written"\) select \* from "written"$/);
});

test('an update: the given columns, updatedAt by the database, then the id and the caller scope', () => {
  assert.equal(updateStatement(note, employee, RECORD_ID, { minutes: 45, projectId: undefined, writtenOn: '2026-01-02' }), {
    text:
      'update "work_note" set "minutes" = $1, "writtenOn" = $2, "updatedAt" = CURRENT_TIMESTAMP' +
      ` where "work_note"."id" = $3 and "work_note"."tenantId" = $4 and "work_note"."authorId" = $5${RETURNING}`,
    values: [45, '2026-01-02', RECORD_ID, TENANT, EMPLOYEE],
  });
  assert.equal(updateStatement(note, admin, RECORD_ID, {}), {
    text: `update "work_note" set "updatedAt" = CURRENT_TIMESTAMP where "work_note"."id" = $1 and "work_note"."tenantId" = $2${RETURNING}`,
    values: [RECORD_ID, TENANT],
  });
});

test("If-Match's versions: a condition of the update's or the delete's own statement, bound as one array", () => {
  const versions = ['0123456789abcdef0123456789abcdef'];
  assert.equal(updateStatement(note, admin, RECORD_ID, { minutes: 1 }, versions), {
    text:
      'update "work_note" set "minutes" = $1, "updatedAt" = CURRENT_TIMESTAMP' +
      ` where "work_note"."id" = $2 and "work_note"."tenantId" = $3 and ${NOTE_VERSION} = any($4)${RETURNING}`,
    values: [1, RECORD_ID, TENANT, versions],
  });
  assert.equal(deleteStatement(note, admin, RECORD_ID, []), {
    text: `delete from "work_note" where "work_note"."id" = $1 and "work_note"."tenantId" = $2 and ${NOTE_VERSION} = any($3) returning "work_note"."id"`,
    values: [RECORD_ID, TENANT, []],
  });
});

test('the owner-scoped role without an employee can update and delete nothing', () => {
  const nobody = callerOf({ ownerScoped: true, employeeId: null });
  assert.equal(deleteStatement(note, nobody, RECORD_ID), {
    text: 'delete from "work_note" where "work_note"."id" = $1 and false returning "work_note"."id"',
    values: [RECORD_ID],
  });
  assert.match(updateStatement(note, nobody, RECORD_ID, { minutes: 1 }).text, ' where "work_note"."id" = $2 and false returning ');
});

test('a delete: by id inside the caller scope, the id back', () => {
  assert.equal(deleteStatement(note, employee, RECORD_ID), {
    text: 'delete from "work_note" where "work_note"."id" = $1 and "work_note"."tenantId" = $2 and "work_note"."authorId" = $3 returning "work_note"."id"',
    values: [RECORD_ID, TENANT, EMPLOYEE],
  });
});

test('the ids a body references, counted per target in one statement, each in the caller scope', () => {
  const statement = existingCountsStatement([
    { target: project, ids: [PROJECT_ID], caller: employee },
    { target: note, ids: [RECORD_ID, PROJECT_ID], caller: employee },
  ]);
  assert.equal(statement, {
    text:
      'select (select count(*) from "project" where "project"."id" = any($1) and "project"."tenantId" = $2)::int as "c0",' +
      ' (select count(*) from "work_note" where "work_note"."id" = any($3) and "work_note"."tenantId" = $4 and "work_note"."authorId" = $5)::int as "c1"',
    values: [[PROJECT_ID], TENANT, [RECORD_ID, PROJECT_ID], TENANT, EMPLOYEE],
  });
});

test.run();
