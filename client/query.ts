// Query strings as the service reads them (qs brackets): objects nest as where[user][email]=…,
// arrays repeat their key (relations[]=a&relations[]=b; inside an object with [] added, as
// where[id][in][]=a, so that one value is a list too), arrays of objects are indexed
// (where[or][0][firstName]=…), and null is the word null, which list filters read as "no value"
// (where[organizationId]=null). openapi-fetch's own serializer writes one level of deepObject
// only, so a filter on a related record would be lost.

type Pair = [key: string, value: string];

function pairs(key: string, value: unknown): Pair[] {
  if (value === undefined) return [];
  if (Array.isArray(value)) {
    const nested = key.includes('[') && !key.endsWith('[]');
    return value.flatMap((item, i) =>
      item !== null && typeof item === 'object' ? pairs(`${key}[${i}]`, item) : pairs(nested ? `${key}[]` : key, item),
    );
  }
  if (value !== null && typeof value === 'object') {
    return Object.entries(value).flatMap(([name, inner]) => pairs(`${key}[${name}]`, inner));
  }
  return [[key, String(value)]];
}

export function bracketQuery(query: Record<string, unknown>): string {
  return Object.entries(query)
    .flatMap(([key, value]) => pairs(key, value))
    .map(([key, value]) => `${encodeURIComponent(key)}=${encodeURIComponent(value)}`)
    .join('&');
}
