// A process that logs through the service's own stdout logger and then ends as argv[2] says, for
// log.test.ts to read what reached stdout: `exit` (process.exit(3) in the same turn), `throw` (an
// uncaught exception), `hang` (an error line, then a busy loop until it is killed).
import { rootLogger } from '../../engine/log/log.js';

const mode = process.argv[2];
for (let i = 0; i < 200; i++) rootLogger.info({ i, pad: 'x'.repeat(40) }, 'line');
if (mode === 'exit') process.exit(3);
if (mode === 'throw') throw new Error('thrown after the lines');
if (mode === 'hang') {
  rootLogger.error({ why: 'stuck' }, 'about to hang');
  console.error('hanging'); // stderr: tells the test the line was written
  for (;;);
}
