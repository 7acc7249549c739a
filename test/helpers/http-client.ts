// A plain node:http client for the tests of the server process itself (shutdown, outages, time
// limits): unlike supertest it shows what a client sees on the wire: the socket it reused, the
// Connection header, and the error code when a connection is refused, reset or hung up.
import { Agent, request as httpRequest, type ClientRequest, type IncomingHttpHeaders } from 'node:http';
import { PASSWORD, uniqueEmail } from './accounts.js';

export interface Answer {
  status: number;
  headers: IncomingHttpHeaders;
  body: any;
  /** Whether the request went out on a connection that had carried an earlier one (keep-alive). */
  reusedSocket: boolean;
}

/** A request that got no answer: `code` is ECONNREFUSED, ECONNRESET, … ("socket hang up" is ECONNRESET). */
export class NoAnswer extends Error {
  constructor(
    readonly code: string,
    message: string,
    readonly reusedSocket: boolean,
  ) {
    super(message);
  }
}

export interface RequestOptions {
  method?: string;
  headers?: Record<string, string>;
  body?: unknown;
  /** A keep-alive agent to share connections; by default a connection of its own, closed after. */
  agent?: Agent;
  timeoutMs?: number;
}

/** One request to `url` (a full http:// address); resolves with the answer, rejects with NoAnswer. */
export function send(url: string, options: RequestOptions = {}): Promise<Answer> {
  const payload = options.body === undefined ? undefined : Buffer.from(JSON.stringify(options.body));
  const req = httpRequest(url, {
    method: options.method ?? 'GET',
    agent: options.agent ?? false,
    headers: {
      ...(payload ? { 'Content-Type': 'application/json', 'Content-Length': String(payload.length) } : {}),
      ...options.headers,
    },
    timeout: options.timeoutMs ?? 30_000,
  });
  req.once('timeout', () => req.destroy(Object.assign(new Error('no answer in time'), { code: 'TEST_TIMEOUT' })));
  const answer = answerOf(req);
  req.end(payload);
  return answer;
}

/** The answer to `req`, its body parsed when it is JSON; NoAnswer when the request fails. */
function answerOf(req: ClientRequest): Promise<Answer> {
  return new Promise((resolve, reject) => {
    const failed = (err: NodeJS.ErrnoException) => reject(new NoAnswer(err.code ?? 'UNKNOWN', err.message, req.reusedSocket));
    req.once('error', failed);
    req.once('response', (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (chunk: Buffer) => chunks.push(chunk));
      res.once('error', failed);
      res.once('end', () => {
        const text = Buffer.concat(chunks).toString();
        let body: unknown = text;
        try {
          body = text ? JSON.parse(text) : undefined;
        } catch {
          // not JSON: kept as text
        }
        resolve({ status: res.statusCode!, headers: res.headers, body, reusedSocket: req.reusedSocket });
      });
    });
  });
}

export interface OpenRequest {
  /** The answer, once it comes (or NoAnswer). */
  answer: Promise<Answer>;
  /** Resolves when the request's headers have gone out on a connection. */
  sent: Promise<void>;
  /**
   * Resolves when the server has read the headers and handed the request to the app: the request
   * asks `Expect: 100-continue`, and Node's server says `100 Continue` as it dispatches it.
   */
  received: Promise<void>;
  write(chunk: string | Buffer): void;
  end(chunk?: string | Buffer): void;
}

/**
 * A request whose body the test writes itself, when it wants: a request kept in flight (a slow
 * upload) across a signal, or a body trickled slower than a time limit. `contentLength` is announced.
 */
export function openRequest(url: string, options: { method?: string; headers?: Record<string, string>; contentLength: number; agent?: Agent }): OpenRequest {
  const req = httpRequest(url, {
    method: options.method ?? 'POST',
    agent: options.agent ?? false,
    headers: { 'Content-Type': 'application/json', 'Content-Length': String(options.contentLength), Expect: '100-continue', ...options.headers },
  });
  const received = new Promise<void>((resolve) => req.once('continue', () => resolve()));
  const answer = answerOf(req);
  // Handled by whoever awaits it; a test that stops early must not crash on an unhandled rejection.
  answer.catch(() => {});
  // The headers go out with the first write; flushHeaders() sends them before any body byte.
  req.flushHeaders();
  const sent = new Promise<void>((resolve) => req.once('socket', (socket) => (socket.connecting ? socket.once('connect', () => resolve()) : resolve())));
  return {
    answer,
    sent,
    received,
    write: (chunk) => void (req.destroyed || req.write(chunk)),
    end: (chunk) => void (req.destroyed || req.end(chunk)),
  };
}

export interface Owner {
  auth: { Authorization: string };
  organizationId: string;
}

/** A new tenant through the running server: its SUPER_ADMIN's token and an organization. */
export async function newOwner(url: string): Promise<Owner> {
  const email = uniqueEmail('owner');
  const reg = await send(`${url}/api/auth/register`, {
    method: 'POST',
    body: { user: { firstName: 'Olive', lastName: 'Owner', email }, password: PASSWORD, confirmPassword: PASSWORD },
  });
  if (reg.status !== 201) throw new Error(`register: ${reg.status} ${JSON.stringify(reg.body)}`);
  const login = await send(`${url}/api/auth/login`, { method: 'POST', body: { email, password: PASSWORD } });
  if (login.status !== 200) throw new Error(`login: ${login.status} ${JSON.stringify(login.body)}`);
  const auth = { Authorization: `Bearer ${login.body.token}` };
  const org = await send(`${url}/api/organization`, { method: 'POST', headers: auth, body: { name: 'Acme', currency: 'EUR' } });
  if (org.status !== 201) throw new Error(`organization: ${org.status} ${JSON.stringify(org.body)}`);
  return { auth, organizationId: org.body.id };
}

/** The colour of every tag a write load creates. */
export const LOAD_COLOR = '#123456';

export interface Outcome {
  client: number;
  /** Date.now() when the request was sent and when its answer (or error) came. */
  sentAt: number;
  doneAt: number;
  name: string;
  answer?: Answer;
  error?: NoAnswer;
}

export interface WriteLoad {
  outcomes: Outcome[];
  /** Creates answered 201 with an id: the writes the service acknowledged. */
  acknowledged(): Array<{ id: string; name: string }>;
  /** Asks every client to stop after its current request; resolves when all have. */
  stop(): Promise<void>;
  /** Resolves when every client has stopped (by itself: refused, or after stop()). */
  done: Promise<void>;
}

export interface WriteLoadOptions {
  url: string;
  owner: Owner;
  clients: number;
  /** Names start with this (unique per run). */
  prefix: string;
  /** A client stops by itself on an error with one of these codes (default: none, it stops only when asked). */
  stopOn?: string[];
  /** Pause between two requests of a client, ms (default 0). */
  pauseMs?: number;
}

/**
 * `clients` clients, each on a keep-alive connection of its own, creating tags one after the other
 * (POST /api/tags) until stopped; every answer and error is kept with its time.
 */
export function writeLoad(options: WriteLoadOptions): WriteLoad {
  const outcomes: Outcome[] = [];
  let stopping = false;
  const agents: Agent[] = [];
  const client = async (index: number) => {
    const agent = new Agent({ keepAlive: true, maxSockets: 1 });
    agents.push(agent);
    for (let i = 0; !stopping; i++) {
      const name = `${options.prefix}-${index}-${i}`;
      const outcome: Outcome = { client: index, sentAt: Date.now(), doneAt: 0, name };
      try {
        outcome.answer = await send(`${options.url}/api/tags`, {
          method: 'POST',
          agent,
          headers: options.owner.auth,
          body: { name, color: LOAD_COLOR, organizationId: options.owner.organizationId },
        });
      } catch (err) {
        if (!(err instanceof NoAnswer)) throw err;
        outcome.error = err;
      }
      outcome.doneAt = Date.now();
      outcomes.push(outcome);
      if (outcome.error && options.stopOn?.includes(outcome.error.code)) break;
      if (options.pauseMs) await new Promise((resolve) => setTimeout(resolve, options.pauseMs));
    }
    agent.destroy();
  };
  const done = Promise.all(Array.from({ length: options.clients }, (_, i) => client(i))).then(() => {});
  return {
    outcomes,
    acknowledged: () =>
      outcomes.filter((o) => o.answer?.status === 201 && typeof o.answer.body?.id === 'string').map((o) => ({ id: o.answer!.body.id, name: o.answer!.body.name })),
    async stop() {
      stopping = true;
      await done;
    },
    done,
  };
}

export const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
