// A statement being written: text with $n placeholders and the values they stand for, so that
// a client value only ever reaches PostgreSQL as a bound parameter.
import type { Statement } from './runner.js';

/** A definition's name as an SQL identifier (names are validated, the quoting is for case and keywords). */
export const id = (name: string) => `"${name.replace(/"/g, '""')}"`;

/** "table"."column" */
export const col = (ref: string, column: string) => `${id(ref)}.${id(column)}`;

export class SqlText {
  text = '';
  readonly values: unknown[] = [];

  /** Appends literal SQL (never a client value). */
  sql(text: string): this {
    this.text += text;
    return this;
  }

  /** Appends a placeholder for `value`. */
  value(value: unknown): this {
    this.values.push(value);
    this.text += `$${this.values.length}`;
    return this;
  }

  statement(): Statement {
    return { text: this.text, values: this.values };
  }
}
