// relations[] and a list's total as SQL (engine/resource/sql/relations.ts, engine/resource/count.ts),
// without HTTP or a database. Relations are columns of the statement of the rows they hang from,
// each scoped to the caller like those rows. The count builders run their own statements, so a
// recording connection takes each one and answers rows the test chose; the count's own limit is
// numbered after the filter's values.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { countMatches } from '../../engine/resource/count.js';
import { relatedRowsRead, relationColumnsSql, relationTree } from '../../engine/resource/sql/relations.js';
import { SqlText } from '../../engine/resource/sql/text.js';
import { matchesStatement } from '../../engine/resource/sql/select.js';
import { callerOf, compile, DEFINITIONS, EMPLOYEE, plan, recordingDatabase, resource, TENANT } from '../helpers/sql-plans.js';

const note = resource('work-note');
const project = resource('project');
const employee = callerOf({ ownerScoped: true });

const PROJECT_COLUMNS = '"project"."id", "project"."tenantId", "project"."createdAt", "project"."updatedAt", "project"."name", "project"."code"';
const NOTE_COLUMNS =
  '"work_note"."id", "work_note"."tenantId", "work_note"."createdAt", "work_note"."updatedAt", ' +
  '"work_note"."authorId", "work_note"."projectId", "work_note"."minutes", "work_note"."writtenOn"';
const LABEL_COLUMNS = '"label"."id", "label"."tenantId", "label"."organizationId", "label"."createdAt", "label"."updatedAt", "label"."name"';
const P1 = '7e1a0000-0000-4000-8000-0000000000b1';

test('relation paths become a tree: each relation named once, its next level below it', () => {
  const tree = relationTree(['project', 'project.notes', 'labels', 'project.notes.labels']);
  assert.equal([...tree.keys()], ['project', 'labels']);
  assert.equal([...tree.get('project')!.get('notes')!.keys()], ['labels']);
});

/** The relation columns of `tree` over parent rows at `ref`, as text and values. */
const columns = (resource: typeof note, caller: ReturnType<typeof callerOf>, paths: string[], ref: string) =>
  relationColumnsSql(new SqlText(), resource, caller, relationTree(paths), undefined, ref).statement();

const at = (columns: string, alias: string, table: string) => columns.replaceAll(`"${table}".`, `"${alias}".`);

test('belongsTo: the target row as JSON, matched on the parent row\'s key, scoped to the caller tenant', () => {
  assert.equal(columns(note, employee, ['project'], 'work_note'), {
    text: `, (select to_json("@row") from (select ${at(PROJECT_COLUMNS, '@r0', 'project')} from "project" as "@r0" where "@r0"."id" = "work_note"."projectId" and "@r0"."tenantId" = $1) as "@row") as "project"`,
    values: [TENANT],
  });
});

test('hasMany: an array of the target rows (empty when none), the owner scope applied to the target', () => {
  assert.equal(columns(project, employee, ['notes'], '@page'), {
    text:
      `, (select coalesce(json_agg("@row"), '[]'::json) from (select ${at(NOTE_COLUMNS, '@r0', 'work_note')} from "work_note" as "@r0"` +
      ' where "@r0"."projectId" = "@page"."id" and "@r0"."tenantId" = $1 and "@r0"."authorId" = $2) as "@row") as "notes"',
    values: [TENANT, EMPLOYEE],
  });
});

test('manyToMany through its join table; the next level nested in the row of the level above, each table its own alias', () => {
  const { text, values } = columns(note, callerOf(), ['project.notes.labels'], 'work_note');
  assert.equal(values, [TENANT, TENANT, TENANT]);
  assert.ok(text.includes(' from "work_note" as "@r1" where "@r1"."projectId" = "@r0"."id" and '), text);
  assert.ok(
    text.includes(
      `(select coalesce(json_agg("@row"), '[]'::json) from (select ${at(LABEL_COLUMNS, '@r2', 'label')} from "label" as "@r2" inner join "label_work_note" as "@t3"` +
        ' on "@t3"."labelId" = "@r2"."id" where "@t3"."workNoteId" = "@r1"."id" and "@r2"."tenantId" = $1) as "@row") as "labels" from "work_note" as "@r1"',
    ),
    text,
  );
  assert.ok(text.endsWith(' from "project" as "@r0" where "@r0"."id" = "work_note"."projectId" and "@r0"."tenantId" = $3) as "@row") as "project"'), text);
});

test('related rows read back as the driver reads rows: timestamps become Dates, at every level', () => {
  const rows: Array<Record<string, any>> = [
    { id: 'n0', project: { id: P1, createdAt: '2026-03-01T10:00:00.123456+00:00', notes: [{ id: 'n1', writtenOn: '2026-02-28T00:00:00+02:00' }] } },
    { id: 'n2', project: null },
  ];
  relatedRowsRead(note, rows, relationTree(['project.notes']));
  assert.equal(rows[0].project.createdAt, new Date('2026-03-01T10:00:00.123Z'));
  assert.equal(rows[0].project.notes[0].writtenOn, new Date('2026-02-27T22:00:00Z'));
  assert.is(rows[1].project, null);
});

/** The compiled work-note with another `count:` policy. */
const counted = (policy: string) => compile({ ...DEFINITIONS, 'work-note': `${DEFINITIONS['work-note']}count: ${policy}\n` }).get('work-note')!;

test('an exact total counts the filtered select, its values unchanged', async () => {
  const matches = matchesStatement(note, employee, plan(note, { where: { minutes: 5 } }));
  const { db, statements } = recordingDatabase(() => [{ total: '7' }]);
  assert.equal(await countMatches(db, note, matches), { total: 7, exact: true });
  assert.equal(statements, [{ text: `select count(*) as "total" from (${matches.text}) as "matches"`, values: [TENANT, EMPLOYEE, 5] }]);
  assert.is(matches.text, 'select 1 from "work_note" where "work_note"."tenantId" = $1 and "work_note"."authorId" = $2 and "work_note"."minutes" = $3');
});

test('a capped total: the cap plus one written into the statement (the definition\'s integer, for the planner to see), the filter values bound', async () => {
  const capped = counted('{ capped: 100 }');
  const matches = matchesStatement(capped, employee, plan(capped, { where: { minutes: 5 } }));
  const { db, statements } = recordingDatabase(() => [{ total: '101' }]);
  assert.equal(await countMatches(db, capped, matches), { total: 100, exact: false });
  assert.equal(statements, [{ text: `select count(*) as "total" from (${matches.text} limit 101) as "matches"`, values: [TENANT, EMPLOYEE, 5] }]);
});

test('an estimated total past its threshold asks the planner with the same filter and values', async () => {
  const estimated = counted('{ estimated: 50 }');
  const matches = matchesStatement(estimated, employee, plan(estimated));
  const { db, statements } = recordingDatabase((s) => (s.text.startsWith('explain') ? [{ 'QUERY PLAN': [{ Plan: { 'Plan Rows': 1234 } }] }] : [{ total: '51' }]));
  assert.equal(await countMatches(db, estimated, matches), { total: 1234, exact: false });
  assert.equal(statements[1], { text: `explain (format json) ${matches.text}`, values: [TENANT, EMPLOYEE] });
});

test.run();
