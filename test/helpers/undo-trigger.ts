// Writes the database undoes as if they had met another write: a statement trigger on a table
// raises a deadlock's (40P01) or a serialization failure's (40001) code for the next N statements
// that write it, on either database (a real deadlock needs two PostgreSQL connections:
// test/resources/conditional-requests.test.ts has them). Its count is a sequence, which the
// rollback of an undone transaction does not undo.
import type { Knex } from 'knex';

export interface UndoTrigger {
  /** From now on, the next `times` statements of those kinds on the table are undone with `code`. */
  undoNext(times: number, code?: '40P01' | '40001'): Promise<void>;
  /** How many such statements the trigger has seen since undoNext. */
  statementsSeen(): Promise<number>;
  /** No more undoing: the table is written as usual. */
  stop(): Promise<void>;
  /** Trigger, function and sequence dropped. */
  drop(): Promise<void>;
}

/** The trigger on `table`, undoing statements of the given kinds (all writes by default) once undoNext says so. */
export async function undoTrigger(db: Knex, table: string, kinds: Array<'insert' | 'update' | 'delete'> = ['insert', 'update', 'delete']): Promise<UndoTrigger> {
  const name = `undo_${table}_${kinds.join('_')}`;
  const calls = `${name}_calls`;
  await db.raw('create sequence ??', [calls]);
  const stop = async () => {
    await db.raw('drop trigger if exists ?? on ??', [name, table]);
  };
  return {
    async undoNext(times, code = '40P01') {
      await db.raw(`create or replace function ${name}() returns trigger language plpgsql as $$
        begin
          if nextval('${calls}') <= ${Number(times)} then raise exception 'undone for the test' using errcode = '${code}'; end if;
          return null;
        end $$`);
      await stop();
      await db.raw(`create trigger ?? before ${kinds.join(' or ')} on ?? for each statement execute function ${name}()`, [name, table]);
      await db.raw('select setval(?, 1, false)', [calls]);
    },
    async statementsSeen() {
      const { rows } = await db.raw('select last_value, is_called from ??', [calls]);
      return rows[0].is_called ? Number(rows[0].last_value) : 0;
    },
    stop,
    async drop() {
      await stop();
      await db.raw(`drop function if exists ${name}()`);
      await db.raw('drop sequence if exists ??', [calls]);
    },
  };
}

/**
 * `write` run while the first statement of `kinds` on `table` is undone once: its result and how
 * many such statements the database saw (the undone one included); the trigger is gone after.
 */
export async function undoneOnce<T>(db: Knex, table: string, kinds: Array<'insert' | 'update' | 'delete'>, write: () => Promise<T>): Promise<{ result: T; statements: number }> {
  const trigger = await undoTrigger(db, table, kinds);
  try {
    await trigger.undoNext(1);
    const result = await write();
    return { result, statements: await trigger.statementsSeen() };
  } finally {
    await trigger.drop();
  }
}
