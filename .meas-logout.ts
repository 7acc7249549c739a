import { randomBytes } from 'node:crypto';
import request from 'supertest';
import { startServer, dropSchema, killServers } from './test/helpers/server-process.js';
const DATABASE_URL = process.env.DATABASE_URL!;
const schema = `meas_${randomBytes(4).toString('hex')}`;
const PASSWORD = 'Str0ng!Passw0rd';
const env = { DATABASE_URL, DATABASE_SCHEMA: schema, WEB_CONCURRENCY: '2' };
const a = await startServer(env);
const b = await startServer(env);
const [ha, hb] = [request(a.url), request(b.url)];
const times: number[] = [];
let stored = 0;
for (let i = 0; i < 30; i += 1) {
  const email = `m${i}-${randomBytes(3).toString('hex')}@example.com`;
  await ha.post('/api/auth/register').send({ user: { firstName: 'M', lastName: 'M', email }, password: PASSWORD, confirmPassword: PASSWORD });
  const token = (await ha.post('/api/auth/login').send({ email, password: PASSWORD })).body.token;
  for (let k = 0; k < 6; k += 1) await (k % 2 ? ha : hb).get('/api/user/me').set('Authorization', `Bearer ${token}`);
  const t0 = performance.now();
  await ha.post('/api/auth/logout').set('Authorization', `Bearer ${token}`);
  times.push(performance.now() - t0);
  const res = await Promise.all(Array.from({ length: 10 }, (_, j) => (j % 2 ? ha : hb).post('/api/tags').set('Authorization', `Bearer ${token}`).send({ name: `x${i}-${j}`, color: 'red' })));
  stored += res.filter((r) => r.status === 201).length;
}
times.sort((x, y) => x - y);
console.log(JSON.stringify({ logoutMs: { median: times[15].toFixed(1), p90: times[27].toFixed(1), max: times[29].toFixed(1) }, writesAfterLogout: 300, stored }));
await a.stop(); await b.stop(); killServers(); await dropSchema(DATABASE_URL, schema);
