// A row as the driver reads it, from the JSON image PostgreSQL made of it (to_json): what a
// create's own statement keeps for an idempotent replay (engine/idempotency/keyed-create.ts), and
// the related rows a read builds as JSON (sql/relations.ts).
// The two differ only in timestamps, which the driver reads as Dates and JSON holds as text (with
// a T): parsed by the driver's parser, the Date is the same, and so is the answer made from it.
import pg from 'pg';
import type { CompiledResource } from '../compiled.js';

// The driver's own parser of timestamptz text: it reads every offset PostgreSQL writes (one with
// seconds, a historical date's local mean time, included), which Date's parser does not.
const parseTimestamp = pg.types.getTypeParser(pg.types.builtins.TIMESTAMPTZ) as (text: string) => Date;

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
    if (typeof value === 'string') image[column] = parseTimestamp(value.replace('T', ' '));
  }
  return image;
}
