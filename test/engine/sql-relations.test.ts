// relations[] and a list's total as SQL (engine/resource/sql/relations.ts, engine/resource/count.ts),
// without HTTP or a database: these builders run their own statements, so a recording connection
// takes each one and answers rows the test chose. One statement per relation and level, never one
// per row; each scoped to the caller like the rows it hangs from; the count's own limit numbered
// after the filter's values.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { countMatches } from '../../engine/resource/count.js';
import { loadRelations, relationTree } from '../../engine/resource/sql/relations.js';
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
const P2 = '7e1a0000-0000-4000-8000-0000000000b2';

test('relation paths become a tree: each relation named once, its next level below it', () => {
  const tree = relationTree(['project', 'project.notes', 'labels', 'project.notes.labels']);
  assert.equal([...tree.keys()], ['project', 'labels']);
  assert.equal([...tree.get('project')!.get('notes')!.keys()], ['labels']);
});

test('belongsTo: the distinct parent keys as one array value, the target scoped to the caller tenant', async () => {
  const { db, statements } = recordingDatabase(() => [{ id: P1, name: 'Apollo' }]);
  const rows: Array<Record<string, unknown>> = [{ id: 'n1', projectId: P1 }, { id: 'n2', projectId: P1 }, { id: 'n3', projectId: null }];
  await loadRelations(db, note, employee, rows, relationTree(['project']));
  assert.equal(statements, [
    {
      text: `select ${PROJECT_COLUMNS} from "project" where "project"."id" = any($1) and "project"."tenantId" = $2`,
      values: [[P1], TENANT],
    },
  ]);
  assert.equal(rows.map((row) => row.project), [{ id: P1, name: 'Apollo' }, { id: P1, name: 'Apollo' }, null]);
});

test('hasMany: the target grouped by its via column, the owner scope applied to the target', async () => {
  const { db, statements } = recordingDatabase(() => [{ id: 'n1', '@key': P1 }]);
  const rows: Array<Record<string, unknown>> = [{ id: P1 }, { id: P2 }];
  await loadRelations(db, project, employee, rows, relationTree(['notes']));
  assert.equal(statements, [
    {
      text: `select ${NOTE_COLUMNS}, "work_note"."projectId" as "@key" from "work_note" where "work_note"."projectId" = any($1) and "work_note"."tenantId" = $2 and "work_note"."authorId" = $3`,
      values: [[P1, P2], TENANT, EMPLOYEE],
    },
  ]);
  assert.equal(rows.map((row) => row.notes), [[{ id: 'n1' }], []]);
});

test('manyToMany through its join table; the next level reads the keys of the rows found, one statement per level', async () => {
  const { db, statements } = recordingDatabase((statement) =>
    statement.text.startsWith('select "project"') ? [{ id: P1 }] : statement.text.includes('from "work_note"') ? [{ id: 'n1', '@key': P1 }] : [],
  );
  const rows: Array<Record<string, unknown>> = [{ id: 'n0', projectId: P1 }];
  await loadRelations(db, note, callerOf(), rows, relationTree(['project.notes.labels']));
  assert.equal(statements.map((s) => s.values), [[[P1], TENANT], [[P1], TENANT], [['n1'], TENANT]]);
  assert.is(
    statements[2].text,
    `select ${LABEL_COLUMNS}, "label_work_note"."workNoteId" as "@key" from "label" inner join "label_work_note" on "label_work_note"."labelId" = "label"."id"` +
      ' where "label_work_note"."workNoteId" = any($1) and "label"."tenantId" = $2',
  );
});

test('no rows, or a relation of no keys: no statement at all', async () => {
  const { db, statements } = recordingDatabase();
  await loadRelations(db, note, employee, [], relationTree(['project']));
  await loadRelations(db, note, employee, [{ id: 'n1', projectId: null }], relationTree(['project']));
  assert.equal(statements, []);
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
