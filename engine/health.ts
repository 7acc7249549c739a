// GET /api/health: public, exempt from limits, 503 when the database does not answer in time.
import type Router from '@koa/router';
import type { Knex } from 'knex';
import { within } from './time-limit.js';

export function registerHealth(router: Router, db: Knex, timeoutMs: number) {
  router.get('/api/health', async (ctx) => {
    try {
      await within(db.raw('select 1'), timeoutMs, 'the database');
      const up = { database: { status: 'up' } };
      ctx.body = { status: 'ok', info: up, error: {}, details: up };
    } catch {
      const down = { database: { status: 'down', message: 'The database did not answer' } };
      ctx.status = 503;
      ctx.body = { status: 'error', info: {}, error: down, details: down };
    }
  });
}
