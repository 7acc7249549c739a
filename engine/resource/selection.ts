// select[]: the fields a list, a search or a read answers. select[]=firstName narrows the record
// (id is always there), select[]=user.email a loaded relation (naming it loads it). The SQL reads
// only what is answered, plus the key columns the relations below need, which are taken out of
// the answer after loading.
import type { CompiledResource } from './compiled.js';

/** Relation path ('' for the resource itself) → the fields named for it. */
export type Selection = ReadonlyMap<string, ReadonlySet<string>>;
/** user, user.role, organization → {user: {role: {}}, organization: {}}: each relation named once. */
export type RelationTree = Map<string, RelationTree>;

/** The resource a relation path leads to (a path relations[] takes). */
export function resourceAt(resource: CompiledResource, path: string): CompiledResource {
  let current = resource;
  if (path) for (const name of path.split('.')) current = current.relations.get(name)!.target;
  return current;
}

/** What select[] takes on a resource: its visible fields, and path.field for every relation path. */
export function selectableNames(resource: CompiledResource): string[] {
  const names = [...resource.visibleColumns];
  for (const path of resource.relationPaths) names.push(...resourceAt(resource, path).visibleColumns.map((field) => `${path}.${field}`));
  return names;
}

/** Checks each name against the resource and its relation paths; undefined after a problem. */
export function parseSelection(resource: CompiledResource, names: string[], problems: string[]): Selection | undefined {
  const selection = new Map<string, Set<string>>();
  const before = problems.length;
  for (const name of names) {
    const dot = name.lastIndexOf('.');
    const path = dot < 0 ? '' : name.slice(0, dot);
    const field = name.slice(dot + 1);
    if (dot >= 0 && !resource.relationPaths.has(path)) {
      problems.push(`select: '${name}' names no relation of ${resource.name} that relations[] takes (${[...resource.relationPaths].join(', ') || 'none'})`);
      continue;
    }
    const target = resourceAt(resource, path);
    if (!target.visibleColumns.includes(field)) {
      problems.push(`select: '${name}' is not a field of ${target.name}; selectable: ${target.visibleColumns.map((f) => (path ? `${path}.${f}` : f)).join(', ')}`);
      continue;
    }
    let fields = selection.get(path);
    if (!fields) selection.set(path, (fields = new Set()));
    fields.add(field);
  }
  return problems.length > before ? undefined : selection;
}

/**
 * The columns to read at `path`: every visible one when nothing narrows it; otherwise id, the
 * fields named, and the key of each belongsTo relation loaded from there.
 */
export function columnsAt(resource: CompiledResource, selection: Selection | undefined, path: string, below: RelationTree | undefined): readonly string[] {
  const named = selection?.get(path);
  if (!named && !(selection && path === '')) return resource.visibleColumns;
  const keep = new Set(['id', ...(named ?? [])]);
  for (const name of below?.keys() ?? []) {
    const relation = resource.relations.get(name)!;
    if (relation.kind === 'belongsTo') keep.add(relation.via!);
  }
  return resource.visibleColumns.filter((column) => keep.has(column));
}

/** Takes out of the loaded rows the key columns read only to load relations. */
export function trimToSelection(rows: Array<Record<string, unknown>>, resource: CompiledResource, selection: Selection, path: string, tree: RelationTree): void {
  const named = selection.get(path);
  if (named || path === '') {
    const keep = new Set(['id', ...(named ?? []), ...tree.keys()]);
    for (const row of rows) for (const key of Object.keys(row)) if (!keep.has(key)) delete row[key];
  }
  for (const [name, below] of tree) {
    const related = rows.flatMap((row) => {
      const value = row[name];
      return Array.isArray(value) ? value : value ? [value as Record<string, unknown>] : [];
    });
    trimToSelection(related, resource.relations.get(name)!.target, selection, path ? `${path}.${name}` : name, below);
  }
}
