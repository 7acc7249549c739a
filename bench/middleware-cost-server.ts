// The compiled service (dist/, as `npm start` runs it) with some of its Koa middleware replaced by
// a pass-through, for bench/middleware-cost.ts. MIDDLEWARE_SKIP lists the positions to take out
// (comma-separated, 0 = outermost); MIDDLEWARE_NAMES_FILE, when set, receives the stack's names.
// Only a bench may do this: what is left may answer differently (the bench checks the status).
import { writeFileSync } from 'node:fs';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import type { Middleware } from 'koa';
import { DIST } from '../scripts/dist.js';

const compiled = (file: string) => import(pathToFileURL(path.join(DIST, file)).href);
const { runProcess } = await compiled('engine/process/main.js');
const { project } = await compiled('app/project.js');

const skipped = new Set((process.env.MIDDLEWARE_SKIP ?? '').split(',').filter(Boolean).map(Number));
const passThrough: Middleware = (_ctx, next) => next();

await runProcess(async () => ({
  ...project,
  createApp(...args: unknown[]) {
    const app = project.createApp(...args);
    const stack: Middleware[] = app.koa.middleware;
    if (process.env.MIDDLEWARE_NAMES_FILE) writeFileSync(process.env.MIDDLEWARE_NAMES_FILE, JSON.stringify(stack.map((m, i) => m.name || `#${i}`)));
    for (const position of skipped) stack[position] = passThrough;
    return app;
  },
}));
