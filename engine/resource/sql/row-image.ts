// A written row as the driver reads it, from the JSON image PostgreSQL made of it (to_json): what
// a create's own statement keeps for an idempotent replay (engine/idempotency/keyed-create.ts).
// The two differ only in timestamps, which the driver reads as Dates and JSON holds as text; the
// Date made from either is the same (both keep milliseconds), and so is the answer made from it.
import type { CompiledResource } from '../compiled.js';

const timestampColumns = new WeakMap<CompiledResource, string[]>();

function timestampsOf(resource: CompiledResource): string[] {
  let columns = timestampColumns.get(resource);
  if (!columns) {
    columns = [...resource.fields.values()].filter((f) => f.definition.type === 'date' || f.definition.type === 'timestamp').map((f) => f.name);
    timestampColumns.set(resource, columns);
  }
  return columns;
}

export function rowFromImage(resource: CompiledResource, image: Record<string, unknown>): Record<string, unknown> {
  for (const column of timestampsOf(resource)) {
    const value = image[column];
    if (typeof value === 'string') image[column] = new Date(value);
  }
  return image;
}
