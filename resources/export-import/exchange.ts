// What export and import agree on: which resource a path names, and how a CSV cell that a
// spreadsheet would run as a formula is made inert on the way out and restored on the way in.
import type { Engine } from '../../engine/module.js';
import type { CompiledResource } from '../../engine/resource/compiled.js';
import { HttpError } from '../../engine/errors.js';

/**
 * The resource named in /api/export/{resource} or /api/import/{resource}: its name or one of its
 * aliases (tags, tasks, …; an alias with a slash cannot be one path segment). Unknown: 404.
 */
export function resourceNamed(engine: Engine, name: string): CompiledResource {
  // The router has already decoded the segment: timesheet%2Ftime-log arrives with its slash.
  if (name.includes('/')) throw new HttpError(404, `There is no resource named "${name}"`);
  for (const resource of engine.registry.values()) {
    if (resource.name === name || resource.paths.includes(name)) return resource;
  }
  throw new HttpError(404, `There is no resource named "${name}"`);
}

// OWASP's CSV injection guidance: a cell starting with one of these is a formula to a spreadsheet
// (tab and carriage return too, which some spreadsheets strip before reading the rest).
// A cell that already begins with an apostrophe gets one more, so that restore() is exact.
const FORMULA_START = /^[=+\-@\t\r']/;
const NEUTRALISED = /^'[=+\-@\t\r']/;

/** A cell a spreadsheet shows as text: a leading apostrophe before a formula character. */
export const neutralise = (cell: string): string => (FORMULA_START.test(cell) ? `'${cell}` : cell);

/** The value a neutralised cell stood for (an import of our own export gets back what was stored). */
export const restore = (cell: string): string => (NEUTRALISED.test(cell) ? cell.slice(1) : cell);
