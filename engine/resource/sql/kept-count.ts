// A count beside its table's change mark (engine/db/change-marks.ts, total-cache.ts): the mark,
// then the count in the branch of a CASE that PostgreSQL takes only when the mark moved from the
// one the kept total was counted at. A page's statement counts so (select.ts), and so does a
// count run alone (`/count`, an empty page after a skip or a cursor).
import { markSql } from '../../db/change-marks.js';
import type { CompiledResource } from '../compiled.js';
import { COUNTED_COLUMN, countBound, countLimit } from '../count.js';
import { PAGE_MARK_COLUMN, type TotalMark } from '../total-cache.js';
import type { Statement } from './runner.js';
import { id, SqlText } from './text.js';

/**
 * Appends the count as the column `alias` (`count` appends its subquery); with a mark, the mark
 * first (PAGE_MARK_COLUMN) and the count as `case when <mark> = <held> then null else … end`.
 */
export function countColumns(sql: SqlText, mark: TotalMark | undefined, alias: string, count: (sql: SqlText) => void): SqlText {
  if (mark) {
    sql.values.push(mark.tenantId);
    const markText = markSql(mark.table, `$${sql.values.length}`);
    sql.sql(`${markText} as ${id(PAGE_MARK_COLUMN)}, case when ${markText} = `).value(mark.held).sql(' then null else ');
  }
  count(sql);
  return sql.sql(`${mark ? ' end' : ''} as ${id(alias)}`);
}

/** `matches` (the list's filtered select) counted alone beside the mark: one row, its COUNTED_COLUMN null when the mark stood. */
export function markedCountStatement(resource: CompiledResource, matches: Statement, mark: TotalMark): Statement {
  const sql = new SqlText().sql('select ');
  sql.values.push(...matches.values);
  countColumns(sql, mark, COUNTED_COLUMN, (s) => s.sql(`(select count(*) from (${matches.text}${countLimit(countBound(resource))}) as "matches")`));
  return { ...sql.statement(), once: matches.once };
}
