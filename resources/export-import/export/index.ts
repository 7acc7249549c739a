// Export (docs/modules.md#export-and-import): routes.ts streams one resource as CSV or JSON, or a zip of every
// resource the caller may read; docs.ts describes both.
export { exportRoutes } from './routes.js';
