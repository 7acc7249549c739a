// The HTTP server of a serving process (process/serving.ts): its time limits, its answers to requests too
// broken to reach the app, and how it stops.
//
// Time limits: a client has REQUEST_TIMEOUT_MS to send a whole request, headers and body; Node
// checks it every checkIntervalMs and ends a slower request with a 408 (in the error envelope
// here) and closes its connection, so slow senders cannot hold connections.
//
// Stopping (SIGTERM): the listener closes at once (new connections are refused), then every
// response written from then on carries `Connection: close` (a client never reuses a connection
// that is about to close), requests in flight finish, and connections that are idle between two
// requests stay open until a request arrives on them (answered, then closed) or their keep-alive
// time runs out. Closing an idle keep-alive connection at once would race a client that is reusing
// it right then: that client would see ECONNRESET for a request the server never read. What is
// still open when the grace period ends is cut.
//
// In a cluster the port stays open until every worker has closed its listener (the primary holds
// it): a client told to close its connection would reconnect to a port that accepts connections no
// worker takes any more, and be reset. So a worker says `Connection: close` only once its primary
// tells it that no worker accepts connections any more (process/worker.ts).
import { createServer, STATUS_CODES, type RequestListener, type Server, type ServerResponse } from 'node:http';
import net from 'node:net';
import type { Duplex } from 'node:stream';
import { API_SECURITY_HEADERS } from './security.js';

export interface ServerLimits {
  /** REQUEST_TIMEOUT_MS: the time a client has to send a whole request, headers and body. */
  requestTimeoutMs: number;
}

export interface StoppableServer {
  server: Server;
  /**
   * Stops accepting connections and lets open ones finish, for at most `graceMs`; then cuts the
   * rest. Resolves once no connection is left, with the number of requests that were cut.
   * Answers close their connections once `portClosed` resolves (at once by default): when nothing
   * accepts connections on the port any more, so that a client reconnecting is refused.
   */
  stop(graceMs: number, portClosed?: () => Promise<void>): Promise<{ cut: number }>;
}

/**
 * How often Node checks the request time limit: a tenth of it, between 100 ms and 1 s (Node's own
 * default, 30 s, would let a slow client hold its connection up to 30 s past the limit).
 */
export const checkIntervalMs = (requestTimeoutMs: number) => Math.min(1000, Math.max(100, Math.floor(requestTimeoutMs / 10)));

/** Node's parser errors (and its request timeout) → the answer Node would give, in the error envelope. */
function clientErrorAnswer(code: string | undefined): { status: number; message: string | string[] } {
  switch (code) {
    case 'ERR_HTTP_REQUEST_TIMEOUT':
      return { status: 408, message: 'The request was not received in time' };
    case 'HPE_HEADER_OVERFLOW':
      return { status: 431, message: 'The request headers are too large' };
    case 'HPE_CHUNK_EXTENSIONS_OVERFLOW':
      return { status: 413, message: 'The chunk extensions of the request are too large' };
    default:
      return { status: 400, message: ['The request is not valid HTTP/1.1'] };
  }
}

/** The security headers of the app's /api answers, as header lines. */
const RAW_SECURITY_HEADERS = API_SECURITY_HEADERS.map(([name, value]) => `${name}: ${value}\r\n`).join('');

/** A whole HTTP response with a JSON error envelope, closing the connection. */
function rawErrorResponse(status: number, message: string | string[]): string {
  const body = JSON.stringify({ statusCode: status, message, error: STATUS_CODES[status] ?? 'Error' });
  return (
    `HTTP/1.1 ${status} ${STATUS_CODES[status] ?? 'Error'}\r\n` +
    `Content-Type: application/json; charset=utf-8\r\nContent-Length: ${Buffer.byteLength(body)}\r\n` +
    `Cache-Control: no-store\r\n${RAW_SECURITY_HEADERS}Connection: close\r\n\r\n${body}`
  );
}

/**
 * An HTTP server for `handler` whose clients get `requestTimeoutMs` to send a request (a slower
 * one is answered 408 and its connection closed), and that can be stopped gracefully.
 */
export function createStoppableServer(handler: RequestListener, limits: ServerLimits): StoppableServer {
  let stopping = false;
  /** Responses under way (request received, response not yet finished). */
  const inFlight = new Set<ServerResponse>();
  const server = createServer(
    {
      requestTimeout: limits.requestTimeoutMs,
      headersTimeout: limits.requestTimeoutMs,
      connectionsCheckingInterval: checkIntervalMs(limits.requestTimeoutMs),
    },
    (req, res) => {
      if (stopping) res.shouldKeepAlive = false;
      inFlight.add(res);
      res.once('close', () => inFlight.delete(res));
      handler(req, res);
    },
  );

  // What Node itself answers (its request timeout, a request it cannot parse) gets the envelope
  // like every other error; as Node does, only when no answer has begun on that connection.
  server.on('clientError', (err: NodeJS.ErrnoException, socket: Duplex) => {
    const answering = [...inFlight].some((res) => res.socket === socket && res.headersSent);
    if (socket.writable && !answering && err.code !== 'ECONNRESET') {
      const { status, message } = clientErrorAnswer(err.code);
      socket.write(rawErrorResponse(status, message));
    }
    socket.destroy();
  });

  // CONNECT (a proxy's tunnel) never reaches the app: Node hands it to this event, and without a
  // listener closes the connection unanswered. This is no proxy: a 405 in the envelope, as any
  // method the router does not know gets (routing/allowed-methods.ts).
  server.on('connect', (req, socket: Duplex) => {
    socket.end(rawErrorResponse(405, `${req.method} is not allowed on this server`));
  });

  const stop = (graceMs: number, portClosed = async () => {}) =>
    new Promise<{ cut: number }>((resolve) => {
      const closeConnections = () => {
        stopping = true;
        // Answers not begun yet close their connection once sent; those already being sent keep
        // the keep-alive they announced, and their connection then waits idle like the others.
        for (const res of inFlight) if (!res.headersSent) res.shouldKeepAlive = false;
      };
      let cut = 0;
      const timer = setTimeout(() => {
        cut = inFlight.size;
        server.closeAllConnections();
      }, graceMs);
      // net's close, not http's: http.Server#close also destroys idle keep-alive connections at
      // once (the race described above). 'close' comes when the last connection has ended.
      net.Server.prototype.close.call(server, () => {
        clearTimeout(timer);
        resolve({ cut });
      });
      portClosed().then(closeConnections, closeConnections);
    });

  return { server, stop };
}
