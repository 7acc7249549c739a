// The shape of a resource definition (resources/*.yaml), as its JSON Schema
// (definition.schema.json beside this file) allows it.
import type { FilterOperator } from './filters.js';

/** A filterable field with the operators it allows (engine/resource/filters.ts). */
export interface FilterDefinition {
  field: string;
  operators: FilterOperator[];
}

export type FieldType = 'string' | 'text' | 'integer' | 'number' | 'boolean' | 'uuid' | 'date' | 'timestamp';

export interface FieldDefinition {
  type: FieldType;
  description?: string;
  required?: boolean;
  minLength?: number;
  maxLength?: number;
  minimum?: number;
  maximum?: number;
  exclusiveMinimum?: number;
  exclusiveMaximum?: number;
  enum?: string[];
  format?: 'email' | 'uri';
  default?: string | number | boolean;
  /** Returned, never written by a client (set by the server or a database default). */
  readOnly?: boolean;
  /** Never returned and never written by a client (hashes, secrets). */
  hidden?: boolean;
  /** Name of the resource this uuid points at; the value must exist in the caller's tenant. */
  references?: string;
  /**
   * A uuid naming a record of one of several resources, chosen per record by another field: `field`
   * is a string field with an enum, and `resources` maps each of its values to a resource. The value
   * must name a record of that resource in the caller's tenant, checked as `references` is.
   */
  referencesBy?: ReferencesByDefinition;
  /** On create, when the body has none: the caller's claim of this name, userId say (with readOnly: always). */
  callerDefault?: string;
  /** Computed by the database from other fields (a generated column); read-only. */
  computed?: { secondsBetween: [string, string] };
}

export interface ReferencesByDefinition {
  /** The field whose value names the kind of record (a string field with an enum). */
  field: string;
  /** Each enum value of `field` → the name of the resource its records are. */
  resources: Record<string, string>;
}

/**
 * exact: every match counted. capped: at most that many counted (more: the cap, flagged inexact).
 * estimated: exact up to that many, past it the planner's estimate (never below the threshold).
 */
export type CountDefinition = 'exact' | { capped: number } | { estimated: number };

/** A rule between two fields of one record, enforced by a check constraint. */
export interface RuleDefinition {
  field: string;
  /** When both are set: field >= atLeast. */
  atLeast: string;
  message?: string;
}

export interface RelationDefinition {
  belongsTo?: string;
  hasMany?: string;
  manyToMany?: string;
  /** belongsTo: the field of this resource holding the target id; hasMany: the target's field pointing here. */
  via?: string;
  /** manyToMany: the join table and its two columns. */
  through?: { table: string; from: string; to: string };
  /**
   * manyToMany: set on create/update as `rel: [{id}]` or `relIds: [...]`. hasMany: the body may
   * carry `rel: [{...child fields}]`, written with the record in one transaction; the list
   * replaces the record's children (absent: they are left as they are).
   */
  writable?: boolean;
  /** false: not offered in relations[] (kept out of the whitelist), still written and filtered on. */
  loadable?: boolean;
  /**
   * Writable manyToMany only: the body key of the plain ids. Default: the relation's name with a
   * trailing "ies" made "y" or a trailing "s" dropped, then "Ids" (categories → categoryIds, tags → tagIds).
   */
  idsKey?: string;
  description?: string;
}

export type Permission = string;

export interface PermissionsDefinition {
  read: Permission;
  write?: Permission;
  create?: Permission;
  update?: Permission;
  delete?: Permission;
}

export interface ResourceDefinition {
  name: string;
  description?: string;
  table?: string;
  path?: string;
  aliases?: string[];
  scope: 'tenant' | 'organization';
  /**
   * scope organization only: a record may belong to no organization (organizationId null, a record
   * of the whole tenant), which a create makes when nothing names its organization.
   */
  organizationOptional?: boolean;
  /** This resource's records are the organizations that `scope: organization` records belong to. */
  organizationRoot?: { header?: string };
  /** false: the engine derives the model, validators and schemas but no routes (a module adds its own). */
  routes?: boolean;
  permissions: PermissionsDefinition;
  owner?: string;
  fields: Record<string, FieldDefinition>;
  relations?: Record<string, RelationDefinition>;
  /** Filterable fields: a name (its type's default operators) or { field, operators }. */
  filters?: Array<string | FilterDefinition>;
  sort?: string[];
  /** Searched fields: a name (substring) or { field, mode } (docs/query-language.md#search). */
  search?: Array<string | SearchEntry>;
  dateRange?: string;
  /** The manyToMany relation tags[] filters on; by default the one named tags, if any. */
  tagFilter?: string;
  maxTake?: number;
  /** How a list's total is counted (docs/query-language.md#counting); absent: exact. */
  count?: CountDefinition;
  /** required: updates and deletes must send If-Match (docs/api-conventions.md#conditional-requests); optional by default. */
  ifMatch?: 'optional' | 'required';
  /** true: DELETE marks the record deleted instead of removing it (docs/api-conventions.md#soft-delete). */
  softDelete?: boolean;
  /** true: records carry createdById and updatedById, the users who created and last changed them. */
  changedBy?: boolean;
  rules?: RuleDefinition[];
  /** Rate limits of this resource's own endpoints (docs/rate-limits.md). */
  limits?: ResourceLimitDefinition[];
  unique?: Array<{ fields: string[]; message?: string }>;
}

export interface ResourceLimitDefinition {
  method: 'GET' | 'POST' | 'PUT' | 'DELETE';
  /** Below the resource's path and each alias (/upload); absent: the path itself; /*: everything below. */
  path?: string;
  /** caller (default): the token's user, else the client address; address: the client address always. */
  per?: 'caller' | 'address';
  requests: number;
  /** Seconds. */
  window: number;
  reason?: string;
}

/** A `search` entry with its mode: fulltext (words, a GIN index on the document) or substring (ilike, a trigram index). */
export interface SearchEntry {
  field: string;
  mode: SearchMode;
}

export type SearchMode = 'fulltext' | 'substring';
