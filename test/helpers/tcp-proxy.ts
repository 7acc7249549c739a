// A loopback TCP proxy for tests that take a service away from the app and give it back: put it
// between the app and its Redis or PostgreSQL (point the app's URL at proxy.url(...)), then
//
// - cut():     the service is gone: open connections are destroyed and new ones refused
//              (ECONNREFUSED), as when the server process stops;
// - stall():   the service hangs: connections stay open and new ones are accepted, but nothing
//              travels either way (bytes wait in the proxy), as on a frozen server or a network
//              that drops packets;
// - restore(): the service is back: after cut() the proxy listens again on the SAME port (clients
//              reconnect to the address they know; it rejects in the rare case another socket
//              took the port meanwhile), after stall() the held bytes flow on, so requests sent
//              during the hang may still reach the service late, as they would after a real one;
// - close():   the proxy is gone for good (call it in test.after, whatever happened).
//
// It knows nothing of the protocol it carries: bytes are copied as they come.
import net from 'node:net';

export interface TcpProxy {
  /** Where clients connect: 127.0.0.1. */
  readonly host: string;
  /** The proxy's own port, the same for its whole life. */
  readonly port: number;
  /** `targetUrl` with its host and port replaced by the proxy's (redis://, postgres://, http://...). */
  url(targetUrl: string): string;
  /** Client connections open now (each has its own connection to the target). */
  readonly connections: number;
  /** Client connections accepted since the start: a client that reconnects shows here. */
  readonly accepted: number;
  cut(): Promise<void>;
  stall(): void;
  restore(): Promise<void>;
  close(): Promise<void>;
}

type State = 'open' | 'stalled' | 'cut' | 'closed';

interface Pair {
  client: net.Socket;
  upstream: net.Socket;
}

const HOST = '127.0.0.1';

/** Starts a proxy on a free loopback port that forwards every connection to targetHost:targetPort. */
export async function startTcpProxy(targetHost: string, targetPort: number): Promise<TcpProxy> {
  const pairs = new Set<Pair>();
  let state: State = 'open';
  let accepted = 0;
  let server: net.Server;

  // Unpiped, a socket is not read: bytes wait in its buffers (then the sender's) until piped again.
  const setFlowing = ({ client, upstream }: Pair, flowing: boolean) => {
    if (flowing) {
      client.pipe(upstream);
      upstream.pipe(client);
    } else {
      client.unpipe(upstream);
      upstream.unpipe(client);
    }
  };

  const accept = (client: net.Socket) => {
    accepted++;
    const upstream = net.connect({ host: targetHost, port: targetPort });
    const pair = { client, upstream };
    pairs.add(pair);
    // Whichever side ends or fails, the other goes with it: the client sees what a direct
    // connection would show (a closed connection), never a half-open one.
    const drop = () => {
      pairs.delete(pair);
      client.destroy();
      upstream.destroy();
    };
    for (const socket of [client, upstream]) {
      socket.setNoDelay(true);
      socket.on('error', drop);
      socket.on('close', drop);
    }
    setFlowing(pair, state !== 'stalled');
  };

  const listen = (port: number) =>
    new Promise<net.Server>((resolve, reject) => {
      const s = net.createServer(accept);
      s.once('error', reject);
      s.listen({ host: HOST, port, exclusive: true }, () => {
        s.off('error', reject);
        resolve(s);
      });
    });

  const stopListening = () =>
    new Promise<void>((resolve) => {
      // close() waits for open connections to end: destroy them after asking.
      server.close(() => resolve());
      for (const pair of pairs) {
        pair.client.destroy();
        pair.upstream.destroy();
      }
      pairs.clear();
    });

  server = await listen(0);
  const { port } = server.address() as net.AddressInfo;

  return {
    host: HOST,
    port,
    url(targetUrl) {
      const url = new URL(targetUrl);
      url.hostname = HOST;
      url.port = String(port);
      return url.toString();
    },
    get connections() {
      return pairs.size;
    },
    get accepted() {
      return accepted;
    },
    async cut() {
      if (state === 'cut' || state === 'closed') return;
      state = 'cut';
      await stopListening();
    },
    stall() {
      if (state !== 'open') throw new Error(`stall() on a proxy that is ${state}`);
      state = 'stalled';
      for (const pair of pairs) setFlowing(pair, false);
    },
    async restore() {
      if (state === 'closed') throw new Error('restore() on a closed proxy');
      if (state === 'open') return;
      if (state === 'cut') server = await listen(port);
      else for (const pair of pairs) setFlowing(pair, true);
      state = 'open';
    },
    async close() {
      if (state === 'closed') return;
      const wasListening = state !== 'cut';
      state = 'closed';
      if (wasListening) await stopListening();
    },
  };
}
