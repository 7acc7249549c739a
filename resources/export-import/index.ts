// Export and import of any resource's records (docs/modules.md#export-and-import): export/
// streams CSV, JSON and a zip of every resource; import/ takes CSV or a JSON array and writes
// all rows or none.
import type { Module } from '../../engine/module.js';
import { exportRoutes } from './export/index.js';
import { importRoutes, importSchemas } from './import/index.js';

export const exportImportModule: Module = {
  name: 'export-import',
  routes: (engine) => [...exportRoutes(engine), ...importRoutes(engine)],
  openapiSchemas: importSchemas,
};
