// One property, "every answer is a good answer" (oracle.ts), over generated requests: used by the
// bounded suite (test/security/fuzz.test.ts: each operation, fixed seeds) and by the long campaign
// (scripts/fuzz.ts: random operations, a printed seed). A failure is written out as a request a
// human can replay: a curl command line, the same request as JSON, and the seed and path that
// make fast-check generate it again.
import fc from 'fast-check';
import { STATUS_CODES } from 'node:http';
import { requestFor } from './generators.js';
import { judge } from './oracle.js';
import type { Operation } from './operations.js';
import { asCurl, asJson, send, type FuzzRequest, type FuzzResponse } from './requests.js';
import type { World } from './world.js';

export interface Finding {
  op: Operation;
  request: FuzzRequest;
  response?: FuzzResponse;
  problems: string[];
  /** What the app logged while answering (the stack of a 5xx). */
  logged: unknown[];
}

/** Sends one request and judges the answer: a finding, or undefined for a good answer. */
export async function probe(w: World, op: Operation, request: FuzzRequest): Promise<Finding | undefined> {
  const before = w.serverErrors.length;
  let response: FuzzResponse;
  try {
    response = await send(w.origin, request);
  } catch (err) {
    return { op, request, problems: [`no answer: ${(err as Error).message}`], logged: w.serverErrors.slice(before) };
  }
  const problems = judge(w, op, request, response);
  return problems.length ? { op, request, response, problems, logged: w.serverErrors.slice(before) } : undefined;
}

export interface Probe {
  /** The last failing request: after shrinking, the counterexample fast-check reports. */
  last?: Finding;
  /** Requests sent so far. */
  sent: number;
  onSent?: (sent: number) => void;
}

/** The property over one operation, or over a random pick of several. */
export function property(w: World, ops: Operation | Operation[], state: Probe) {
  const one = (op: Operation) => requestFor(w, op).map((request) => ({ op, request }));
  // A path's missing methods are one probe among its real operations: a quarter of their weight.
  const requests = Array.isArray(ops)
    ? fc.oneof(...ops.map((op) => ({ weight: op.documented ? 4 : 1, arbitrary: fc.constant(op) }))).chain(one)
    : one(ops);
  return fc.asyncProperty(requests, async ({ op, request }) => {
    const finding = await probe(w, op, request);
    state.sent += 1;
    state.onSent?.(state.sent);
    if (finding) state.last = finding;
    return finding === undefined;
  });
}

/** A stable seed per operation, so that a new route does not change what the others are sent. */
export function seedOf(base: number, id: string): number {
  let hash = 0x811c9dc5;
  for (let i = 0; i < id.length; i++) hash = Math.imul(hash ^ id.charCodeAt(i), 0x01000193);
  return (base ^ hash) | 0;
}

const indent = (text: string, by = '    ') => text.split('\n').map((line) => by + line).join('\n');

function describeLogged(logged: unknown[]): string {
  return logged
    .map((err) => (err instanceof Error ? (err.stack ?? err.message) : String(err)).split('\n').slice(0, 12).join('\n'))
    .join('\n---\n');
}

/** The finding, written for a human: what was wrong, the answer, and the request to replay. */
export function describeFinding(w: World, finding: Finding, replay: { seed: number; path?: string; command: string }): string {
  const { response } = finding;
  const lines = [`Counterexample for ${finding.op.id}:`, ...finding.problems.map((p) => `  - ${p}`)];
  if (response) {
    lines.push(`  answer: ${response.status} ${STATUS_CODES[response.status] ?? ''} in ${Math.round(response.ms)} ms`);
    lines.push(indent(response.text.slice(0, 1_000) || '(no body)'));
  }
  if (finding.logged.length) lines.push('  the app logged:', indent(describeLogged(finding.logged)));
  const roles = w.tokens.map((t) => `${t.role}_TOKEN`).join(', ');
  lines.push(
    `  replay with curl (set BASE; ${roles} are access tokens of callers of those roles, and the ids are the run's records):`,
    indent(asCurl(finding.request, w.tokens)),
    '  the request as JSON:',
    indent(asJson(finding.request, w.tokens)),
    `  replay in a fresh app and database: ${replay.command}`,
  );
  return lines.join('\n');
}
