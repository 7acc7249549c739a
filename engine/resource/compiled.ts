// What a definition becomes at start-up: everything a request needs, looked up, never re-derived.
import type { OwnerRule } from '../caller.js';
import type { Validator } from '../validation.js';
import type { CompiledFilter } from './filters.js';
import type { ResourceModelClass } from './model.js';
import type { FieldDefinition, ResourceDefinition } from './types.js';

export interface CompiledField {
  name: string;
  definition: FieldDefinition;
  /** One of the columns every record of the scope has (id, tenantId, organizationId, createdAt, updatedAt). */
  base: boolean;
  /** A client may set it in a create, replace or patch body. */
  writable: boolean;
  hidden: boolean;
  /** A column of the scope that may hold null: organizationId of a resource with organizationOptional. */
  nullableBase?: boolean;
}

export interface CompiledRelation {
  name: string;
  kind: 'belongsTo' | 'hasMany' | 'manyToMany';
  target: CompiledResource;
  /** Offered in relations[] (false: written and filtered on only). */
  loadable: boolean;
  via?: string;
  through?: { table: string; from: string; to: string };
  writable: boolean;
  /** Body key that takes plain ids for a writable many-to-many relation: its idsKey, or derived (tags → tagIds). */
  idsKey?: string;
}

export interface CompiledReferenceBy {
  field: string;
  /** The enum field naming the kind of record. */
  discriminator: string;
  /** Each value of the discriminator → the resource whose record the field must name. */
  targets: Map<string, CompiledResource>;
}

export type CountPolicy = { kind: 'exact' } | { kind: 'capped'; limit: number } | { kind: 'estimated'; threshold: number };

export type Operation = 'read' | 'create' | 'update' | 'delete';

/** A resource's search fields by mode: fulltext ones are one document, ranked; substring ones each an ilike. */
export interface SearchModes {
  fulltext: string[];
  substring: string[];
}

export interface CompiledResource {
  name: string;
  definition: ResourceDefinition;
  file: string;
  table: string;
  /** Canonical path under /api first, then its aliases. */
  paths: string[];
  scope: 'tenant' | 'organization';
  /** For organization-scoped resources: the resource their organizationId points at. */
  organizationRoot?: CompiledResource;
  /** Name of the header that may name a new record's organization (Organization-Id). */
  organizationHeader?: string;
  /** A record may belong to no organization (organizationId null): the definition's organizationOptional. */
  organizationOptional: boolean;
  routes: boolean;
  fields: Map<string, CompiledField>;
  /** Columns that may leave the service (every field but the hidden ones). */
  visibleColumns: string[];
  /** The same, qualified with the table, as a page query selects them. */
  selectColumns: string[];
  /** The list parameters this resource accepts (take, skip, order, where, relations, and search, dates, tags when it has them). */
  listParameters: ReadonlySet<string>;
  hiddenFields: string[];
  readOnlyFields: string[];
  writableFields: CompiledField[];
  defaults: Record<string, unknown>;
  references: Array<{ field: string; target: CompiledResource }>;
  /** uuid fields whose target resource is named per record by another field (`referencesBy`). */
  referencesBy: CompiledReferenceBy[];
  relations: Map<string, CompiledRelation>;
  writableRelations: CompiledRelation[];
  /**
   * Parents whose writable hasMany holds this resource's records, by the field naming the parent:
   * a write of a record here touches its parent (updatedAt), so the parent's version moves.
   */
  parentTouches: Array<{ parent: CompiledResource; via: string }>;
  /**
   * Mixed into every record version (sql/version.ts) so that a version says nothing of the
   * database's transaction counter; set by the app from its secret ('' until then).
   */
  versionSalt: string;
  /** Every relations[] path this resource accepts (dot notation, depth ≤ 3, a hasMany only first). */
  relationPaths: Set<string>;
  filters: Map<string, CompiledFilter>;
  sortable: Set<string>;
  /** Every field the search parameter matches (fulltext ones first). */
  search: string[];
  /** The same by mode (sql/search.ts): the fulltext fields form one document, each substring field is matched alone. */
  searchModes: SearchModes;
  dateRange?: string;
  tagRelation?: CompiledRelation;
  maxTake: number;
  /** How a list's total is counted (count.ts): the definition's `count:`, exact by default. */
  count: CountPolicy;
  /** Updates and deletes need If-Match (428 without it): the definition's `ifMatch: required`. */
  requireIfMatch: boolean;
  /**
   * DELETE sets deletedAt and deletedById instead of removing the row; every scope (scopeSql, the
   * model's scoped()) then leaves deleted rows out, unless a list or read asks withDeleted.
   */
  softDelete: boolean;
  /** Records carry createdById and updatedById, set from the caller by every create and update. */
  changedBy: boolean;
  owner?: string;
  /** The application's owner rule, on a resource with an owner field (model.ts: scopeConditions applies it). */
  ownerRule?: OwnerRule;
  permissions: Record<Operation, string>;
  uniqueMessages: UniqueRule[];
  /** Check constraint name → the 400 message of the `rules:` entry it enforces. */
  ruleMessages: Map<string, string>;
  /** Fields a create fills from the caller when the body has none (readOnly ones: always). */
  callerDefaults: Array<{ field: string; claim: string }>;
  /**
   * Fields a replace leaves as stored when the body leaves them out: the organization, the owner
   * (cleared, the record would vanish from its owner's view) and the fields the caller's ids fill.
   */
  keptOnReplace: ReadonlySet<string>;
  validators: {
    create: Validator<Record<string, unknown>>;
    replace: Validator<Record<string, unknown>>;
    patch: Validator<Record<string, unknown>>;
  };
  schemas: { record: object; create: object; replace: object; patch: object };
  model: ResourceModelClass;
}

/** A `unique:` entry of the definition, with the 409 sentence of a violation. */
export interface UniqueRule {
  fields: string[];
  message: string;
  /**
   * Records of no organization, when the rule names organizationId and the resource allows them:
   * PostgreSQL never finds two nulls equal, so they are held to the rule by a unique index of
   * (tenantId, the other fields) over those records only. These are its columns.
   */
  tenantWide?: string[];
}

/**
 * The columns of the unique index that holds a rule over records of no organization (see
 * UniqueRule.tenantWide): tenantId takes organizationId's place. undefined when the rule needs none.
 */
export function tenantWideUniqueColumns(organizationOptional: boolean, fields: string[]): string[] | undefined {
  if (!organizationOptional || !fields.includes('organizationId')) return undefined;
  return ['tenantId', ...fields.filter((f) => f !== 'organizationId')];
}

export type Registry = Map<string, CompiledResource>;

export const MAX_RELATION_DEPTH = 3;
export const DEFAULT_MAX_TAKE = 50;
export const DEFAULT_TAKE = 10;

/** The page size when take is absent: DEFAULT_TAKE, or the resource's maximum when that is lower. */
export const defaultTake = (resource: CompiledResource) => Math.min(DEFAULT_TAKE, resource.maxTake);
