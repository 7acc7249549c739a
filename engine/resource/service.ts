// The seven operations of a resource, for any resource: generated routes and hand-written
// modules both call these, so tenancy, validation and error mapping behave the same everywhere.
import type { Knex } from 'knex';
import type { Caller } from '../caller.js';
import { badRequest, notFound } from '../errors.js';
import { definedViolation } from './defined-violation.js';
import { preconditionFailed } from '../http/conditional.js';
import type { CompiledRelation, CompiledResource } from './compiled.js';
import { UUID_PATTERN } from './fields.js';
import type { ListQuery } from './list-query.js';
import { columnsAt, trimToSelection, type RelationTree, type Selection } from './selection.js';
import { relatedRowsRead, relationColumnsSql, relationTree } from './sql/relations.js';
import { run } from './sql/runner.js';
import { undoneByAnother } from '../db/errors.js';
import { onceMoreIfUndone, transactionOnceMoreIfUndone } from '../db/undone.js';
import { hasLiveParents } from './sql/scope.js';
import { matchesStatement, orderKeyAlias, orderValuesOf, pageStatement, readStatement, TOTAL_COLUMN, type RelatedColumns } from './sql/select.js';
import { effectiveOrder, type ListCursors } from './cursor.js';
import { PAGE_MARK_COLUMN, type TotalCache } from './total-cache.js';
import { ListTotals } from './list-totals.js';
import { countBound, type CountResult } from './count.js';
import { deleteStatement, insertRowsStatement, insertStatement, recoverStatement, updateStatement, type KeyInStatement } from './sql/write.js';
import { KeyTaken, type KeyedCreate } from '../idempotency/keyed-create.js';
import { keepVersion } from './versions.js';
import { prepareChildren, prepareWriteDeferred, type PreparedWrite, type References, type WriteContext } from './write-body.js';

export interface ListResult {
  items: unknown[];
  total: number;
  /** false: total is the count policy's cap or estimate (engine/resource/count.ts), or a lower bound (count=none). */
  exact: boolean;
  /** Where the next page starts (cursor.ts), when more items follow. */
  nextCursor?: string;
}

export function checkId(id: string, label = 'id'): string {
  if (!UUID_PATTERN.test(id)) throw badRequest(`${label} must be a UUID`);
  return id.toLowerCase();
}

/** Rows per insert statement in createMany, and bound values per statement (PostgreSQL takes at most 65535). */
const BATCH_ROWS = 500;
const BATCH_VALUES = 30_000;

/** A write of many rows failed on one of them: `index` is its place in the batch, `cause` what went wrong. */
export class BatchRowError extends Error {
  constructor(
    readonly index: number,
    override readonly cause: unknown,
  ) {
    super(`row ${index + 1} of the batch failed`);
  }
}

/** The most items one bulk write takes unless configured (BULK_MAX_ITEMS). */
export const DEFAULT_BULK_MAX_ITEMS = 1000;

export class ResourceService {
  constructor(
    readonly db: Knex,
    readonly resource: CompiledResource,
    readonly cursors: ListCursors,
    /** The most items one bulk write (resource/bulk.ts) takes. */
    readonly bulkMaxItems = DEFAULT_BULK_MAX_ITEMS,
    /** Totals kept while their table's mark stands (total-cache.ts); none: every page counts. */
    keptTotals?: TotalCache,
  ) {
    this.totals = new ListTotals(db, resource, keptTotals);
  }

  private readonly totals: ListTotals;

  /**
   * The page, its count (none with count=none) and its relations in one statement. A cursor is
   * checked first: the page starts after the item it names.
   */
  async list(caller: Caller, query: ListQuery): Promise<ListResult> {
    const { db, resource } = this;
    if (query.cursor) query.after = this.cursors.open(resource, caller.tenantId, query, query.cursor);
    const tree = relationTree(query.relations);
    const columns = columnsAt(resource, query.select, '', tree);
    const counting = query.count !== 'none';
    // A page reached by skip has its total beside it to say whether more follow: an exact one
    // says it; past a cap or an estimate, a full page is taken to have more (the page after the
    // last is then empty). A cursor page, or one without a count, reads one row more instead.
    const totalTells = counting && !query.after;
    const related = this.relatedColumns(caller, tree, query.select);
    const matches = () => matchesStatement(resource, caller, query);
    const plan = counting ? await this.totals.plan(caller.tenantId, matches()) : undefined;
    const items = await run(db, pageStatement(resource, caller, query, columns, !totalTells, counting ? { bound: countBound(resource), mark: plan?.mark } : undefined, related));
    const counts = counting ? await this.totals.ofPage(items, query, matches, plan) : undefined;
    const more = totalTells ? (counts!.exact ? query.skip + items.length < counts!.total : items.length === query.take) : items.length > query.take;
    if (items.length > query.take) items.length = query.take;
    const last = items[items.length - 1];
    const nextCursor = more && last ? this.cursors.seal(resource, caller.tenantId, query, orderValuesOf(resource, query, last)) : undefined;
    // Left undefined rather than deleted (JSON leaves them out either way): a delete would turn
    // every row into a slow dictionary-mode object for the serializer.
    const aliases = [...effectiveOrder(query).map((_, i) => orderKeyAlias(i)), TOTAL_COLUMN, PAGE_MARK_COLUMN].filter((alias) => last && alias in last);
    for (const item of items) for (const alias of aliases) item[alias] = undefined;
    relatedRowsRead(resource, items, tree);
    if (query.select) trimToSelection(items, resource, query.select, '', tree);
    // Without a count: what this answer knows of, and one more when more follow (docs/query-language.md).
    const { total, exact } = counts ?? { total: (query.after ? 0 : query.skip) + items.length + (more ? 1 : 0), exact: !more && !query.after };
    return { items, total, exact, ...(nextCursor ? { nextCursor } : {}) };
  }

  /** The relations of `tree` as columns of the rows they hang from (none without relations). */
  private relatedColumns(caller: Caller, tree: RelationTree, select: Selection | undefined): RelatedColumns | undefined {
    if (!tree.size) return undefined;
    return (sql, ref) => relationColumnsSql(sql, this.resource, caller, tree, select, ref);
  }

  /** The list's total alone: the same filters and scope, by the resource's count policy (a cursor is checked, not applied). */
  async count(caller: Caller, query: ListQuery): Promise<CountResult> {
    if (query.cursor) this.cursors.open(this.resource, caller.tenantId, query, query.cursor);
    const matches = matchesStatement(this.resource, caller, query);
    return this.totals.alone(matches, await this.totals.plan(caller.tenantId, matches));
  }

  /** One record; `relations` loaded onto it, `select` narrowing what it answers (selection.ts). */
  async read(caller: Caller, id: string, relations: string[] = [], select?: Selection, withDeleted = false): Promise<Record<string, any>> {
    const { db, resource } = this;
    const tree = relationTree(relations);
    const related = this.relatedColumns(caller, tree, select);
    const [found] = await run(db, readStatement(resource, caller, checkId(id), columnsAt(resource, select, '', tree), withDeleted, related));
    if (!found) throw notFound();
    keepVersion(found);
    relatedRowsRead(resource, [found], tree);
    if (select) trimToSelection([found], resource, select, '', tree);
    return found;
  }

  /**
   * `key`: the request's Idempotency-Key (engine/idempotency/keyed-create.ts). A record of one row
   * is one statement: its references looked up, the row, its key. One with links or children
   * looks its references up first, claims the key, then writes in a transaction.
   */
  async create(caller: Caller, body: unknown, context?: WriteContext, key?: KeyedCreate) {
    const { prepared, references, check } = await prepareWriteDeferred(this.db, this.resource, caller, 'create', body, context);
    if (!prepared.links.length && !prepared.children.length) return this.insertAlone(caller, prepared, references, key?.inStatement());
    await check();
    await key?.apart();
    return this.write(caller, prepared, (trx) => this.insertRow(trx, caller, prepared));
  }

  /**
   * One row in one statement with its reference checks and its key (either may be absent). When
   * it writes nothing, a second statement tells why: a 400 naming the references that are
   * missing; else, with references, it runs once more, then KeyTaken when there is a key.
   */
  private async insertAlone(caller: Caller, prepared: PreparedWrite, references: References, key: KeyInStatement | undefined) {
    const statement = insertStatement(this.resource, { ...prepared.row, tenantId: caller.tenantId }, caller.userId, key, references.lookups);
    // Twice at most: a reference missing when the insert ran but there when counted appeared in
    // between. No row back means nothing was written (no table of the engine has a trigger that
    // writes a row elsewhere), so running it again writes at most once.
    for (let attempt = 1; ; attempt++) {
      let row: Record<string, any> | undefined;
      try {
        [row] = await onceMoreIfUndone(() => run(this.db, statement));
      } catch (err) {
        if (key?.isConflict(err)) throw new KeyTaken();
        definedViolation([this.resource], err);
      }
      if (row) return keepVersion(row);
      // A keyed second attempt that wrote nothing found its key taken (its references were there).
      if (attempt === 1 || !key) await references.refuseMissing(this.db);
      if (attempt === 1 && references.lookups.length) continue;
      // Its references all there, the row went in unless the key was taken.
      if (key) throw new KeyTaken();
      throw new Error(`the insert into ${this.resource.table} wrote no row (a trigger skipping it?)`);
    }
  }

  /**
   * The update and delete operations take If-Match's `versions` (http/conditional.ts): given, the
   * record changes only at one of them, else 412 (404 when there is no such record).
   */
  async replace(caller: Caller, id: string, body: unknown, versions?: readonly string[]) {
    return this.update(caller, id, body, 'replace', versions);
  }

  async modify(caller: Caller, id: string, body: unknown, versions?: readonly string[]) {
    return this.update(caller, id, body, 'patch', versions);
  }

  async remove(caller: Caller, id: string, versions?: readonly string[]): Promise<void> {
    const recordId = checkId(id);
    const statement = deleteStatement(this.resource, caller, recordId, versions);
    const deleting = () => onceMoreIfUndone(() => run(this.db, statement));
    let deleted = await deleting();
    // Once more, on a fresh snapshot, when a parent may have been missed (update()).
    if (!deleted.length && hasLiveParents(this.resource)) deleted = await deleting();
    if (!deleted.length) throw await this.missed(this.db, caller, recordId, versions);
  }

  /**
   * A softDelete resource's deleted record back among the live ones (404 when there is no deleted
   * record of that id in the caller's scope; 412 when it is not at one of `versions`).
   */
  async recover(caller: Caller, id: string, versions?: readonly string[]): Promise<Record<string, any>> {
    const recordId = checkId(id);
    if (!this.resource.softDelete) throw notFound();
    try {
      const [row] = await onceMoreIfUndone(() => run(this.db, recoverStatement(this.resource, caller, recordId, versions)));
      if (row) return keepVersion(row);
    } catch (err) {
      // Another record took its unique values while it was deleted: the rule's own 409.
      definedViolation([this.resource], err);
    }
    if (!versions) throw notFound();
    const [deleted] = await run(this.db, readStatement(this.resource, caller, recordId, ['id', 'deletedAt'], true));
    throw deleted?.deletedAt ? preconditionFailed() : notFound();
  }

  /** A change of one row is one statement, its references checked in it; one with links or children looks them up first. */
  private async update(caller: Caller, id: string, body: unknown, mode: 'replace' | 'patch', versions?: readonly string[]) {
    const recordId = checkId(id);
    const { prepared, references, check } = await prepareWriteDeferred(this.db, this.resource, caller, mode, body, { recordId });
    const alone = !prepared.links.length && !prepared.children.length;
    if (!alone) await check();
    const statement = updateStatement(this.resource, caller, recordId, prepared.row, versions, alone ? references.lookups : []);
    const checked = alone && references.lookups.length > 0;
    // Twice at most when it checks references, as insertAlone does: one that appeared between the
    // change and the count must not make the record look missing (404) or changed (412). So too
    // when the row's parent is checked: a parent another transaction created, and moved the row
    // into, while this one waited for the row is not in the statement's snapshot.
    const again = checked || hasLiveParents(this.resource);
    return this.write(caller, prepared, async (db) => {
      for (let attempt = 1; ; attempt++) {
        const [row] = await run(db, statement);
        if (row) return row;
        if (attempt === 1 && again) {
          // A missing reference is the 400, whatever else stopped the write.
          if (checked) await references.refuseMissing(db);
          continue;
        }
        throw await this.missed(db, caller, recordId, versions);
      }
    });
  }

  /** Why a write by id changed nothing: the record is not there (404), or not at a version If-Match named (412). */
  private async missed(db: Knex, caller: Caller, recordId: string, versions: readonly string[] | undefined) {
    if (!versions) return notFound();
    const [found] = await run(db, readStatement(this.resource, caller, recordId, ['id']));
    return found ? preconditionFailed() : notFound();
  }

  /**
   * Many creates already prepared (prepareWrite, outside any transaction: on a single-connection
   * database a query not given the transaction would wait for it forever) written in ONE
   * transaction, each with its links and children as create() writes them: all land or none do.
   * The rows come back in the order of `prepared`, each as create() answers it. A failure is a
   * BatchRowError naming the row (its index in `prepared`) it happened on, with the definition's
   * sentence for a unique or `rules:` violation as create() would answer it.
   */
  async createMany(caller: Caller, prepared: PreparedWrite[]): Promise<Array<Record<string, any>>> {
    const perBatch = Math.max(1, Math.min(BATCH_ROWS, Math.floor(BATCH_VALUES / (this.resource.fields.size + 1))));
    let at = -1;
    try {
      return await transactionOnceMoreIfUndone(this.db, async (trx) => {
        at = -1;
        const rows: Array<Record<string, any>> = [];
        for (let start = 0; start < prepared.length; start += perBatch) {
          const batch = prepared.slice(start, start + perBatch);
          // Plain rows go in one statement per batch, inside a savepoint: if it fails, the rows are
          // written again one by one, and the one that fails names itself.
          const written = batch.every((one) => !one.links.length && !one.children.length) ? await this.insertBatch(trx, caller, batch) : undefined;
          if (written) {
            rows.push(...written);
            continue;
          }
          for (const [i, one] of batch.entries()) {
            at = start + i;
            rows.push(await this.insertOne(trx, caller, one));
          }
        }
        // Links and children leave the rows alone: the versions their statements returned are final.
        return rows.map(keepVersion);
      });
    } catch (err) {
      if (at < 0) throw err;
      let cause: unknown = err;
      try {
        definedViolation([this.resource, ...prepared[at].children.map((c) => c.relation.target)], err);
      } catch (mapped) {
        cause = mapped;
      }
      throw new BatchRowError(at, cause);
    }
  }

  /**
   * Rows without links or children in one insert, returned in order; undefined (nothing written)
   * when a row fails it. Undone by another write, it fails the whole transaction instead, to run
   * again from the start (no row is to blame, and one by one would meet that write again).
   */
  private async insertBatch(trx: Knex.Transaction, caller: Caller, batch: PreparedWrite[]): Promise<Array<Record<string, any>> | undefined> {
    try {
      return await trx.transaction((savepoint) => run(savepoint, insertRowsStatement(this.resource, batch.map((one) => ({ ...one.row, tenantId: caller.tenantId })), caller.userId)));
    } catch (err) {
      if (undoneByAnother(err)) throw err;
      return undefined;
    }
  }

  /** One new row of the caller's tenant, as create() inserts it. */
  private async insertRow(db: Knex, caller: Caller, prepared: PreparedWrite) {
    const [row] = await run(db, insertStatement(this.resource, { ...prepared.row, tenantId: caller.tenantId }, caller.userId));
    return row;
  }

  /** One row, its links and its children, as create() writes them. */
  private async insertOne(trx: Knex.Transaction, caller: Caller, one: PreparedWrite) {
    const row = await this.insertRow(trx, caller, one);
    await this.writeRelated(trx, caller, one, row);
    return row;
  }

  /** A written row's many-to-many links and children; the children are set on the row, so the client learns their ids. */
  async writeRelated(trx: Knex.Transaction, caller: Caller, prepared: PreparedWrite, row: Record<string, any>) {
    await writeLinks(trx, row.id, prepared.links);
    for (const { relation, bodies } of prepared.children) row[relation.name] = await this.replaceChildren(trx, caller, relation, row, bodies);
  }

  /**
   * The row, its links and its children land together or not at all. A row alone is one statement,
   * atomic by itself: it needs no transaction (two round trips fewer).
   */
  private async write(caller: Caller, prepared: PreparedWrite, writeRow: (db: Knex) => Promise<Record<string, any>>) {
    try {
      if (!prepared.links.length && !prepared.children.length) return keepVersion(await onceMoreIfUndone(() => writeRow(this.db)));
      return await transactionOnceMoreIfUndone(this.db, async (trx) => {
        const row = await writeRow(trx);
        await this.writeRelated(trx, caller, prepared, row);
        // Links and children leave the row alone: the version its statement returned is final.
        return keepVersion(row);
      });
    } catch (err) {
      definedViolation([this.resource, ...prepared.children.map((c) => c.relation.target)], err);
    }
  }

  /** A writable hasMany sent in a body: the record's children become exactly the ones sent. */
  private async replaceChildren(trx: Knex.Transaction, caller: Caller, relation: CompiledRelation, parentRow: Record<string, any>, bodies: Array<Record<string, unknown>>) {
    const child = relation.target;
    const fresh = await prepareChildren(trx, this.resource, caller, relation, parentRow, bodies);
    await child.model.scoped(caller, trx).where(`${child.table}.${relation.via}`, parentRow.id).delete();
    if (!fresh.length) return [];
    const rows = await trx(child.table)
      .insert(fresh.map((c) => ({ ...c.row, tenantId: caller.tenantId })))
      .returning(child.visibleColumns);
    // PostgreSQL returns the rows of a multi-row insert in the order of its values.
    for (const [i, c] of fresh.entries()) await writeLinks(trx, rows[i].id, c.links);
    return rows;
  }
}

/** Each writable many-to-many relation sent: the record's links become exactly the ids sent. */
async function writeLinks(trx: Knex.Transaction, id: string, links: PreparedWrite['links']) {
  for (const { relation, ids } of links) {
    const t = relation.through!;
    await trx(t.table).where(t.from, id).delete();
    if (ids.length) await trx(t.table).insert(ids.map((linked) => ({ [t.from]: id, [t.to]: linked })));
  }
}
