// The one serving process (the embedded database, or WEB_CONCURRENCY=1), and its first start on an
// embedded data folder that holds no database yet. PGlite's initdb grows the process's memory by
// hundreds of MB that are not given back while it lives (docs/operations.md, "Memory (embedded
// database)"), so a child creates and migrates the database (the preparation a cluster has,
// prepare-in-child.ts) and this process then opens it as any later start does. Meanwhile it loads
// the app's code, on the other core.
import type { Config } from '../config/config.js';
import { holdsDatabase } from '../db/data-folder.js';
import { handOverSignals, prepareInChild } from './prepare-in-child.js';
import type { Project } from './project.js';

export async function serveAloneFirstPrepared(config: Config, loadProject: () => Promise<Project>): Promise<void> {
  if (config.databaseUrl || holdsDatabase(config.dataDir)) return (await import('./serving.js')).serveAlone(config, await loadProject());
  const loading = Promise.all([import('./serving.js'), loadProject()]);
  loading.catch(() => {}); // awaited below: a failure to load is thrown there, once the child is done
  if ((await prepareInChild({ subject: 'the embedded database', next: 'opening the prepared database' })) !== 0) process.exit(1);
  const [{ serveAlone }, project] = await loading;
  // The child has just migrated it, and held the folder's lock while it did.
  await serveAlone(config, project, { migrated: true });
  handOverSignals();
}
