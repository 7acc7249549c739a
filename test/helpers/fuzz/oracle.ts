// What every answer must be, whatever was asked: a status the route documents and
// never a 5xx; errors in the envelope {statusCode, message, error}; no SQL, driver text, stack or
// source path in a body or a header; no hidden field (password hash, secrets) anywhere in a JSON
// answer; nothing of the other tenant (a record of it by id, or one of its ids in an answer the
// request did not name).
import { STATUS_CODES } from 'node:http';
import { leakIn } from './leaks.js';
import type { Operation } from './operations.js';
import type { FuzzRequest, FuzzResponse } from './requests.js';
import type { World } from './world.js';

/** Every key anywhere in a JSON value, with its path, and every string value with its key. */
function walk(value: unknown, visit: (key: string, inner: unknown, path: string) => void, path = '$', depth = 0) {
  if (depth > 200 || value === null || typeof value !== 'object') return;
  for (const [key, inner] of Object.entries(value)) {
    const at = Array.isArray(value) ? `${path}[${key}]` : `${path}.${key}`;
    visit(key, inner, at);
    walk(inner, visit, at, depth + 1);
  }
}

/** The request's body as JSON, if it is JSON. */
function jsonOf(req: FuzzRequest): unknown {
  if (!req.body || 'base64' in req.body) return undefined;
  if ('json' in req.body) return req.body.json;
  try {
    return JSON.parse(req.body.text);
  } catch {
    return undefined;
  }
}

const ENVELOPE = ['error', 'message', 'statusCode'];

function envelopeProblems(op: Operation, res: FuzzResponse): string[] {
  const problems: string[] = [];
  const type = String(res.headers['content-type'] ?? '');
  if (!type.startsWith('application/json')) return [`error answer is not JSON (content-type ${type || 'none'}): ${res.text.slice(0, 200)}`];
  const body = res.json as Record<string, unknown> | undefined;
  if (!body || typeof body !== 'object' || Array.isArray(body)) return [`error body is not an object: ${res.text.slice(0, 200)}`];
  // Exactly the envelope, plus what the document declares for this status (an import's failed rows).
  const declared = op.errorKeys.get(res.status) ?? new Set();
  const keys = Object.keys(body);
  const missing = ENVELOPE.filter((k) => !keys.includes(k));
  const extra = keys.filter((k) => !ENVELOPE.includes(k) && !declared.has(k));
  if (missing.length || extra.length) problems.push(`error body keys are ${keys.join(',')}: ${missing.length ? `missing ${missing.join(',')}` : ''}${extra.length ? ` undocumented ${extra.join(',')}` : ''}`);
  if (body.statusCode !== res.status) problems.push(`statusCode ${String(body.statusCode)} differs from the HTTP status ${res.status}`);
  if (body.error !== STATUS_CODES[res.status]) problems.push(`error is ${JSON.stringify(body.error)}, not ${JSON.stringify(STATUS_CODES[res.status])}`);
  const message = body.message;
  const isStrings = Array.isArray(message) && message.length > 0 && message.every((m) => typeof m === 'string');
  if (res.status === 400 ? !isStrings : typeof message !== 'string' && !isStrings) problems.push(`message is not ${res.status === 400 ? 'a non-empty array of strings' : 'a string'}: ${JSON.stringify(message)}`);
  return problems;
}

/** The problems of one answer to one request; none means it is a good answer. */
export function judge(w: World, op: Operation, req: FuzzRequest, res: FuzzResponse): string[] {
  const problems: string[] = [];
  if (res.status >= 500) problems.push(`${res.status}: a server error`);
  else if (op.documented && !op.statuses.has(res.status)) problems.push(`${res.status} is not a status the document lists for ${op.id} (${[...op.statuses].join(', ')})`);
  else if (!op.documented && (res.status < 400 || res.status >= 500)) problems.push(`${res.status} for a method or path that does not exist (a 4xx expected)`);

  // The answer as the document describes it: its headers and body (the status is judged above);
  // and a request the server accepted is one the document accepts.
  if (op.documented && op.statuses.has(res.status)) {
    problems.push(...w.checker.checkResponse({ method: req.method, path: req.path, status: res.status, headers: res.headers, body: res.raw }));
    problems.push(...w.checker.checkRequest({ method: req.method, path: req.path, headers: req.headers, json: jsonOf(req) }, res.status));
  }
  if (res.status >= 400 && req.method !== 'HEAD') problems.push(...envelopeProblems(op, res));
  if (res.status === 401 && res.headers['www-authenticate'] !== 'Bearer') problems.push(`401 without WWW-Authenticate: Bearer (${String(res.headers['www-authenticate'])})`);

  const headerText = Object.entries(res.headers).map(([name, value]) => `${name}: ${String(value)}`).join('\n');
  const headerLeak = leakIn(headerText);
  if (headerLeak) problems.push(`a header leaks ${headerLeak}: ${headerText.slice(0, 300)}`);
  // The document and the docs page describe the API in words (SQL, PostgreSQL, password fields): not read for leaks.
  if (op.opaque && res.status < 400) return problems;
  // A body that is not text (a zip, an image) is not read for words.
  const type = String(res.headers['content-type'] ?? '');
  const textual = type === '' || /json|text|csv|xml|html/i.test(type);
  if (textual) {
    const bodyLeak = leakIn(res.text);
    if (bodyLeak) problems.push(`the body leaks ${bodyLeak}: ${res.text.slice(0, 300)}`);
  }

  if (res.json !== undefined) {
    walk(res.json, (key, _inner, path) => {
      if (w.hiddenKeys.has(key)) problems.push(`hidden field ${key} in the answer at ${path}`);
    });
  }
  if (/csv/i.test(type)) {
    const header = res.text.split(/\r?\n/, 1)[0].split(',');
    for (const column of header) if (w.hiddenKeys.has(column)) problems.push(`hidden field ${column} is a column of the CSV`);
  }

  // Tenancy: another tenant's record is never answered, and its ids never appear unasked.
  const path = req.path.split('?')[0].toLowerCase();
  const asked = `${req.path} ${JSON.stringify(req.headers)} ${req.body ? JSON.stringify(req.body) : ''}`.toLowerCase();
  if (res.status < 300) {
    for (const id of w.foreign) if (path.includes(id)) problems.push(`${res.status} for another tenant's record ${id}`);
  }
  if (textual) {
    const seen = res.text.toLowerCase();
    for (const id of w.foreign) if (seen.includes(id) && !asked.includes(id)) problems.push(`the answer shows another tenant's id ${id}`);
  }
  if (res.status < 300 && res.json !== undefined) {
    walk(res.json, (key, inner, at) => {
      if (typeof inner === 'string' && w.referenceKeys.has(key) && w.foreign.has(inner.toLowerCase())) problems.push(`${at} holds another tenant's id ${inner}: the reference was accepted`);
    });
  }
  if (op.resource && op.documented && res.status < 300 && req.method !== 'HEAD') problems.push(...recordProblems(w, op, req, res));
  return [...new Set(problems)];
}

const isRecord = (value: unknown): value is Record<string, unknown> => typeof value === 'object' && value !== null && !Array.isArray(value);

/** A resource route's success: a record, or a page {items, total}, a page no larger than the maximum, only the caller's tenant. */
function recordProblems(w: World, op: Operation, req: FuzzRequest, res: FuzzResponse): string[] {
  const problems: string[] = [];
  const body = res.json;
  const resource = op.resource!;
  if (op.kind === 'list' || op.kind === 'search') {
    if (!isRecord(body) || !Array.isArray(body.items) || !Number.isInteger(body.total)) return [`a list answer is not {items, total}: ${res.text.slice(0, 200)}`];
    if (body.items.length > resource.maxTake) problems.push(`a page of ${body.items.length} records, more than the maximum ${resource.maxTake}`);
    if ((body.total as number) < 0) problems.push(`a negative total ${String(body.total)}`);
  } else if (op.kind === 'count') {
    if (!isRecord(body) || Object.keys(body).join() !== 'total' || !Number.isInteger(body.total) || (body.total as number) < 0) return [`a count answer is not {total}: ${res.text.slice(0, 200)}`];
  } else if (op.kind === 'read' || op.kind === 'create' || op.kind === 'replace' || op.kind === 'patch') {
    if (!isRecord(body) || typeof body.id !== 'string') return [`a record answer has no id: ${res.text.slice(0, 200)}`];
    if (op.kind !== 'create') {
      const asked = decodeURIComponent(req.path.split('?')[0].split('/').pop() ?? '').toLowerCase();
      if (body.id !== asked) problems.push(`asked for record ${asked}, answered ${body.id}`);
    }
  }
  walk(body, (key, inner, at) => {
    if (key === 'tenantId' && inner !== w.acme.tenantId) problems.push(`${at} is ${String(inner)}, not the caller's tenant`);
  });
  return problems;
}
