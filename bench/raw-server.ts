// The bench's yardstick: the fastest a Node server could answer the scenarios. node:http and pg,
// nothing else: it checks the same bearer token as the service (jsonwebtoken with a secret key
// object), runs exactly the statements the service ran for the scenario (captured from the wire,
// see capture/), and answers with the rows as JSON. As many processes as the service has
// (node:cluster), each with a pool as large as the service's.
//
// Environment: DATABASE_URL, DATABASE_SCHEMA, JWT_SECRET, PORT, RAW_PROCESSES, RAW_POOL_MAX,
// BENCH_REPLAY_FILE (the replays, JSON).
import { createSecretKey, randomUUID } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import jwt from 'jsonwebtoken';
import pg from 'pg';
import { clustered, stopOnSigterm } from './lib/cluster.js';
import type { ReplayScenario, ReplayStatement, ReplayUnit, ReplayValue } from './capture/plan.js';

const processes = Number(process.env.RAW_PROCESSES ?? 1);

clustered(processes, serve);

interface Route {
  scenario: ReplayScenario;
  pattern: RegExp;
}

function routes(replays: ReplayScenario[]): Route[] {
  const escape = (text: string) => text.replace(/[.*+?^$()|[\]\\{}]/g, '\\$&');
  return replays.map((scenario) => ({ scenario, pattern: new RegExp(`^${scenario.path.split('{id}').map(escape).join('([^/?]+)')}$`) }));
}

function serve() {
  const replays: ReplayScenario[] = JSON.parse(readFileSync(process.env.BENCH_REPLAY_FILE!, 'utf8'));
  const table = routes(replays);
  const key = createSecretKey(Buffer.from(process.env.JWT_SECRET!));
  const pool = new pg.Pool({
    connectionString: process.env.DATABASE_URL,
    max: Number(process.env.RAW_POOL_MAX ?? 10),
    // The schema as a start-up parameter: no statement per connection.
    options: `-c search_path=${process.env.DATABASE_SCHEMA}`,
  });

  const value = (v: ReplayValue, id: string | undefined): string | null => {
    if ('fixed' in v) return v.fixed;
    if ('slot' in v) return id ?? null;
    return v.fresh === 'uuid' ? randomUUID() : new Date().toISOString();
  };

  const config = (statement: ReplayStatement, id: string | undefined): pg.QueryConfig => {
    if (statement.protocol === 'simple') return { text: statement.text };
    const values = statement.values.map((v) => value(v, id));
    return statement.name ? { name: statement.name, text: statement.text, values } : { text: statement.text, values, queryMode: 'extended' } as pg.QueryConfig;
  };

  const isData = (statement: ReplayStatement) => !/^\s*(begin|start|commit|rollback|set|savepoint|release)\b/i.test(statement.text);

  async function runUnit(unit: ReplayUnit, id: string | undefined): Promise<pg.QueryResult[]> {
    if (unit.statements.length === 1) {
      const [statement] = unit.statements;
      return isData(statement) ? [await pool.query(config(statement, id))] : (await pool.query(config(statement, id)), []);
    }
    const client = await pool.connect();
    const results: pg.QueryResult[] = [];
    try {
      for (const statement of unit.statements) {
        const result = await client.query(config(statement, id));
        if (isData(statement)) results.push(result);
      }
    } catch (err) {
      await client.query('rollback').catch(() => {});
      throw err;
    } finally {
      client.release();
    }
    return results;
  }

  async function answer(scenario: ReplayScenario, id: string | undefined, res: ServerResponse) {
    const data: pg.QueryResult[] = [];
    for (const wave of scenario.waves) {
      for (const results of await Promise.all(wave.map((unit) => runUnit(unit, id)))) data.push(...results);
    }
    const [main, ...others] = data;
    const body = !main ? {} : others.length === 0 ? (scenario.single ? main.rows[0] : main.rows) : { items: main.rows, related: others.map((r) => r.rows) };
    const text = JSON.stringify(body);
    res.writeHead(scenario.status, { 'content-type': 'application/json; charset=utf-8', 'content-length': Buffer.byteLength(text) });
    res.end(text);
  }

  const fail = (res: ServerResponse, status: number, message: string) => {
    res.writeHead(status, { 'content-type': 'application/json' });
    res.end(JSON.stringify({ statusCode: status, message }));
  };

  const handle = (req: IncomingMessage, res: ServerResponse, body: string) => {
    if (req.url === '/health') return fail(res, 200, 'ok');
    const auth = req.headers.authorization;
    try {
      if (!auth?.startsWith('Bearer ')) throw new Error('no token');
      jwt.verify(auth.slice(7), key, { algorithms: ['HS256'] });
    } catch {
      return fail(res, 401, 'Unauthorized');
    }
    if (body) JSON.parse(body); // the service parses every body it takes; so does this
    for (const { scenario, pattern } of table) {
      if (scenario.method !== req.method) continue;
      const match = pattern.exec(req.url!);
      if (!match) continue;
      return answer(scenario, match[1], res).catch((err) => fail(res, 500, String(err?.message ?? err)));
    }
    fail(res, 404, 'Not Found');
  };

  const server = createServer((req, res) => {
    if (req.method === 'GET' || req.method === 'HEAD') return handle(req, res, '');
    let body = '';
    req.setEncoding('utf8');
    req.on('data', (chunk: string) => (body += chunk));
    req.on('end', () => handle(req, res, body));
  });
  server.keepAliveTimeout = 60_000;
  server.listen(Number(process.env.PORT), '127.0.0.1');
  stopOnSigterm(server, pool);
}
