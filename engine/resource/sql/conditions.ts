// One filter condition (engine/resource/filters.ts) as SQL on a column, its values always bound.
// ne and nin count an empty field as different (is distinct from): "not Paid" includes the
// records with no status, as a person reading the filter expects.
import type { Condition, FilterValue } from '../filters.js';
import type { SqlText } from './text.js';

const COMPARISONS = { lt: '<', lte: '<=', gt: '>', gte: '>=' } as const;

export function conditionSql(sql: SqlText, column: string, condition: Condition): SqlText {
  const { op, value } = condition;
  switch (op) {
    case 'eq':
      return value === null ? sql.sql(`${column} is null`) : sql.sql(`${column} = `).value(value);
    case 'ne':
      return value === null ? sql.sql(`${column} is not null`) : sql.sql(`${column} is distinct from `).value(value);
    case 'in':
      return sql.sql(`${column} = any(`).value(value).sql(')');
    case 'nin':
      return sql.sql(`(${column} is null or ${column} <> all(`).value(value).sql('))');
    case 'between': {
      const [from, to] = value as FilterValue[];
      return sql.sql(`${column} between `).value(from).sql(' and ').value(to);
    }
    case 'ilike':
      // The pattern as PostgreSQL reads it: % and _ wildcards, a backslash makes the next character literal.
      return sql.sql(`${column} ilike `).value(value);
    case 'isNull':
      return sql.sql(`${column} ${value ? 'is null' : 'is not null'}`);
    default:
      return sql.sql(`${column} ${COMPARISONS[op]} `).value(value);
  }
}
