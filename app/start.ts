// `npm start`: this application, run by the engine's process model (one process, or a cluster's
// primary, preparation and workers: engine/process/main.ts).
import { runProcess } from '../engine/process/main.js';
import { project } from './project.js';

await runProcess(project);
