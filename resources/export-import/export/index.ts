// Export (docs/modules.md#export-and-import): routes.ts streams one resource as CSV or JSON, or a zip of every
// resource the caller may read; openapi.ts describes both.
export { exportOpenApi } from './openapi.js';
export { registerExportRoutes } from './routes.js';
