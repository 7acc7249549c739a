// What a create handler gets of its request's Idempotency-Key (guard.ts), so that the key costs
// the create no statement of its own where it can: a create of one row writes the key in its own
// statement (inStatement, database store), and the record and its key commit together. A create
// that needs more (links, children, a transaction) claims the key apart first (apart), as every
// other idempotent route does, and the guard keeps its answer after it.
import type { Context } from 'koa';
import type { KeyInStatement } from '../resource/sql/write.js';
import type { Kept } from './store.js';

/** A create's status: the one a row kept by its own statement is replayed with. */
const CREATED = 201;

/** Thrown by a create whose statement found its key taken: the guard looks up what holds it. */
export class KeyTaken extends Error {
  constructor() {
    super('the idempotency key was taken');
  }
}

/** Thrown by a claim apart that found the key done: the guard answers the kept answer. */
export class KeptAnswer extends Error {
  constructor(readonly answer: Kept) {
    super('the idempotency key holds an answer');
  }
}

export class KeyedCreate {
  /** How the key was taken: by the create's own statement, or claimed apart (the claim's token). */
  taken?: { by: 'statement' } | { by: 'claim'; token: string };

  constructor(
    private readonly statementKey: (status: number) => KeyInStatement,
    private readonly claim: () => Promise<string>,
  ) {}

  /** The key for the create's own statement. */
  inStatement(): KeyInStatement {
    this.taken = { by: 'statement' };
    return this.statementKey(CREATED);
  }

  /** Claims the key before a create of several statements (409, 422, or the kept answer, thrown). */
  async apart(): Promise<void> {
    this.taken = { by: 'claim', token: await this.claim() };
  }
}

const KEYED_CREATE = Symbol('keyed create');

export function setKeyedCreate(ctx: Context, keyed: KeyedCreate): void {
  (ctx.state as Record<symbol, unknown>)[KEYED_CREATE] = keyed;
}

/** The request's key as its create handler takes it; undefined without a key. */
export function keyedCreateOf(ctx: Context): KeyedCreate | undefined {
  return (ctx.state as Record<symbol, KeyedCreate | undefined>)[KEYED_CREATE];
}
