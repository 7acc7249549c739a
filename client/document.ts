// The service's OpenAPI document, built in this process the way the server builds it at start-up,
// so generating the client needs no running server and no database: the app is assembled on a
// knex handle that never connects (building the document runs no query).
import knex from 'knex';
import { createProjectApp } from '../app/create-app.js';
import { loadConfig } from '../engine/config/config.js';
import { modules } from '../resources/modules.js';

/**
 * The document of a deployment that sets nothing: its configured numbers (the rate limits each
 * operation describes) are the defaults, whatever this shell's environment says, so every machine
 * generates the same types.
 */
export async function serviceDocument(): Promise<Record<string, unknown>> {
  const db = knex({ client: 'pg' });
  const app = createProjectApp({ config: loadConfig({}), db, modules, log: () => {} });
  try {
    return structuredClone(app.openapi);
  } finally {
    await app.close();
    await db.destroy();
  }
}
