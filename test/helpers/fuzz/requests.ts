// A generated request as data: sent byte for byte with node:http (no client library normalises
// its path, query or headers), and written out for a human to replay (a curl command line and a
// JSON object).
import { request as httpRequest, type IncomingHttpHeaders } from 'node:http';

export type FuzzBody = { json: unknown } | { text: string } | { base64: string };

export interface FuzzRequest {
  method: string;
  /** Path and query string, percent-encoded as sent. */
  path: string;
  headers: Array<[string, string]>;
  body?: FuzzBody;
}

export interface FuzzResponse {
  status: number;
  headers: IncomingHttpHeaders;
  raw: Buffer;
  text: string;
  /** The parsed body when the answer says it is JSON and parses; undefined otherwise. */
  json?: unknown;
  ms: number;
}

/** No answer within this is a hang: a finding like a 500. */
export const REQUEST_TIMEOUT_MS = 15_000;

export function bodyBytes(body: FuzzBody | undefined): Buffer | undefined {
  if (!body) return undefined;
  if ('json' in body) return Buffer.from(JSON.stringify(body.json) ?? 'null');
  if ('text' in body) return Buffer.from(body.text);
  return Buffer.from(body.base64, 'base64');
}

export function send(origin: string, req: FuzzRequest): Promise<FuzzResponse> {
  const url = new URL(origin);
  const bytes = bodyBytes(req.body);
  const started = performance.now();
  return new Promise((resolve, reject) => {
    const headers: Record<string, string | string[]> = {};
    for (const [name, value] of req.headers) {
      const existing = headers[name];
      headers[name] = existing === undefined ? value : [...(Array.isArray(existing) ? existing : [existing]), value];
    }
    if (bytes && !Object.keys(headers).some((h) => h.toLowerCase() === 'content-length')) headers['Content-Length'] = String(bytes.length);
    const outgoing = httpRequest({ host: url.hostname, port: url.port, method: req.method, path: req.path, headers, agent: false }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (chunk: Buffer) => chunks.push(chunk));
      res.on('error', reject);
      res.on('end', () => {
        const raw = Buffer.concat(chunks);
        const text = raw.toString('utf8');
        let json: unknown;
        if (/json/i.test(String(res.headers['content-type'] ?? '')) && text !== '') {
          try {
            json = JSON.parse(text);
          } catch {
            json = undefined;
          }
        }
        resolve({ status: res.statusCode ?? 0, headers: res.headers, raw, text, json, ms: performance.now() - started });
      });
    });
    outgoing.setTimeout(REQUEST_TIMEOUT_MS, () => outgoing.destroy(new Error(`no answer within ${REQUEST_TIMEOUT_MS / 1000} s`)));
    outgoing.on('error', reject);
    outgoing.end(bytes);
  });
}

// ---------------------------------------------------------------------------------------------
// Writing a request out

/** A shell word in single quotes. */
const shellQuote = (s: string) => `'${s.replace(/'/g, `'\\''`)}'`;

/**
 * Live tokens replaced by a variable (`$SUPER_ADMIN_TOKEN`): they belong to the run that found
 * the request. Refused tokens (expired, alg none) are written as they are: any server refuses them.
 */
function withTokenNames(value: string, tokens: Array<{ role: string; token: string }>): string {
  let out = value;
  for (const { role, token } of tokens) out = out.split(token).join(`$${role}_TOKEN`);
  return out;
}

const SHOWN_BODY_CHARS = 20_000;

export function describeBody(body: FuzzBody | undefined): unknown {
  if (!body) return undefined;
  if ('json' in body) {
    const text = JSON.stringify(body.json) ?? 'null';
    return text.length > SHOWN_BODY_CHARS ? { json: `${text.slice(0, SHOWN_BODY_CHARS)}… (${text.length} characters)` } : { json: body.json };
  }
  if ('text' in body) return { text: body.text.length > SHOWN_BODY_CHARS ? `${body.text.slice(0, SHOWN_BODY_CHARS)}… (${body.text.length} characters)` : body.text };
  return body;
}

/** The request as JSON: method, path with query, headers, body. */
export function asJson(req: FuzzRequest, tokens: Array<{ role: string; token: string }>): string {
  return JSON.stringify(
    { method: req.method, path: req.path, headers: req.headers.map(([name, value]) => [name, withTokenNames(value, tokens)]), body: describeBody(req.body) },
    null,
    2,
  );
}

/** The request as a curl command line against BASE (http://localhost:3000 by default). */
export function asCurl(req: FuzzRequest, tokens: Array<{ role: string; token: string }>): string {
  const parts = ['curl', '-sS', '-i', '-g', '--path-as-is', '-X', req.method, `"\${BASE:-http://localhost:3000}"${shellQuote(req.path)}`];
  for (const [name, value] of req.headers) {
    const shown = withTokenNames(value, tokens);
    // A header naming a token variable is double-quoted so the shell fills it in.
    parts.push('-H', shown.includes('_TOKEN') ? `"${name}: ${shown.replace(/(["\\`])/g, '\\$1')}"` : shellQuote(`${name}: ${shown}`));
  }
  if (req.body) {
    const bytes = bodyBytes(req.body)!;
    if ('base64' in req.body) return `printf %s ${shellQuote(req.body.base64)} | base64 -d | ${parts.join(' ')} --data-binary @-`;
    const text = bytes.toString('utf8');
    if (text.length > SHOWN_BODY_CHARS) parts.push(`--data-binary @body.txt  # ${text.length} characters: write the body of the JSON form to body.txt`);
    else parts.push('--data-binary', shellQuote(text));
  }
  return parts.join(' ');
}
