// Names around a stored image: the record's default name from the client's file name, and the
// file name a download offers. Neither is ever used as a path.
import type { ImageKind } from './kinds.js';

// eslint-disable-next-line no-control-regex
const CONTROL = /[\u0000-\u001f\u007f-\u009f]/g;

/**
 * The client's file name without any folder part (either slash), control characters or
 * surrounding blanks, cut to `maxLength` characters; undefined when nothing is left.
 */
export function nameFromFilename(filename: string, maxLength: number): string | undefined {
  const base = filename.split(/[\\/]/).pop() ?? '';
  const clean = base.replace(CONTROL, '').trim();
  if (!clean || clean === '.' || clean === '..') return undefined;
  return Array.from(clean).slice(0, maxLength).join('').trim();
}

/** The name a download offers: the record's name, with the file's extension when it lacks one. */
export function downloadName(name: unknown, id: string, kind: ImageKind): string {
  const clean = typeof name === 'string' ? name.replace(CONTROL, '').split(/[\\/]/).pop()!.trim() : '';
  if (!clean) return `${id}.${kind.ext}`;
  const extensions = kind.ext === 'jpg' ? ['jpg', 'jpeg'] : [kind.ext];
  const hasOwn = extensions.some((ext) => clean.toLowerCase().endsWith(`.${ext}`));
  return hasOwn ? clean : `${clean}.${kind.ext}`;
}
