// A loopback proxy in front of PostgreSQL that reads the statements passing through it. The
// service is started with its DATABASE_URL pointed here; `record(send)` returns the statements
// every backend connection ran while one request was in flight, in order, with the values bound
// to them and when each was sent and answered (so that the replay can tell parallel statements
// from dependent ones).
import net from 'node:net';
import { BackendReader, FrontendReader, type FrontendMessage } from './pg-wire.js';

export interface CapturedStatement {
  /** The proxy's number for the backend connection (in order of opening). */
  connection: number;
  protocol: 'simple' | 'extended';
  /** The prepared statement's name, '' for the unnamed one. */
  name: string;
  text: string;
  values: Array<string | null>;
  sentAt: number;
  doneAt: number;
}

export interface CaptureProxy {
  url(targetUrl: string): string;
  /** Runs `send` (one request, resolved once its response is complete) and returns what it ran. */
  record(send: () => Promise<unknown>): Promise<{ statements: CapturedStatement[]; late: CapturedStatement[] }>;
  close(): Promise<void>;
}

/** Connection set-up the pool runs once per connection, not per request. */
const SESSION_SETUP = /^\s*set\s/i;
/** How long to keep listening after the response: statements seen then are reported, not replayed. */
const AFTER_RESPONSE_MS = 100;

class Connection {
  /** Statement names prepared on this connection, with their text. */
  private readonly prepared = new Map<string, string>();
  private parsedUnnamed = '';
  private bound: { name: string; values: Array<string | null> } | undefined;
  private batch: CapturedStatement[] = [];
  /** Batches sent (closed by Sync or a simple query) waiting for their ReadyForQuery. */
  private readonly awaiting: CapturedStatement[][] = [];

  constructor(
    readonly id: number,
    private readonly onStatement: (statement: CapturedStatement) => void,
  ) {}

  frontend(message: FrontendMessage) {
    const now = performance.now();
    switch (message.type) {
      case 'parse':
        if (message.name) this.prepared.set(message.name, message.text);
        else this.parsedUnnamed = message.text;
        break;
      case 'bind':
        this.bound = { name: message.statement, values: message.values };
        break;
      case 'execute': {
        if (!this.bound) break;
        const { name, values } = this.bound;
        const text = name ? this.prepared.get(name) : this.parsedUnnamed;
        if (text !== undefined) this.batch.push(this.statement('extended', name, text, values, now));
        break;
      }
      case 'query':
        this.batch.push(this.statement('simple', '', message.text, [], now));
        this.closeBatch();
        break;
      case 'sync':
        this.closeBatch();
        break;
    }
  }

  ready() {
    const batch = this.awaiting.shift();
    if (!batch) return; // the first ReadyForQuery, after authentication
    const now = performance.now();
    for (const statement of batch) statement.doneAt = now;
  }

  private statement(protocol: CapturedStatement['protocol'], name: string, text: string, values: Array<string | null>, sentAt: number): CapturedStatement {
    const statement = { connection: this.id, protocol, name, text, values, sentAt, doneAt: Infinity };
    if (!SESSION_SETUP.test(text)) this.onStatement(statement);
    return statement;
  }

  private closeBatch() {
    this.awaiting.push(this.batch);
    this.batch = [];
  }
}

export async function startCaptureProxy(targetHost: string, targetPort: number): Promise<CaptureProxy> {
  let connections = 0;
  let recording: CapturedStatement[] | undefined;
  const sockets = new Set<net.Socket>();

  const server = net.createServer((client) => {
    const upstream = net.connect({ host: targetHost, port: targetPort });
    const connection = new Connection(++connections, (statement) => recording?.push(statement));
    const frontend = new FrontendReader((message) => connection.frontend(message));
    const backend = new BackendReader(() => connection.ready());
    client.on('data', (chunk: Buffer) => {
      frontend.push(chunk);
      upstream.write(chunk);
    });
    upstream.on('data', (chunk: Buffer) => {
      backend.push(chunk);
      client.write(chunk);
    });
    const drop = () => {
      client.destroy();
      upstream.destroy();
      sockets.delete(client);
      sockets.delete(upstream);
    };
    for (const socket of [client, upstream]) {
      sockets.add(socket);
      socket.setNoDelay(true);
      socket.on('error', drop);
      socket.on('close', drop);
    }
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as net.AddressInfo;

  return {
    url(targetUrl) {
      const url = new URL(targetUrl);
      url.hostname = '127.0.0.1';
      url.port = String(port);
      return url.toString();
    },
    async record(send) {
      const seen: CapturedStatement[] = [];
      recording = seen;
      try {
        await send();
        const answered = seen.length;
        await new Promise((resolve) => setTimeout(resolve, AFTER_RESPONSE_MS));
        return { statements: seen.slice(0, answered), late: seen.slice(answered) };
      } finally {
        recording = undefined;
      }
    },
    close() {
      for (const socket of sockets) socket.destroy();
      return new Promise((resolve) => server.close(() => resolve()));
    },
  };
}
