// The reads as SQL (engine/resource/sql/select.ts), without HTTP or a database: a list plan in,
// the exact text and bound values out. Every statement carries the tenant scope, and the owner
// scope for the owner-scoped role; placeholders are numbered in the order their values are bound;
// every identifier is quoted; a client value only ever travels as a bound value.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { HttpError } from '../../engine/errors.js';
import { DefinitionError } from '../../engine/resource/load.js';
import { keysetStatement, matchesStatement, pageStatement, readStatement, someIdsStatement } from '../../engine/resource/sql/select.js';
import { callerOf, compile, DEFINITIONS, EMPLOYEE, plan, resource, TENANT, NOTE_VERSION } from '../helpers/sql-plans.js';

const note = resource('work-note');
const project = resource('project');
const label = resource('label');
const admin = callerOf();
const employee = callerOf({ ownerScoped: true });

/** What every read of a work note selects: its visible columns, each quoted and qualified. */
const NOTE_COLUMNS =
  '"work_note"."id", "work_note"."tenantId", "work_note"."createdAt", "work_note"."updatedAt", ' +
  '"work_note"."authorId", "work_note"."projectId", "work_note"."minutes", "work_note"."writtenOn"';
/** What a page reads beside its columns for the next cursor: a time order field as text (microseconds kept). */
const NOTE_KEYS = ', "work_note"."createdAt"::text as "@k0"';
const LABEL_ID = '0c1e4b4e-1111-4222-8333-444455556666';
const RECORD_ID = '7e1a0000-0000-4000-8000-0000000000ff';

test('a plain page: the tenant scope, createdAt DESC then id, the page size written in, no offset on a first page', () => {
  assert.equal(pageStatement(note, admin, plan(note)), {
    text: `select ${NOTE_COLUMNS}${NOTE_KEYS} from "work_note" where "work_note"."tenantId" = $1 order by "work_note"."createdAt" desc, "work_note"."id" desc limit 11`,
    // One row more than the page: whether it is there says whether more follow. Written in, so
    // that the planner sees it (a prepared statement's generic plan cannot see a bound LIMIT).
    values: [TENANT],
  });
});

test("a page with its count: the list's matches counted in a subquery of the select list, its values bound before the page's", () => {
  assert.equal(pageStatement(note, employee, plan(note, { where: { minutes: 5 } }), undefined, false, { bound: 101 }), {
    text:
      `select ${NOTE_COLUMNS}${NOTE_KEYS}, (select count(*) from (select 1 from "work_note" where "work_note"."tenantId" = $1 and "work_note"."authorId" = $2 and "work_note"."minutes" = $3 limit 101) as "matches") as "@total"` +
      ` from "work_note" where "work_note"."tenantId" = $4 and "work_note"."authorId" = $5 and "work_note"."minutes" = $6 order by "work_note"."createdAt" desc, "work_note"."id" desc limit 10`,
    values: [TENANT, EMPLOYEE, 5, TENANT, EMPLOYEE, 5],
  });
  // An exact policy counts every match: no limit in the subquery.
  assert.match(pageStatement(note, admin, plan(note), undefined, true, { bound: undefined }).text, `, (select count(*) from (select 1 from "work_note" where "work_note"."tenantId" = $1) as "matches") as "@total" from `);
});

test('the owner-scoped role: the owner field equals its employee, right after the tenant', () => {
  assert.equal(pageStatement(note, employee, plan(note)), {
    text: `select ${NOTE_COLUMNS}${NOTE_KEYS} from "work_note" where "work_note"."tenantId" = $1 and "work_note"."authorId" = $2 order by "work_note"."createdAt" desc, "work_note"."id" desc limit 11`,
    values: [TENANT, EMPLOYEE],
  });
});

test('the owner-scoped role without an employee sees nothing: `false`, and no scope value bound', () => {
  const statement = pageStatement(note, callerOf({ ownerScoped: true, employeeId: null }), plan(note));
  assert.equal(statement, {
    text: `select ${NOTE_COLUMNS}${NOTE_KEYS} from "work_note" where false order by "work_note"."createdAt" desc, "work_note"."id" desc limit 11`,
    values: [],
  });
});

test('a resource without an owner field: the owner-scoped role gets the tenant scope only', () => {
  assert.equal(someIdsStatement(project, employee, 5), {
    text: 'select "project"."id" from "project" where "project"."tenantId" = $1 limit $2',
    values: [TENANT, 5],
  });
});

test('every filter of a plan, in order: fields, a relation as EXISTS scoped to the tenant, date range, tags', () => {
  const statement = pageStatement(
    note,
    employee,
    plan(note, {
      where: { minutes: '30', project: { name: 'Apollo' } },
      order: { minutes: 'asc' },
      take: '5',
      skip: '10',
      startDate: '2026-01-01',
      endDate: '2026-01-31',
      tags: [LABEL_ID],
    }),
  );
  assert.equal(statement.text, [
    // Ordered by minutes: the driver gives integers and ids back exactly, nothing more is read.
    `select ${NOTE_COLUMNS} from "work_note"`,
    'where "work_note"."tenantId" = $1 and "work_note"."authorId" = $2',
    'and "work_note"."minutes" = $3',
    'and exists (select 1 from "project" as "r0_project" where "r0_project"."id" = "work_note"."projectId" and "r0_project"."tenantId" = $4 and "r0_project"."name" = $5)',
    'and "work_note"."writtenOn" >= $6 and "work_note"."writtenOn" < $7',
    'and exists (select 1 from "label" as "filtered_labels" inner join "label_work_note" as "filtered_labels_j" on "filtered_labels_j"."labelId" = "filtered_labels"."id"',
    'where "filtered_labels_j"."workNoteId" = "work_note"."id" and "filtered_labels"."tenantId" = $8 and "filtered_labels"."id" = any($9))',
    'order by "work_note"."minutes" asc, "work_note"."id" asc limit $10 offset $11',
  ].join(' '));
  // Values are typed by the field (minutes a number), the date-only end is the next midnight, exclusive.
  assert.equal(statement.values, [TENANT, EMPLOYEE, 30, TENANT, 'Apollo', '2026-01-01T00:00:00.000Z', '2026-02-01T00:00:00.000Z', TENANT, [LABEL_ID], 6, 10]);
  // A page size other than the default is bound, and a date range's plan depends on it: planned for these values.
  assert.is(statement.once, true);
});

test('operators and OR groups: each a bound value (a list as one array), groups in parentheses, related filters with aliases of their own', () => {
  const statement = matchesStatement(
    note,
    admin,
    plan(note, {
      where: {
        minutes: { gte: '10', lt: 60, ne: 30, between: [1, '99'], in: '5,15', nin: [7], isNull: 'false' },
        projectId: { isNull: true },
        or: [{ minutes: { eq: 1 } }, { project: { name: { ilike: 'Ap%' } }, minutes: { lte: 2 } }],
      },
    }),
  );
  assert.equal(statement.text, [
    'select 1 from "work_note" where "work_note"."tenantId" = $1',
    'and "work_note"."minutes" >= $2 and "work_note"."minutes" < $3 and "work_note"."minutes" is distinct from $4',
    'and "work_note"."minutes" between $5 and $6 and "work_note"."minutes" = any($7)',
    'and ("work_note"."minutes" is null or "work_note"."minutes" <> all($8)) and "work_note"."minutes" is not null',
    'and "work_note"."projectId" is null',
    'and ((true and "work_note"."minutes" = $9)',
    'or (true and "work_note"."minutes" <= $10 and exists (select 1 from "project" as "o1_0_project" where "o1_0_project"."id" = "work_note"."projectId" and "o1_0_project"."tenantId" = $11 and "o1_0_project"."name" ilike $12)))',
  ].join(' '));
  assert.equal(statement.values, [TENANT, 10, 60, 30, 1, 99, [5, 15], [7], 1, 2, TENANT, 'Ap%']);
  // Ranges: the count, like the page, is planned for these values (unnamed), equalities alone are not.
  assert.is(statement.once, true);
  assert.is(matchesStatement(note, admin, plan(note, { where: { minutes: { in: [1, 2] } } })).once, undefined);
  assert.is(matchesStatement(note, admin, plan(note, { where: { or: [{ minutes: 1 }, { minutes: { lt: 3 } }] } })).once, true);
});

test('after a cursor: the keyset on the order then the id replaces the offset; empty values follow the order (last going up, first going down)', () => {
  const up = pageStatement(note, admin, { ...plan(note, { order: { minutes: 'ASC' } }), after: ['30', RECORD_ID] });
  assert.match(
    up.text,
    ` where "work_note"."tenantId" = $1 and (("work_note"."minutes" > $2 or "work_note"."minutes" is null) or ("work_note"."minutes" = $3 and "work_note"."id" > $4)) order by "work_note"."minutes" asc, "work_note"."id" asc limit 11`,
  );
  assert.equal(up.values, [TENANT, '30', '30', RECORD_ID]);
  // Fields never empty, one direction: one row comparison, a range of the index.
  const byDefault = pageStatement(note, admin, { ...plan(note), after: ['2026-01-01 00:00:00.000001+00', RECORD_ID] });
  assert.match(byDefault.text, ' where "work_note"."tenantId" = $1 and ("work_note"."createdAt", "work_note"."id") < ($2, $3) order by ');
  assert.equal(byDefault.values, [TENANT, '2026-01-01 00:00:00.000001+00', RECORD_ID]);
  const upFromEmpty = pageStatement(note, admin, { ...plan(note, { order: { minutes: 'ASC' } }), after: [null, RECORD_ID] });
  assert.match(upFromEmpty.text, ' and (false or ("work_note"."minutes" is null and "work_note"."id" > $2)) ');
  const down = pageStatement(note, admin, { ...plan(note, { order: { minutes: 'DESC' } }), after: [null, RECORD_ID] });
  assert.match(down.text, ' and ("work_note"."minutes" is not null or ("work_note"."minutes" is null and "work_note"."id" < $2)) ');
  const downFromValue = pageStatement(note, admin, { ...plan(note, { order: { minutes: 'DESC' } }), after: ['5', RECORD_ID] });
  assert.match(downFromValue.text, ' and "work_note"."minutes" <= $2 and ("work_note"."minutes" < $3 or ("work_note"."minutes" = $4 and "work_note"."id" < $5)) ');
});

test('an end date with a time is inclusive; take is capped at the resource maximum', () => {
  const statement = pageStatement(note, admin, plan(note, { endDate: '2026-01-31T12:00:00Z', take: '500' }));
  assert.match(statement.text, ' where "work_note"."tenantId" = $1 and "work_note"."writtenOn" <= $2 order by ');
  assert.ok(statement.text.endsWith(' limit $3'), statement.text);
  assert.equal(statement.values, [TENANT, '2026-01-31T12:00:00.000Z', 21]);
});

test('the count shares the page filter, without order and paging; one record by id is scoped too', () => {
  assert.equal(matchesStatement(note, employee, plan(note, { where: { minutes: 30 }, take: 5 })), {
    text: 'select 1 from "work_note" where "work_note"."tenantId" = $1 and "work_note"."authorId" = $2 and "work_note"."minutes" = $3',
    values: [TENANT, EMPLOYEE, 30],
  });
  assert.equal(readStatement(note, employee, RECORD_ID), {
    text: `select ${NOTE_COLUMNS}, ${NOTE_VERSION} as "@version" from "work_note" where "work_note"."id" = $1 and "work_note"."tenantId" = $2 and "work_note"."authorId" = $3`,
    values: [RECORD_ID, TENANT, EMPLOYEE],
  });
});

test('search: one bound pattern for every search field, LIKE wildcards of the client escaped', () => {
  assert.equal(pageStatement(project, admin, plan(project, { search: '  50%_off\\ ' })), {
    text:
      'select "project"."id", "project"."tenantId", "project"."createdAt", "project"."updatedAt", "project"."name", "project"."code", "project"."createdAt"::text as "@k0" from "project"' +
      ' where "project"."tenantId" = $1 and ("project"."name" ilike $2 or "project"."code" ilike $2)' +
      ' order by "project"."createdAt" desc, "project"."id" desc limit 11',
    values: [TENANT, '%50\\%\\_off\\\\%'],
  });
});

test('a fulltext search: the document against websearch_to_tsquery, or a substring field; ranked with no order, the rank keyed for the cursor', () => {
  const ranked = compile({ ...DEFINITIONS, project: DEFINITIONS.project.replace('search: [name, code]', 'search: [name, { field: code, mode: fulltext }]') }).get('project')!;
  const COLUMNS = '"project"."id", "project"."tenantId", "project"."createdAt", "project"."updatedAt", "project"."name", "project"."code"';
  const RANK = `ts_rank(to_tsvector('simple', coalesce("project"."code", '')), websearch_to_tsquery('simple', $1))`;
  const MATCH = `(to_tsvector('simple', coalesce("project"."code", '')) @@ websearch_to_tsquery('simple', $3) or "project"."name" ilike $4)`;
  assert.equal(pageStatement(ranked, admin, plan(ranked, { search: 'q3 report' })), {
    text: `select ${COLUMNS}, ${RANK}::float8::text as "@k0" from "project" where "project"."tenantId" = $2 and ${MATCH} order by ${RANK} desc, "project"."id" desc limit 11`,
    values: ['q3 report', TENANT, 'q3 report', '%q3 report%'],
  });
  // After a cursor: one row comparison on (rank, id), the rank written once more.
  const after = { ...plan(ranked, { search: 'q3 report' }), after: [0.5, RECORD_ID] };
  assert.equal(pageStatement(ranked, admin, after).text, `select ${COLUMNS}, ${RANK}::float8::text as "@k0" from "project" where "project"."tenantId" = $2 and ${MATCH} and (${RANK}, "project"."id") < ($5, $6) order by ${RANK} desc, "project"."id" desc limit 11`);
  // An order given: no rank, the fulltext condition alone.
  const ordered = pageStatement(ranked, admin, plan(ranked, { search: 'q3', order: { name: 'ASC' } }));
  assert.not.match(ordered.text, 'ts_rank');
  assert.match(ordered.text, ' order by "project"."name" asc, "project"."id" asc');
});

test('a hidden field is never selected', () => {
  assert.not.match(readStatement(project, admin, RECORD_ID).text, 'secret');
});

test('a null filter is `is null`, binding nothing; ordering by id adds no second id', () => {
  assert.equal(pageStatement(label, admin, plan(label, { where: { organizationId: 'null', name: 'x' }, order: { id: 'DESC' } })), {
    text:
      'select "label"."id", "label"."tenantId", "label"."organizationId", "label"."createdAt", "label"."updatedAt", "label"."name" from "label"' +
      ' where "label"."tenantId" = $1 and "label"."organizationId" is null and "label"."name" = $2 order by "label"."id" desc limit 11',
    values: [TENANT, 'x'],
  });
});

test('a keyset batch: after an id, in id order', () => {
  assert.equal(keysetStatement(note, employee, RECORD_ID, 100), {
    text: `select ${NOTE_COLUMNS} from "work_note" where "work_note"."tenantId" = $1 and "work_note"."authorId" = $2 and "work_note"."id" > $3 order by "work_note"."id" asc limit $4`,
    values: [TENANT, EMPLOYEE, RECORD_ID, 100],
  });
  assert.equal(keysetStatement(note, admin, undefined, 100).values, [TENANT, 100]);
});

test('the same plan shape gives the same text whatever the values (one prepared statement)', () => {
  const a = pageStatement(note, employee, plan(note, { where: { minutes: 1 }, skip: 10 }));
  const b = pageStatement(note, callerOf({ ownerScoped: true, employeeId: RECORD_ID }), plan(note, { where: { minutes: 99 }, skip: 40 }));
  assert.is(a.text, b.text);
  assert.not.equal(a.values, b.values);
  assert.is(a.once, undefined);
  // The default page size is part of the text; a first page has no offset.
  const first = pageStatement(note, employee, plan(note, { where: { minutes: 1 } }));
  assert.is(first.text, a.text.replace(' offset $4', ''));
  // Any other page size is bound, and the statement runs unnamed (planned for its values): a
  // client varying take adds no prepared statement.
  const sized = pageStatement(note, employee, plan(note, { where: { minutes: 1 }, take: 5, skip: 10 }));
  assert.is(sized.text, a.text.replace('limit 11 offset $4', 'limit $4 offset $5'));
  assert.equal(sized.values.slice(-2), [6, 10]);
  assert.is(sized.once, true);
});

/** The 400 a plan refuses with, as its messages. */
function refusal(parameters: Record<string, unknown>): string[] {
  try {
    plan(note, parameters);
  } catch (err) {
    if (err instanceof HttpError) return [String(err.status), ...([] as string[]).concat(err.messages)];
    throw err;
  }
  throw new Error('the plan was accepted');
}

test('no plan, so no SQL, for an unknown field, order, relation or parameter: a 400 naming it', () => {
  assert.equal(refusal({ where: { nope: 1 } }), ['400', "where: 'nope' is not filterable; filterable: id, minutes, projectId; relations: project, labels"]);
  assert.equal(refusal({ order: { nope: 'ASC' } }), ['400', "order: 'nope' is not sortable; sortable: id, createdAt, updatedAt, minutes"]);
  assert.equal(refusal({ where: { project: { code: 'x' } } }), ['400', "where.project: 'code' is not filterable; filterable: id, name"]);
  assert.equal(refusal({ relations: ['nope'] }), ['400', "relations: 'nope' is not allowed; allowed: project, labels"]);
  assert.equal(refusal({ search: 'x' }), ['400', 'search is not a supported list parameter of work-note; supported: take, skip, order, where, relations, select, cursor, count, startDate, endDate, tags']);
});

test('another tenant named in a plan is a 403, before any SQL', () => {
  assert.equal(refusal({ where: { tenantId: '7e1a0000-0000-4000-8000-000000000002' } }), ['403', 'Forbidden resource']);
});

test('a definition naming an unknown field or resource does not compile: the file, line and fault', () => {
  const broken = { ...DEFINITIONS, project: DEFINITIONS.project.replace('filters: [name]', 'filters: [nope]').replace('hasMany: work-note', 'hasMany: nothing') };
  try {
    compile(broken);
    assert.unreachable('compiled');
  } catch (err) {
    assert.instance(err, DefinitionError);
    const message = (err as Error).message;
    assert.match(message, /inline\/project\.yaml:\d+:\d+ .*filters.*"nope" is not a field of project/);
    assert.match(message, /inline\/project\.yaml:\d+:\d+ .*"nothing"/);
  }
});

test.run();
