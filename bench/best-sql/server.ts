// The best-SQL yardstick: node:http and pg, no framework, the same token check as the service and
// the raw server (jsonwebtoken, HS256, a secret key object), and for each scenario the statement
// an expert would write (statements.ts), sent as one named prepared statement: one round trip per
// request, the answer's JSON made by PostgreSQL and written out as it comes. As many processes as
// the service has (node:cluster), each with a pool as large as the service's.
//
// Environment: DATABASE_URL, DATABASE_SCHEMA, JWT_SECRET, PORT, BEST_PROCESSES, BEST_POOL_MAX.
import cluster from 'node:cluster';
import { createSecretKey, randomBytes } from 'node:crypto';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import jwt from 'jsonwebtoken';
import pg from 'pg';
import { clustered, stopOnSigterm } from '../lib/cluster.js';
import { bestRoutes, Refused, type Route } from './routes.js';
import { PLANNED_ROWS_FUNCTION } from './statements.js';

const processes = Number(process.env.BEST_PROCESSES ?? 1);
const connection = () => ({
  connectionString: process.env.DATABASE_URL,
  // The schema as a start-up parameter: no statement per connection.
  options: `-c search_path=${process.env.DATABASE_SCHEMA} -c timezone=UTC`,
});

if (cluster.isPrimary) {
  // The estimate function once, before any worker serves.
  const client = new pg.Client(connection());
  await client.connect();
  await client.query(PLANNED_ROWS_FUNCTION);
  await client.end();
}

clustered(processes, serve);

/** Routes by method, path shape and the query parameters' names (the bench's lists differ by them). */
function router(routes: Route[]) {
  const byKey = new Map<string, Route>();
  const shape = (method: string, path: string, parameters: string[]) => `${method} ${path} ${[...new Set(parameters)].sort().join('&')}`;
  for (const route of routes) byKey.set(shape(route.method, route.path, route.parameters), route);
  return (method: string, url: URL): { route: Route; id?: string } | undefined => {
    const parameters = [...url.searchParams.keys()];
    const direct = byKey.get(shape(method, url.pathname, parameters));
    if (direct) return { route: direct };
    const slash = url.pathname.lastIndexOf('/');
    const route = byKey.get(shape(method, `${url.pathname.slice(0, slash)}/{id}`, parameters));
    return route && { route, id: url.pathname.slice(slash + 1) };
  };
}

function serve() {
  const key = createSecretKey(Buffer.from(process.env.JWT_SECRET!));
  // Its own version salt, as the service has one: the ETag is a hash of the row's version.
  const find = router(bestRoutes(process.env.JWT_SECRET!, randomBytes(16).toString('hex')));
  const pool = new pg.Pool({ ...connection(), max: Number(process.env.BEST_POOL_MAX ?? 10) });

  const send = (res: ServerResponse, status: number, body: string, headers: Record<string, string> = {}) => {
    res.writeHead(status, { 'content-type': 'application/json; charset=utf-8', 'content-length': Buffer.byteLength(body), ...headers });
    res.end(body);
  };
  const fail = (res: ServerResponse, status: number, message: string) => send(res, status, JSON.stringify({ statusCode: status, message }));

  const handle = async (req: IncomingMessage, res: ServerResponse, text: string) => {
    if (req.url === '/health') return fail(res, 200, 'ok');
    let claims: jwt.JwtPayload;
    try {
      const auth = req.headers.authorization;
      if (!auth?.startsWith('Bearer ')) throw new Error('no token');
      claims = jwt.verify(auth.slice(7), key, { algorithms: ['HS256'] }) as jwt.JwtPayload;
    } catch {
      return fail(res, 401, 'Unauthorized');
    }
    const url = new URL(req.url!, 'http://localhost');
    const found = find(req.method!, url);
    if (!found) return fail(res, 404, 'Not Found');
    const caller = { tenantId: claims.tenantId as string, userId: claims.sub as string };
    try {
      const request = { method: req.method!, url, id: found.id, body: text ? JSON.parse(text) : undefined };
      const { rows } = await pool.query(found.route.statement(request, caller));
      const answer = found.route.answer(rows[0], request, caller);
      send(res, answer.status, answer.body, answer.headers);
    } catch (err) {
      if (err instanceof Refused) return send(res, err.answer.status, err.answer.body);
      if (err instanceof SyntaxError) return fail(res, 400, 'the body is not JSON');
      fail(res, 500, String((err as Error)?.message ?? err));
    }
  };

  const server = createServer((req, res) => {
    if (req.method === 'GET' || req.method === 'HEAD') return void handle(req, res, '');
    let body = '';
    req.setEncoding('utf8');
    req.on('data', (chunk: string) => (body += chunk));
    req.on('end', () => void handle(req, res, body));
  });
  server.keepAliveTimeout = 60_000;
  server.listen(Number(process.env.PORT), '127.0.0.1');
  stopOnSigterm(server, pool);
}
