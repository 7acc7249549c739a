// Import: POST /api/import/<resource> (route.ts) for the resources the API creates (importable.ts);
// the file read from the body (body.ts), its rows (rows.ts), checked by the create's rules and
// the database's (database-rules.ts), written all or none (write.ts), described in OpenAPI (docs.ts).
export { importRoutes } from './route.js';
export { importSchemas } from './docs.js';
