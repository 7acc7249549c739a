// The list's `search` as SQL, and the index expressions that serve it. One function writes each
// expression for both the query and the migration's index: PostgreSQL uses an expression index
// only for the very same expression, so the two must never be written twice.
//
//   fulltext   the fields as one document, to_tsvector('simple', …) @@ websearch_to_tsquery: words,
//              "quoted phrases", or, -word; a GIN index on the document. The 'simple' configuration
//              lowercases and does not stem or drop stop words: names and mixed languages match
//              as written.
//   substring  field ilike %text%: a GIN trigram index (pg_trgm) answers it where the database has
//              the extension, for three characters and more.
import type { CompiledResource } from '../compiled.js';
import { col, id, type SqlText } from './text.js';

/** The text search configuration of every fulltext document and query. */
export const SEARCH_CONFIGURATION = 'simple';

/** The fields of a fulltext search as one document; `ref` qualifies the columns (none in an index). */
export function fulltextDocument(columns: readonly string[], ref?: string): string {
  const column = (name: string) => (ref ? col(ref, name) : id(name));
  return `to_tsvector('${SEARCH_CONFIGURATION}', ${columns.map((name) => `coalesce(${column(name)}, '')`).join(` || ' ' || `)})`;
}

/** The client's search text as a text search query, at the placeholder `at` ($n). */
export const fulltextQuery = (at: string) => `websearch_to_tsquery('${SEARCH_CONFIGURATION}', ${at})`;

/** A resource's fulltext document as its statements write it (qualified), made once per resource. */
const documents = new WeakMap<CompiledResource, string>();
function documentOf(resource: CompiledResource): string {
  let document = documents.get(resource);
  if (document === undefined) documents.set(resource, (document = fulltextDocument(resource.searchModes.fulltext, resource.table)));
  return document;
}

/** How well a record's document matches the query at `at`: the rank a fulltext search is ordered by. */
export const rankSql = (resource: CompiledResource, at: string) => `ts_rank(${documentOf(resource)}, ${fulltextQuery(at)})`;

const escapeLike = (text: string) => text.replace(/[\\%_]/g, (c) => `\\${c}`);

/** ` and (…)`: the records whose fulltext document matches `text`, or one of whose substring fields contains it. */
export function searchSql(sql: SqlText, resource: CompiledResource, text: string): SqlText {
  const { fulltext, substring } = resource.searchModes;
  const table = resource.table;
  const terms: string[] = [];
  if (fulltext.length) {
    sql.values.push(text);
    terms.push(`${documentOf(resource)} @@ ${fulltextQuery(`$${sql.values.length}`)}`);
  }
  if (substring.length) {
    sql.values.push(`%${escapeLike(text)}%`);
    const at = `$${sql.values.length}`;
    terms.push(...substring.map((field) => `${col(table, field)} ilike ${at}`));
  }
  return sql.sql(` and (${terms.join(' or ')})`);
}
