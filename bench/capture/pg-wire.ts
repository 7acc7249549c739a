// Just enough of the PostgreSQL wire protocol (version 3) to see which statements a client sends:
// frontend messages are cut out of the byte stream and the ones that carry SQL are decoded;
// from the backend only ReadyForQuery matters (a statement's end). Everything else is skipped by
// its length. See the protocol's "Message Formats" chapter.

/** SSLRequest and GSSENCRequest: untyped like the startup message; the server answers one byte. */
const ENCRYPTION_REQUESTS = new Set([80877103, 80877104]);

export type FrontendMessage =
  | { type: 'startup' }
  | { type: 'query'; text: string }
  | { type: 'parse'; name: string; text: string; paramTypes: number[] }
  | { type: 'bind'; statement: string; values: Array<string | null> }
  | { type: 'execute' }
  | { type: 'sync' }
  | { type: 'other'; code: string };

/** Reads a NUL-terminated UTF-8 string at `at`; returns it and the offset after the NUL. */
function cString(buf: Buffer, at: number): [string, number] {
  const end = buf.indexOf(0, at);
  return [buf.toString('utf8', at, end), end + 1];
}

function decodeBind(body: Buffer): FrontendMessage {
  let at = cString(body, 0)[1]; // portal
  let statement: string;
  [statement, at] = cString(body, at);
  const formatCount = body.readInt16BE(at);
  const formats: number[] = [];
  for (let i = 0; i < formatCount; i++) formats.push(body.readInt16BE(at + 2 + 2 * i));
  at += 2 + 2 * formatCount;
  const valueCount = body.readInt16BE(at);
  at += 2;
  const values: Array<string | null> = [];
  for (let i = 0; i < valueCount; i++) {
    const length = body.readInt32BE(at);
    at += 4;
    if (length === -1) {
      values.push(null);
      continue;
    }
    // One format code applies to all; none means text. Binary values are kept as hex, to be seen.
    const binary = (formats.length === 1 ? formats[0] : formats[i] ?? 0) === 1;
    values.push(binary ? `\\x${body.toString('hex', at, at + length)}` : body.toString('utf8', at, at + length));
    at += length;
  }
  return { type: 'bind', statement, values };
}

function decode(code: string, body: Buffer): FrontendMessage {
  switch (code) {
    case 'Q':
      return { type: 'query', text: cString(body, 0)[0] };
    case 'P': {
      const [name, afterName] = cString(body, 0);
      const [text, afterText] = cString(body, afterName);
      const count = body.readInt16BE(afterText);
      const paramTypes = Array.from({ length: count }, (_, i) => body.readUInt32BE(afterText + 2 + 4 * i));
      return { type: 'parse', name, text, paramTypes };
    }
    case 'B':
      return decodeBind(body);
    case 'E':
      return { type: 'execute' };
    case 'S':
      return { type: 'sync' };
    default:
      return { type: 'other', code };
  }
}

/** Cuts the client → server byte stream into messages, whatever the chunking. */
export class FrontendReader {
  private pending: Buffer = Buffer.alloc(0);
  private startup = true;

  constructor(private readonly onMessage: (message: FrontendMessage) => void) {}

  push(chunk: Buffer) {
    this.pending = this.pending.length ? Buffer.concat([this.pending, chunk]) : chunk;
    for (;;) {
      if (this.startup) {
        if (this.pending.length < 8) return;
        const length = this.pending.readInt32BE(0);
        if (this.pending.length < length) return;
        const code = this.pending.readInt32BE(4);
        this.pending = this.pending.subarray(length);
        if (!ENCRYPTION_REQUESTS.has(code)) {
          this.startup = false;
          this.onMessage({ type: 'startup' });
        }
        continue;
      }
      if (this.pending.length < 5) return;
      const length = this.pending.readInt32BE(1);
      if (this.pending.length < 1 + length) return;
      const code = String.fromCharCode(this.pending[0]);
      const body = this.pending.subarray(5, 1 + length);
      this.pending = this.pending.subarray(1 + length);
      this.onMessage(decode(code, body));
    }
  }
}

/** Cuts the server → client stream and reports each ReadyForQuery ('Z'). */
export class BackendReader {
  private pending: Buffer = Buffer.alloc(0);

  constructor(private readonly onReady: () => void) {}

  push(chunk: Buffer) {
    this.pending = this.pending.length ? Buffer.concat([this.pending, chunk]) : chunk;
    for (;;) {
      // The one-byte answer to an encryption request ('N' or 'S') has no length: never seen
      // here, as the bench's connections ask for none.
      if (this.pending.length < 5) return;
      const length = this.pending.readInt32BE(1);
      if (this.pending.length < 1 + length) return;
      const code = this.pending[0];
      this.pending = this.pending.subarray(1 + length);
      if (code === 0x5a) this.onReady();
    }
  }
}
