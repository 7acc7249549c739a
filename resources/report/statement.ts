// A SQL statement written in order with its bindings beside each part, so the placeholders and
// their values cannot drift apart as parts are added conditionally.
export class Statement {
  text = '';
  readonly bindings: unknown[] = [];

  add(text: string, ...bindings: unknown[]): this {
    this.text += text;
    this.bindings.push(...bindings);
    return this;
  }

  /** Identifiers (from our own whitelists) as `??, ??`: knex quotes them. */
  identifiers(names: string[]): this {
    return this.add(names.map(() => '??').join(', '), ...names);
  }
}

export { rowsOf } from '../../engine/db/rows.js';
