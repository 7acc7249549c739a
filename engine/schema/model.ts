// The schema the definitions need, as plain data: what expected.ts derives, actual.ts is compared
// with (diff.ts), and generate.ts writes a migration for.

/** Column types as PostgreSQL's format_type() names them. */
export type SqlType = 'character varying' | 'text' | 'integer' | 'double precision' | 'boolean' | 'uuid' | 'timestamp with time zone';

export interface ExpectedType {
  sql: SqlType;
  /** character varying: exactly this many characters (a field's maxLength). */
  length?: number;
  /**
   * character varying without a maxLength: any length from this one up (the longest enum value,
   * else 1), or text. A migration written for it uses `generateLength`.
   */
  atLeast?: number;
  generateLength?: number;
}

/** A literal default, or one of the expressions the base columns use. */
export type ExpectedDefault = { value: string | number | boolean } | { expression: 'now' | 'uuid' };

export interface ExpectedForeignKey {
  column: string;
  table: string;
  targetColumn: string;
  /** Checked only where the engine counts on it (join tables, tenantId); otherwise the migration's choice. */
  onDelete?: 'CASCADE' | 'RESTRICT' | 'SET NULL';
  /** What a generated migration uses when onDelete is not prescribed. */
  generateOnDelete: 'CASCADE' | 'RESTRICT' | 'SET NULL';
}

export interface ExpectedColumn {
  name: string;
  type: ExpectedType;
  /** 'either': the service fills it, or it has a default, so both are safe. */
  nullable: 'yes' | 'no' | 'either';
  /** Undefined: not checked (a default the definition does not state is harmless). */
  default?: ExpectedDefault;
  references?: ExpectedForeignKey;
  /** A generated column: whole seconds from the first timestamp to the second. */
  secondsBetween?: [string, string];
  /** Where it comes from, for messages: "fields.label", "scope: organization". */
  why: string;
  /** Why it must be nullable, when `why` does not say it (organizationId of organizationOptional). */
  nullableWhy?: string;
}

export interface ExpectedIndex {
  /**
   * A B-tree: satisfied by any (primary key and unique ones included) whose columns start with
   * these. fulltext: the GIN index of the search document of these columns; trigram: a GIN index
   * of the one column with pg_trgm's operator class (expected only where pg_trgm is installed).
   */
  columns: string[];
  kind?: 'fulltext' | 'trigram';
  why: string;
}

export interface ExpectedUnique {
  columns: string[];
  why: string;
  /**
   * A unique index over the rows where these columns are null only: organizationId (a `unique:`
   * rule over the records of no organization: tenantWideUnique in the migration helpers), deletedAt
   * (a softDelete resource's rule, which deleted records do not hold: uniqueWhereNull).
   */
  whereNull?: string[];
  /** whereNull: the fields of the rule it serves, as a generated migration passes them to tenantWideUnique. */
  ruleFields?: string[];
}

export interface ExpectedCheck {
  name: string;
  field: string;
  atLeast: string;
  why: string;
}

export interface ExpectedTable {
  name: string;
  /** The definition (or relation) that needs it: "employee (resources/employee.yaml)". */
  origin: string;
  kind: 'record' | 'join';
  /** record tables: how recordColumns() is called in a generated migration. */
  scope?: 'tenant' | 'organization';
  columns: ExpectedColumn[];
  primaryKey: string[];
  uniques: ExpectedUnique[];
  indexes: ExpectedIndex[];
  checks: ExpectedCheck[];
}

export interface ActualColumn {
  name: string;
  /** format_type(): "character varying(40)", "integer", "timestamp with time zone". */
  type: string;
  notNull: boolean;
  default: string | null;
  /** The expression of a generated column. */
  generated: string | null;
}

export interface ActualConstraint {
  name: string;
  /** p primary key, u unique, f foreign key, c check. */
  type: 'p' | 'u' | 'f' | 'c' | string;
  columns: string[];
  refTable: string | null;
  refColumns: string[];
  /** ON DELETE as SQL words (foreign keys). */
  onDelete: string | null;
  definition: string;
}

export interface ActualIndex {
  name: string;
  unique: boolean;
  /** The access method: btree, gin, … */
  method: string;
  /** The operator class of each key column (gin_trgm_ops, …). */
  opclasses: string[];
  /** As pg_get_indexdef writes it (an expression index's expression is only there). */
  definition: string;
  /** Plain column indexes only; an expression or partial index does not count. */
  columns: string[];
  plain: boolean;
  /** A partial index's condition, as pg_get_expr writes it ("organizationId" IS NULL); null for others. */
  predicate: string | null;
}

export interface ActualTable {
  name: string;
  columns: Map<string, ActualColumn>;
  constraints: ActualConstraint[];
  indexes: ActualIndex[];
}
