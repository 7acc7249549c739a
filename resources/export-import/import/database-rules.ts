// What a single create leaves to the database's constraints, checked over the whole file before
// anything is written, so that every row breaking one is listed (the database would stop at the
// first): the `rules:` entries (field >= atLeast) and the `unique:` rules between rows of the file.
import { ruleConstraintName } from '../../../engine/db/migrations.js';
import type { CompiledResource } from '../../../engine/resource/compiled.js';

/** A time or a number, comparable either way (timestamps are ISO strings once prepared). */
const comparable = (value: unknown) => (typeof value === 'string' ? Date.parse(value) : typeof value === 'number' ? value : NaN);

/**
 * The resource's `rules:` (field >= atLeast), which a single create leaves to the database's check
 * constraint: checked here so that every row breaking one is listed, with the definition's sentence.
 */
export function brokenRules(resource: CompiledResource, row: Record<string, unknown>): string[] {
  const broken: string[] = [];
  for (const rule of resource.definition.rules ?? []) {
    const value = comparable(row[rule.field]);
    const least = comparable(row[rule.atLeast]);
    if (!Number.isNaN(value) && !Number.isNaN(least) && value < least) {
      broken.push(resource.ruleMessages.get(ruleConstraintName(resource.table, rule.field, rule.atLeast)) ?? `${rule.field} breaks a rule of the record`);
    }
  }
  return broken;
}

/**
 * Two rows of the file with the same values for a `unique:` rule: the later one is listed with the
 * rule's sentence (a clash with a record already stored is the database's to find, at write time).
 */
export class DuplicateFinder {
  private readonly seen: Array<Map<string, number>>;

  constructor(private readonly resource: CompiledResource) {
    this.seen = resource.uniqueMessages.map(() => new Map());
  }

  check(rowNumber: number, row: Record<string, unknown>): string[] {
    const found: string[] = [];
    for (const [i, { fields, message, tenantWide }] of this.resource.uniqueMessages.entries()) {
      const values = fields.map((f) => row[f]);
      // NULLs never clash in a PostgreSQL unique constraint, but for records of no organization,
      // which a unique index of their own holds to the rule (tenantWide).
      const held = (v: unknown, f: string) => (v !== null && v !== undefined) || (tenantWide !== undefined && f === 'organizationId' && v === null);
      if (!values.every((v, j) => held(v, fields[j]))) continue;
      const key = JSON.stringify(values);
      const first = this.seen[i].get(key);
      if (first === undefined) this.seen[i].set(key, rowNumber);
      else found.push(`${message} (as row ${first} of the file)`);
    }
    return found;
  }
}
