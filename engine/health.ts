// The probes a load balancer or an orchestrator polls, public and exempt from rate limits
// (config/limits.yaml):
// - GET /api/health: the service and its database (200, or 503 in the same shape when the
//   database does not answer within HEALTH_TIMEOUT_MS);
// - GET /api/health/live: the process answers at all; never touches the database, so a database
//   outage never gets a healthy process restarted;
// - GET /api/health/ready: whether to send it traffic: 503 from the moment a graceful shutdown
//   begins, while migrations run (another instance's, holding knex's migration lock), and while
//   the database does not answer. The process itself listens only once it has migrated.
import type { Knex } from 'knex';
import type { Context } from 'koa';
import { jsonResponse } from './openapi/fragments.js';
import type { Route } from './route.js';
import { within } from './time-limit.js';
import type { Broadcast } from './db/broadcast.js';

/** What the readiness probe knows of the process beyond the database: set when a graceful shutdown begins. */
export interface ServingState {
  draining: boolean;
}

type Check = { status: 'up' } | { status: 'down'; message: string };
type Checks = Record<string, Check>;

const DATABASE_DOWN: Check = { status: 'down', message: 'The database did not answer' };

/** Answers the checks in Terminus's shape (which Ever Gauzy's clients know), split by outcome: 503 when any is down. */
function answer(ctx: Context, checks: Checks) {
  const entries = Object.entries(checks);
  const up = Object.fromEntries(entries.filter(([, c]) => c.status === 'up'));
  const down = Object.fromEntries(entries.filter(([, c]) => c.status === 'down'));
  const ok = entries.length === Object.keys(up).length;
  ctx.status = ok ? 200 : 503;
  ctx.body = { status: ok ? 'ok' : 'error', info: up, error: down, details: checks };
}

const component = (status: 'up' | 'down') => ({
  type: 'object',
  required: ['status'],
  properties: {
    status: { type: 'string', enum: [status] },
    ...(status === 'down' ? { message: { type: 'string' } } : {}),
  },
});

const checkSchema = { type: 'object', required: ['status'], properties: { status: { type: 'string', enum: ['up', 'down'] }, message: { type: 'string' } } };

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

/** The readiness answer: each check (server, database, migrations) under info when up, under error when down. */
function readinessSchema(overall: 'ok' | 'error') {
  const checks = { type: 'object', additionalProperties: checkSchema, description: 'server, database, migrations and (where processes keep answers another may change) broadcast, by name' };
  return {
    type: 'object',
    required: ['status', 'info', 'error', 'details'],
    properties: { status: { type: 'string', enum: [overall] }, info: checks, error: checks, details: checks },
  };
}

/** Whether knex's migration lock is held (another instance is migrating); no lock table: no knex migrations, none running. */
async function migrationsRunning(db: Knex): Promise<boolean> {
  try {
    const { rows } = await db.raw('select coalesce(max(is_locked), 0) as locked from knex_migrations_lock');
    return Number(rows[0].locked) === 1;
  } catch (err) {
    if ((err as { code?: string })?.code === '42P01') return false;
    throw err;
  }
}

export function healthRoutes(db: Knex, timeoutMs: number, state: ServingState, broadcast?: Broadcast): Route[] {
  return [
    {
      method: 'GET',
      path: '/api/health',
      access: 'public',
      async handler(ctx) {
        let database: Check;
        try {
          await within(db.raw('select 1'), timeoutMs, 'the database');
          database = { status: 'up' };
        } catch {
          database = DATABASE_DOWN;
        }
        answer(ctx, { database });
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
    },
    {
      method: 'GET',
      path: '/api/health/live',
      access: 'public',
      handler(ctx) {
        ctx.body = { status: 'ok' };
      },
      docs: {
        tags: ['health'],
        operationId: 'getLiveness',
        summary: 'Liveness: the process answers',
        description:
          'Public and exempt from rate limits. Always 200 while the process can answer at all; it never asks the database, ' +
          'so an outage of the database does not get a healthy process restarted (readiness says whether to send it traffic).',
        responses: {
          '200': jsonResponse('The process answers', { type: 'object', required: ['status'], properties: { status: { type: 'string', enum: ['ok'] } } }),
        },
      },
    },
    {
      method: 'GET',
      path: '/api/health/ready',
      access: 'public',
      async handler(ctx) {
        const checks: Checks = {};
        if (state.draining) {
          // Shutting down: no database round trip, the answer is no whatever it would say.
          checks.server = { status: 'down', message: 'Shutting down' };
        } else {
          checks.server = { status: 'up' };
          try {
            const running = await within(migrationsRunning(db), timeoutMs, 'the database');
            checks.database = { status: 'up' };
            checks.migrations = running ? { status: 'down', message: 'Migrations are running' } : { status: 'up' };
          } catch {
            checks.database = DATABASE_DOWN;
          }
          // Whether this process hears the others: without it, answers it would keep (a session's) are asked for each time.
          const heard = broadcast?.check();
          if (heard) checks.broadcast = heard;
        }
        answer(ctx, checks);
      },
      docs: {
        tags: ['health'],
        operationId: 'getReadiness',
        summary: 'Readiness: whether to send this instance traffic',
        description:
          'Public and exempt from rate limits. 503 from the moment a graceful shutdown begins (SIGTERM; the process goes on serving ' +
          'for SHUTDOWN_DELAY_MS, then stops taking connections), while migrations run (an instance holds the migration lock), ' +
          'and while the database does not answer within HEALTH_TIMEOUT_MS. On PostgreSQL, broadcast says whether this process hears the ' +
          'others (up either way; with a message while it does not, when it asks the database about every session).',
        responses: {
          '200': jsonResponse('Ready: serving, the database answers, no migration is running', readinessSchema('ok')),
          '503': jsonResponse('Not ready: the failed checks are under error', readinessSchema('error')),
        },
      },
    },
  ];
}
