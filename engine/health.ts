// GET /api/health: public, exempt from limits (config/limits.yaml), 503 in the same shape when the
// database does not answer in time.
import type { Knex } from 'knex';
import { jsonResponse } from './openapi/fragments.js';
import type { Route } from './route.js';
import { within } from './time-limit.js';

const component = (status: 'up' | 'down') => ({
  type: 'object',
  required: ['status'],
  properties: {
    status: { type: 'string', enum: [status] },
    ...(status === 'down' ? { message: { type: 'string' } } : {}),
  },
});

function healthSchema(overall: 'ok' | 'error', database: 'up' | 'down') {
  const checks = { type: 'object', properties: { database: component(database) } };
  const empty = { type: 'object', properties: {}, description: 'No checks' };
  return {
    type: 'object',
    required: ['status', 'info', 'error', 'details'],
    properties: {
      status: { type: 'string', enum: [overall] },
      info: overall === 'ok' ? checks : empty,
      error: overall === 'ok' ? empty : checks,
      details: checks,
    },
  };
}

export function healthRoute(db: Knex, timeoutMs: number): Route {
  return {
    method: 'GET',
    path: '/api/health',
    access: 'public',
    async handler(ctx) {
      try {
        await within(db.raw('select 1'), timeoutMs, 'the database');
        const up = { database: { status: 'up' } };
        ctx.body = { status: 'ok', info: up, error: {}, details: up };
      } catch {
        const down = { database: { status: 'down', message: 'The database did not answer' } };
        ctx.status = 503;
        ctx.body = { status: 'error', info: {}, error: down, details: down };
      }
    },
    docs: {
      tags: ['health'],
      operationId: 'getHealth',
      summary: 'Health check for load balancers',
      description: 'Public and exempt from rate limits. 503 when the database does not answer in time.',
      responses: {
        '200': jsonResponse('The service and its database are up', healthSchema('ok', 'up')),
        '503': jsonResponse('The database did not answer', healthSchema('error', 'down')),
      },
    },
  };
}
