// `npm start`: this application, run by the engine's process model (one process, or a cluster's
// primary, preparation and workers: engine/process/main.ts). The project (the whole app) is
// imported only by the processes that build it, never by a cluster's primary.
import { runProcess } from '../engine/process/main.js';

await runProcess(async () => (await import('./project.js')).project);
