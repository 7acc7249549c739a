// Export and import of any resource's records (docs/modules.md#export-and-import): export/
// streams CSV, JSON and a zip of every resource; import/ takes CSV or a JSON array and writes
// all rows or none.
import type { Module } from '../../engine/module.js';
import { exportOpenApi, registerExportRoutes } from './export/index.js';
import { IMPORT_OWN_BODIES, importOpenApi, registerImportRoutes } from './import/index.js';

export const exportImportModule: Module = {
  name: 'export-import',
  ownBodies: IMPORT_OWN_BODIES,
  register(router, engine) {
    registerExportRoutes(router, engine);
    registerImportRoutes(router, engine);
  },
  openapi(engine) {
    return { ...exportOpenApi(engine), ...importOpenApi(engine) };
  },
};
