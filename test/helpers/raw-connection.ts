// One keep-alive connection driven byte by byte, as a pooling client or a load balancer uses it:
// requests written as raw HTTP/1.1, answers parsed as they arrive, and the end of the connection
// seen as it happens. For the tests of what a connection looks like after a refused body.
import net from 'node:net';

export interface RawResponse {
  status: number;
  /** Header names in lower case. */
  headers: Record<string, string>;
  body: any;
}

/** A Transfer-Encoding: chunked body: `pieces` as chunks, then the last chunk. */
export function chunked(...pieces: Buffer[]): Buffer {
  return Buffer.concat([...pieces.flatMap((piece) => [Buffer.from(`${piece.length.toString(16)}\r\n`), piece, Buffer.from('\r\n')]), Buffer.from('0\r\n\r\n')]);
}

/** A request's head: request line and headers, then the blank line. */
export function head(method: string, path: string, headers: Record<string, string | number>): Buffer {
  const lines = [`${method} ${path} HTTP/1.1`, 'Host: 127.0.0.1', ...Object.entries(headers).map(([name, value]) => `${name}: ${value}`)];
  return Buffer.from(`${lines.join('\r\n')}\r\n\r\n`, 'latin1');
}

export class RawConnection {
  readonly socket: net.Socket;
  private received = Buffer.alloc(0);
  private responses: RawResponse[] = [];
  private waiting?: () => void;
  /** Set when the server ended its side ('end') or the connection closed; with the error, if any. */
  ended = false;
  closed = false;
  error?: NodeJS.ErrnoException;
  /** Bytes received after the last whole response (none, on a connection used properly). */
  get leftover(): number {
    return this.received.length;
  }

  constructor(port: number) {
    this.socket = net.connect(port, '127.0.0.1');
    this.socket.on('data', (chunk: Buffer) => {
      this.received = Buffer.concat([this.received, chunk]);
      this.parse();
      this.waiting?.();
    });
    this.socket.on('end', () => {
      this.ended = true;
      this.waiting?.();
    });
    // A reset after the answers (the server stopped reading a body the client was still sending)
    // is seen here; what a test checks is what came before it.
    this.socket.on('error', (err) => {
      this.error = err;
    });
    this.socket.on('close', () => {
      this.closed = true;
      this.waiting?.();
    });
  }

  /** Writes now; a connection the server has closed takes the bytes silently. */
  write(bytes: Buffer): Promise<void> {
    return new Promise((resolve) => {
      if (this.socket.destroyed || !this.socket.writable) return resolve();
      this.socket.write(bytes, () => resolve());
    });
  }

  private parse() {
    for (;;) {
      const end = this.received.indexOf('\r\n\r\n');
      if (end < 0) return;
      const [statusLine, ...lines] = this.received.subarray(0, end).toString('latin1').split('\r\n');
      const headers: Record<string, string> = {};
      for (const line of lines) {
        const colon = line.indexOf(':');
        headers[line.slice(0, colon).trim().toLowerCase()] = line.slice(colon + 1).trim();
      }
      const length = Number(headers['content-length'] ?? 0);
      if (this.received.length < end + 4 + length) return;
      const text = this.received.subarray(end + 4, end + 4 + length).toString('utf8');
      this.received = this.received.subarray(end + 4 + length);
      let body: unknown = text;
      try {
        body = JSON.parse(text);
      } catch {
        // not JSON: kept as text
      }
      this.responses.push({ status: Number(statusLine.split(' ')[1]), headers, body });
    }
  }

  /** Resolves with what `ready` gives, checked on every event of the connection; rejects when it throws, or after `timeoutMs`. */
  private until<T>(ready: () => T | undefined, what: string, timeoutMs: number): Promise<T> {
    return new Promise((resolve, reject) => {
      const check = () => {
        let value: T | undefined;
        try {
          value = ready();
        } catch (err) {
          value = undefined;
          clearTimeout(timer);
          this.waiting = undefined;
          return reject(err);
        }
        if (value === undefined) return;
        clearTimeout(timer);
        this.waiting = undefined;
        resolve(value);
      };
      const timer = setTimeout(() => {
        this.waiting = undefined;
        reject(new Error(`${what}: nothing within ${timeoutMs} ms (ended: ${this.ended}, closed: ${this.closed}, ${this.received.length} bytes unparsed)`));
      }, timeoutMs);
      this.waiting = check;
      check();
    });
  }

  /** The next whole answer; rejects when the connection ends first or nothing comes within `timeoutMs`. */
  response(timeoutMs = 10_000): Promise<RawResponse> {
    return this.until(
      () => {
        const next = this.responses.shift();
        if (next) return next;
        if (this.ended || this.closed) throw new Error(`the connection ended without an answer${this.error ? ` (${this.error.code})` : ''}`);
        return undefined;
      },
      'an answer',
      timeoutMs,
    );
  }

  /** Resolves once the server has ended the connection (or it closed); rejects after `timeoutMs`. */
  end(timeoutMs = 10_000): Promise<void> {
    return this.until(() => (this.ended || this.closed ? true : undefined), 'the end of the connection', timeoutMs).then(() => {});
  }

  close() {
    this.socket.destroy();
  }
}
