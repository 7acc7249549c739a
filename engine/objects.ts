// A JSON object (not null, not an array): what bodies, filters and definitions are checked to be.
export const isPlainObject = (value: unknown): value is Record<string, unknown> =>
  typeof value === 'object' && value !== null && !Array.isArray(value);
