import { createServer } from 'node:http';
import { createSecretKey } from 'node:crypto';
import Koa from 'koa';
import Router from '@koa/router';
import jwt from 'jsonwebtoken';
import pg from 'pg';
const mode = process.argv[2];
const key = createSecretKey(Buffer.from('secret-secret-secret-secret-secret'));
const pool = new pg.Pool({ connectionString: 'postgres://postgres@127.0.0.1:5432/test', max: 10, options: '-c search_path=bench_10k' });
const text = 'select "employee"."id", "employee"."tenantId", "employee"."organizationId", "employee"."createdAt", "employee"."updatedAt", "employee"."firstName", "employee"."lastName", "employee"."userId", "employee"."startedWorkOn", "employee"."endWork", "employee"."billRateValue", "employee"."billRateCurrency", "employee"."payPeriod", "employee"."isActive" from "employee" where "employee"."id" = $1 and "employee"."tenantId" = $2';
const { rows: [one] } = await pool.query('select id, "tenantId" from employee limit 1');
const q = (id) => pool.query({ name: 'g', text, values: [id, one.tenantId] });
const ok = (auth) => { jwt.verify(auth.slice(7), key, { algorithms: ['HS256'] }); };
if (mode === 'raw') {
  createServer(async (req, res) => {
    try { ok(req.headers.authorization); } catch { res.writeHead(401); return res.end(); }
    const id = req.url.slice('/api/employee/'.length);
    const r = await q(id); const t = JSON.stringify(r.rows[0]);
    res.writeHead(200, { 'content-type': 'application/json; charset=utf-8', 'content-length': Buffer.byteLength(t) }); res.end(t);
  }).listen(3999);
} else {
  const app = new Koa(); const router = new Router();
  router.get('/api/employee/:id', async (ctx) => { const r = await q(ctx.params.id); ctx.body = r.rows[0]; });
  app.use(async (ctx, next) => { try { ok(ctx.get('authorization')); } catch { ctx.status = 401; return; } await next(); });
  app.use(router.routes());
  createServer(app.callback()).listen(3999);
}
console.log(one.id, jwt.sign({ sub: 'x' }, key, { algorithm: 'HS256' }));
