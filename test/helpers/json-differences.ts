// Where two JSON values differ, as JSON pointers (RFC 6901), in document order and at most `limit`
// of them: a failing comparison of two large documents names the places to look at, instead of
// printing a diff as long as the documents. Key order counts (it shows in the serialized text).

export interface JsonDifference {
  pointer: string;
  what: string;
}

const escapeToken = (token: string) => token.replace(/~/g, '~0').replace(/\//g, '~1');

const kindOf = (value: unknown) => (value === null ? 'null' : Array.isArray(value) ? 'array' : typeof value);

/** How a value is shown in a difference: short, so that a changed 5 kB description stays one line. */
function brief(value: unknown): string {
  const text = JSON.stringify(value) ?? String(value);
  return text.length > 60 ? `${text.slice(0, 57)}...` : text;
}

export function jsonDifferences(expected: unknown, actual: unknown, limit: number): JsonDifference[] {
  const found: JsonDifference[] = [];
  const visit = (a: unknown, b: unknown, pointer: string) => {
    if (found.length >= limit) return;
    if (kindOf(a) !== kindOf(b)) {
      found.push({ pointer, what: `was ${kindOf(a)} ${brief(a)}, is ${kindOf(b)} ${brief(b)}` });
      return;
    }
    if (Array.isArray(a) && Array.isArray(b)) {
      for (let i = 0; i < Math.max(a.length, b.length) && found.length < limit; i++) {
        if (i >= a.length) found.push({ pointer: `${pointer}/${i}`, what: `added ${brief(b[i])}` });
        else if (i >= b.length) found.push({ pointer: `${pointer}/${i}`, what: `removed ${brief(a[i])}` });
        else visit(a[i], b[i], `${pointer}/${i}`);
      }
      return;
    }
    if (kindOf(a) === 'object') {
      const before = found.length;
      const objA = a as Record<string, unknown>;
      const objB = b as Record<string, unknown>;
      for (const key of Object.keys(objA)) {
        if (found.length >= limit) return;
        const at = `${pointer}/${escapeToken(key)}`;
        if (!Object.hasOwn(objB, key)) found.push({ pointer: at, what: `removed ${brief(objA[key])}` });
        else visit(objA[key], objB[key], at);
      }
      for (const key of Object.keys(objB)) {
        if (found.length >= limit) return;
        if (!Object.hasOwn(objA, key)) found.push({ pointer: `${pointer}/${escapeToken(key)}`, what: `added ${brief(objB[key])}` });
      }
      // Same members, other order: the text differs although every value is equal.
      if (found.length === before && Object.keys(objA).join('\0') !== Object.keys(objB).join('\0')) {
        found.push({ pointer, what: `same members in another order: ${brief(Object.keys(objB))}` });
      }
      return;
    }
    if (a !== b) found.push({ pointer, what: `was ${brief(a)}, is ${brief(b)}` });
  };
  visit(expected, actual, '');
  return found;
}
