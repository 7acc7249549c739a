// The document holds under a schema-driven fuzzer (issue 42): for every operation, requests valid
// by the document (test/helpers/fuzz/valid-requests.ts: parameters and JSON body generated from
// its schemas) sent with the SUPER_ADMIN's token and the caller's own tenant and organization.
// Every answer is judged by the fuzz oracle (a declared status, its headers, a body valid against
// the declared schema, the envelope, no leak), and a document-valid request refused with 400 or
// 422 is a finding unless its message is one the document cannot express (REFUSALS below).
// Fixed seeds, a few requests per operation; a finding prints a replayable request.
import fc from 'fast-check';
import { test } from 'uvu';
import { createTestApp, type TestApp } from '../helpers/app.js';
import { describeFinding, seedOf, type Finding } from '../helpers/fuzz/campaign.js';
import type { Operation } from '../helpers/fuzz/operations.js';
import { judge } from '../helpers/fuzz/oracle.js';
import { send, type FuzzRequest, type FuzzResponse } from '../helpers/fuzz/requests.js';
import { validRequestFor } from '../helpers/fuzz/valid-requests.js';
import { buildWorld, type World } from '../helpers/fuzz/world.js';

const SEED = 20_261_242;
const RUNS = 3;

/**
 * Refusals of a document-valid request that the document cannot state, each a rule across fields
 * or about the data (a schema says what one value may be, not what the database holds). Short on
 * purpose: any other 400 or 422 of a valid request is a finding.
 */
const REFUSALS: Array<{ why: string; message: RegExp }> = [
  // A body or filter naming a record: a uuid of the right form may name no record of the tenant.
  { why: 'reference to a record that does not exist', message: /(?:must reference an existing|does not exist|not found|no such|must (?:be|name) an? .*(?:of|in) (?:the|this|your) tenant|unknown .*id)/i },
  // Rules across fields or parameters (from before to, a range's length, format and Content-Type).
  { why: 'rule across fields', message: /(?:must (?:not )?be (?:before|after|later|earlier)|must come (?:before|after)|must not be longer than|must not be sent together|does not match the Content-Type)/i },
  // A cursor is made by the server for one list; any other string of its form names no page.
  { why: 'a cursor the server did not make', message: /^cursor is not valid for this list/ },
  // Which organization a record lands in when none is named depends on how many the tenant has.
  { why: 'the tenant\'s data', message: /has more than one organization/ },
  // A bound relative to the time of the request.
  { why: 'relative to now', message: /days ahead|must be in the future/ },
];

/**
 * Found by this suite and not stated by the document yet (issue 42): refusals held back so the
 * suite guards everything else; remove an entry once the document states its rule.
 */
const KNOWN_GAPS: Array<{ gap: string; message: RegExp }> = [];

/** Operations no generated request can use as documented, each with why. */
const SKIPPED: Array<{ why: string; matches: (op: Operation) => boolean }> = [
  { why: 'the body is multipart (a file), not JSON', matches: (op) => Boolean(op.body && !op.body.types.includes('application/json')) },
  {
    why: 'ends or changes the session the suite signs in with, or needs a secret sent by mail or a provider',
    matches: (op) => /^\/api\/(?:auth|email-reset|email-check|user\/me)\b/.test(op.path) && op.method !== 'GET',
  },
  { why: 'signs the suite\'s caller out', matches: (op) => op.path === '/api/auth/logout' },
  { why: 'a social login redirects to its provider', matches: (op) => /^\/api\/auth\/(?:google|github|microsoft|facebook)/.test(op.path) },
];

/** The documented operations, each under its own path (aliases answer as their path item does: the hostile suite covers them). */
const fuzzed = (w: World) => w.operations.filter((op) => op.documented && !op.documentedAt && op.method !== 'HEAD' && !op.opaque);

let t: TestApp;
let w: World;
const logged: unknown[] = [];

test.before(async () => {
  t = await createTestApp({ appOptions: { logError: (err) => logged.push(err) } });
  w = await buildWorld(t, logged);
});
test.after(async () => {
  await w?.close();
  await t?.close();
});

/** The problem of a refusal the document could have stated, if it is one. */
function refusalProblem(res: FuzzResponse): string | undefined {
  if (res.status !== 400 && res.status !== 422) return undefined;
  const body = res.json as { message?: unknown; failedRows?: unknown; errors?: Array<{ message?: unknown }> } | undefined;
  // An import's refusal only counts its failed rows ("2 of 3 rows failed"): each row's broken
  // rules, in errors, are what must be explained.
  const rowErrors = body?.failedRows !== undefined && Array.isArray(body.errors) ? body.errors.map((e) => e?.message) : undefined;
  const messages = (rowErrors ?? (Array.isArray(body?.message) ? body.message : [body?.message])).map(String);
  // A bulk write's messages name the item: "[2] rule".
  const unexplained = messages.map((m) => m.replace(/^\[\d+\] /, '')).filter((m) => ![...REFUSALS, ...KNOWN_GAPS].some((r) => r.message.test(m)));
  return unexplained.length ? `a request valid by the document refused with ${res.status}: ${unexplained.join('; ')}` : undefined;
}

/** One request, judged: the oracle's problems, and a refusal the document could have stated. */
async function check(op: Operation, request: FuzzRequest): Promise<Finding | undefined> {
  const before = w.serverErrors.length;
  let response: FuzzResponse;
  try {
    response = await send(w.origin, request);
    if (process.env.FUZZ_VERBOSE === '2') console.error(`  ${request.method} ${request.path.slice(0, 200)} ${response.status} ${Math.round(response.ms)} ms`);
  } catch (err) {
    return { op, request, problems: [`no answer: ${(err as Error).message}`], logged: [] };
  }
  const refused = refusalProblem(response);
  const problems = [...judge(w, op, request, response), ...(refused ? [refused] : [])];
  return problems.length ? { op, request, response, problems, logged: w.serverErrors.slice(before) } : undefined;
}

async function fuzz(op: Operation): Promise<Finding | undefined> {
  let last: Finding | undefined;
  const property = fc.asyncProperty(validRequestFor(w, op, w.tokens[0].token), async (request) => {
    last = await check(op, request);
    return last === undefined;
  });
  // No shrinking: each request is a real write, and the first failing one is printed as sent.
  const result = await fc.check(property, { seed: seedOf(SEED, op.id), numRuns: RUNS, endOnFailure: true });
  return result.failed ? last : undefined;
}

test('every operation, sent requests valid by the document, answers as the document says', async () => {
  const findings: string[] = [];
  const skipped = new Map<string, string[]>();
  for (const op of fuzzed(w)) {
    const skip = SKIPPED.find((s) => s.matches(op));
    if (skip) {
      skipped.set(skip.why, [...(skipped.get(skip.why) ?? []), op.id]);
      continue;
    }
    const started = performance.now();
    const finding = await fuzz(op);
    if (process.env.FUZZ_VERBOSE) console.error(`${op.id} ${Math.round(performance.now() - started)} ms${finding ? ` ${finding.problems[0]}` : ''}`);
    if (finding) findings.push(describeFinding(w, finding, { seed: seedOf(SEED, op.id), command: `npm test -- openapi-fuzz` }));
  }
  if (findings.length) {
    console.error(`\n${findings.join('\n\n')}\n`);
    throw new Error(`${findings.length} operations answered a valid request otherwise than the document says (printed above)`);
  }
});

test.run();
