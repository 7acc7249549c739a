// One stored value as a CSV cell (the import reads cells back by the same rules): empty for
// null, ISO 8601 UTC for a timestamp, true/false, a number as JavaScript writes it, JSON text
// for an object or array, a string as it is; then formula neutralisation, on every cell.
import { neutralise } from '../exchange.js';

export function csvCell(value: unknown): string {
  if (value === null || value === undefined) return '';
  if (value instanceof Date) return neutralise(value.toISOString());
  if (typeof value === 'string') return neutralise(value);
  if (typeof value === 'object') return neutralise(JSON.stringify(value));
  return neutralise(String(value));
}
