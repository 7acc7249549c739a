// GET /api/health (engine/health.ts): public, and answers 503 in the same shape when the database is down.
import type { OpenApiPaths } from '../module.js';
import { jsonResponse } from './fragments.js';

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

export function healthPaths(): OpenApiPaths {
  return {
    '/api/health': {
      get: {
        tags: ['health'],
        operationId: 'getHealth',
        summary: 'Health check for load balancers',
        description: 'Public and exempt from rate limits. 503 when the database does not answer in time.',
        security: [],
        responses: {
          '200': jsonResponse('The service and its database are up', healthSchema('ok', 'up')),
          '503': jsonResponse('The database did not answer', healthSchema('error', 'down')),
        },
      },
    },
  };
}
