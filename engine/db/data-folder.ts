// Whether an embedded data folder holds a database yet, told without loading PGlite (the process
// model asks before it loads anything else).
import { existsSync } from 'node:fs';
import path from 'node:path';

/** PostgreSQL writes PG_VERSION into every data folder it makes; PGlite runs initdb where there is none. */
export const holdsDatabase = (dir: string) => existsSync(path.join(dir, 'PG_VERSION'));
