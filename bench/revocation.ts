// `npm run bench:revocation`: how fast a sign-out reaches every process, and what it costs. Two
// instances of the compiled service, each a cluster of two workers (BENCH_REVOCATION_WORKERS), on
// one PostgreSQL database (DATABASE_URL, a fresh schema). Each round registers and signs in a user,
// sends reads alternating the instances so every process keeps the session, times
// POST /api/auth/logout, then sends at once 10 creates with the signed-out token, alternating the
// instances. Prints the sign-out's median, p90 and max, and how many of the writes were stored
// (docs/authentication.md, "How fast an ended session is refused"). A measurement, not a test.
import { randomBytes } from 'node:crypto';
import request from 'supertest';
import { dropSchema, killServers, startServer } from '../test/helpers/server-process.js';

const DATABASE_URL = process.env.DATABASE_URL;
if (!DATABASE_URL) throw new Error('bench:revocation needs DATABASE_URL: several processes share one PostgreSQL database');
const ROUNDS = Number(process.env.BENCH_REVOCATION_ROUNDS ?? 30);
const WORKERS = process.env.BENCH_REVOCATION_WORKERS ?? '2';
const PASSWORD = 'Str0ng!Passw0rd';
const schema = `bench_revocation_${randomBytes(4).toString('hex')}`;
const env = { DATABASE_URL, DATABASE_SCHEMA: schema, WEB_CONCURRENCY: WORKERS };

const a = await startServer(env);
const b = await startServer(env);
try {
  const [httpA, httpB] = [request(a.url), request(b.url)];
  const either = (i: number) => (i % 2 ? httpA : httpB);
  const times: number[] = [];
  let stored = 0;
  for (let round = 0; round < ROUNDS; round += 1) {
    const email = `revocation-${round}-${randomBytes(3).toString('hex')}@example.com`;
    await httpA.post('/api/auth/register').send({ user: { firstName: 'Rev', lastName: 'Ocation', email }, password: PASSWORD, confirmPassword: PASSWORD });
    const token = (await httpA.post('/api/auth/login').send({ email, password: PASSWORD })).body.token as string;
    const auth = { Authorization: `Bearer ${token}` };
    // Each request a connection of its own: the clusters hand them to their workers in turn.
    for (let i = 0; i < 6; i += 1) await either(i).get('/api/user/me').set(auth);
    const started = performance.now();
    await httpA.post('/api/auth/logout').set(auth);
    times.push(performance.now() - started);
    const writes = await Promise.all(Array.from({ length: 10 }, (_, i) => either(i).post('/api/tags').set(auth).send({ name: `after-${round}-${i}`, color: 'red' })));
    stored += writes.filter((res) => res.status === 201).length;
  }
  times.sort((x, y) => x - y);
  const at = (q: number) => Number(times[Math.min(times.length - 1, Math.floor(q * times.length))].toFixed(1));
  console.log(JSON.stringify({ processes: 2 * Number(WORKERS), rounds: ROUNDS, logoutMs: { median: at(0.5), p90: at(0.9), max: at(1) }, writesAfterLogout: ROUNDS * 10, stored }));
} finally {
  await a.stop();
  await b.stop();
  killServers();
  await dropSchema(DATABASE_URL, schema);
}
