// Names the generated routes share with their documentation and the CORS headers they expose.

/** The sub-paths of the list's other spellings (Ever Gauzy's): the same page, or its total alone. */
export const PAGINATION_PATH = 'pagination';
export const COUNT_PATH = 'count';

/** The sub-path of the bulk writes (bulk-routes.ts). */
export const BULK_PATH = 'bulk';

/** Says whether total is exact (false: the count policy's cap or estimate, docs/query-language.md#counting). */
export const TOTAL_EXACT_HEADER = 'X-Total-Exact';
