// `npm run bench:floor`: what Koa itself costs a request, before any of the service's work. Two
// servers in this process's children answer GET /api/employee/{id} the same way: the bearer
// token checked (jsonwebtoken, as the service and the raw server check it), one prepared
// statement on PostgreSQL (DATABASE_URL; a row of constants, so the database's share is small
// and the same for both), the row as JSON. One is node:http alone, the other Koa with
// @koa/router and the token check as a middleware. Measured with autocannon in halves ordered
// node, Koa, Koa, node; prints req/s, CPU µs per request and Koa ÷ node:http.
//
// Settings: DATABASE_URL (required), BENCH_DURATION (s, 10), BENCH_CONNECTIONS (32).
import { fork, type ChildProcess } from 'node:child_process';
import { createSecretKey, randomUUID } from 'node:crypto';
import { createServer } from 'node:http';
import { once } from 'node:events';
import autocannon from 'autocannon';
import Router from '@koa/router';
import jwt from 'jsonwebtoken';
import Koa from 'koa';
import pg from 'pg';
import { cpuSecondsOf } from './lib/processes.js';

const SECRET = 'framework-floor-secret-of-enough-length';
const ROW = `select $1::uuid as "id", 'Ada' as "firstName", 'Lovelace' as "lastName", now() as "createdAt", true as "isActive"`;

async function serve(kind: string) {
  const key = createSecretKey(Buffer.from(SECRET));
  const pool = new pg.Pool({ connectionString: process.env.DATABASE_URL, max: 10 });
  const read = async (id: string) => (await pool.query({ name: 'row', text: ROW, values: [id] })).rows[0];
  const verified = (header: string | undefined) => {
    if (!header?.startsWith('Bearer ')) return false;
    try {
      jwt.verify(header.slice(7), key, { algorithms: ['HS256'] });
      return true;
    } catch {
      return false;
    }
  };
  let server;
  if (kind === 'node') {
    server = createServer(async (req, res) => {
      if (!verified(req.headers.authorization)) return res.writeHead(401).end();
      const text = JSON.stringify(await read(req.url!.slice('/api/employee/'.length)));
      res.writeHead(200, { 'content-type': 'application/json; charset=utf-8', 'content-length': Buffer.byteLength(text) }).end(text);
    });
  } else {
    const app = new Koa();
    const router = new Router();
    router.get('/api/employee/:id', async (ctx) => {
      ctx.body = await read(ctx.params.id);
    });
    app.use(async (ctx, next) => {
      if (!verified(ctx.get('authorization'))) return void (ctx.status = 401);
      await next();
    });
    app.use(router.routes());
    server = createServer(app.callback());
  }
  server.keepAliveTimeout = 60_000;
  server.listen(0, '127.0.0.1', () => process.send!({ port: (server.address() as { port: number }).port }));
}

async function start(kind: string): Promise<{ child: ChildProcess; url: string }> {
  const child = fork(new URL(import.meta.url), [kind], { execArgv: process.execArgv });
  const [message] = (await once(child, 'message')) as [{ port: number }];
  return { child, url: `http://127.0.0.1:${message.port}` };
}

async function main() {
  if (!process.env.DATABASE_URL) throw new Error('DATABASE_URL is required (PostgreSQL)');
  const seconds = Number(process.env.BENCH_DURATION ?? 10);
  const connections = Number(process.env.BENCH_CONNECTIONS ?? 32);
  const token = jwt.sign({ sub: 'bench' }, createSecretKey(Buffer.from(SECRET)), { algorithm: 'HS256' });
  const servers = { node: await start('node'), koa: await start('koa') };
  const totals = { node: { requests: 0, cpu: 0 }, koa: { requests: 0, cpu: 0 } };
  try {
    for (const kind of ['node', 'koa', 'koa', 'node'] as const) {
      const { child, url } = servers[kind];
      const cpuBefore = cpuSecondsOf(child.pid!);
      const result = await autocannon({ url: `${url}/api/employee/${randomUUID()}`, connections, duration: seconds / 2, headers: { authorization: `Bearer ${token}` } });
      if (result.non2xx || result.errors) throw new Error(`${kind}: ${result.non2xx} non-2xx answers, ${result.errors} errors`);
      totals[kind].requests += result.requests.total;
      totals[kind].cpu += cpuSecondsOf(child.pid!) - cpuBefore;
    }
  } finally {
    for (const { child } of Object.values(servers)) child.kill();
  }
  const rate = (kind: 'node' | 'koa') => Math.round(totals[kind].requests / seconds);
  const cpu = (kind: 'node' | 'koa') => Math.round((totals[kind].cpu * 1e6) / totals[kind].requests);
  console.log(`node:http ${rate('node')} req/s, ${cpu('node')} µs CPU per request`);
  console.log(`Koa       ${rate('koa')} req/s, ${cpu('koa')} µs CPU per request`);
  console.log(`Koa ÷ node:http: ${(rate('koa') / rate('node')).toFixed(2)} (req/s), ${(cpu('koa') / cpu('node')).toFixed(2)} (CPU per request)`);
}

if (process.argv[2]) await serve(process.argv[2]);
else await main();
