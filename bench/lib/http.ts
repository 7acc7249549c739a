// Plain HTTP calls of the bench (seeding, checks, capture), outside the measured load.
import { request } from 'node:http';

export interface Reply {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  text: string;
  json(): any;
}

export function call(base: string, method: string, url: string, body?: unknown, token?: string): Promise<Reply> {
  const payload = body === undefined ? undefined : JSON.stringify(body);
  return new Promise((resolve, reject) => {
    const req = request(`${base}${url}`, {
      method,
      headers: { ...(payload ? { 'content-type': 'application/json' } : {}), ...(token ? { authorization: `Bearer ${token}` } : {}) },
    }, (res) => {
      let text = '';
      res.setEncoding('utf8');
      res.on('data', (chunk: string) => (text += chunk));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, headers: res.headers, text, json: () => JSON.parse(text) }));
      res.on('error', reject);
    });
    req.on('error', reject);
    req.end(payload);
  });
}

/** The body of a call that must succeed; anything but 2xx throws with what the server said. */
export async function ok(base: string, method: string, url: string, body?: unknown, token?: string): Promise<any> {
  const reply = await call(base, method, url, body, token);
  if (reply.status >= 300) throw new Error(`${method} ${url}: ${reply.status} ${reply.text.slice(0, 500)}`);
  return reply.text ? reply.json() : undefined;
}

/** Downloads a path as fast as it comes, counting bytes and records (occurrences of `record`). */
export function download(base: string, url: string, token: string, record: Buffer | undefined): Promise<{ bytes: number; records: number }> {
  return new Promise((resolve, reject) => {
    const req = request(`${base}${url}`, { headers: { authorization: `Bearer ${token}` } }, (res) => {
      if (res.statusCode !== 200) return reject(new Error(`GET ${url}: ${res.statusCode}`));
      let bytes = 0;
      let records = 0;
      let tail = Buffer.alloc(0);
      res.on('data', (chunk: Buffer) => {
        bytes += chunk.length;
        if (!record) return;
        // A marker may straddle two chunks: search the end of the previous one too.
        const window = Buffer.concat([tail, chunk]);
        for (let at = window.indexOf(record); at !== -1; at = window.indexOf(record, at + record.length)) if (at + record.length > tail.length) records++;
        tail = window.subarray(Math.max(0, window.length - record.length + 1));
      });
      res.on('end', () => (res.complete ? resolve({ bytes, records }) : reject(new Error(`GET ${url}: the transfer was cut off`))));
      res.on('error', reject);
    });
    req.on('error', reject);
    req.end();
  });
}
