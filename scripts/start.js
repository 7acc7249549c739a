// `npm start`: runs the compiled service (dist/app/start.js) with plain node, once it is sure
// dist/ is current. Otherwise it says in one sentence what to do and exits with code 1, rather
// than serve code older than the sources. Plain JavaScript: nothing is compiled yet when it runs.
import { pathToFileURL } from 'node:url';
import { distProblem, ENTRY } from './dist.js';

const problem = distProblem();
if (problem) {
  console.error(`npm start: ${problem}`);
  process.exit(1);
}
// The processes the service forks (a cluster's preparation and workers) run process.argv[1]:
// the compiled entry itself, not this check again (a source edited while the cluster runs must
// not keep a replaced worker from starting).
process.argv[1] = ENTRY;
await import(pathToFileURL(ENTRY).href);
