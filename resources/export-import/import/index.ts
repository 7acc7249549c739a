// Import: POST /api/import/{resource} (route.ts) for the resources the API creates (importable.ts);
// the file read from the body (body.ts), its rows (rows.ts), checked by the create's rules and
// the database's (database-rules.ts), written all or none (write.ts), described in OpenAPI (openapi.ts).
import type { OwnBody } from '../../../engine/module.js';

export { registerImportRoutes } from './route.js';
export { importOpenApi } from './openapi.js';

/** The import route reads its own body (multipart, CSV or JSON, larger than the JSON limit). */
export const IMPORT_OWN_BODIES: OwnBody[] = [{ method: 'POST', path: /^\/api\/import\/[^/]+\/?$/ }];
