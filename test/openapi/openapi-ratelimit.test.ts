// The rate limits in /swg-json: the five rate-limit headers on every answer of every limited
// operation, a 429 with Retry-After and the error envelope, each operation's own limits in its
// description, nothing on the exempt health check; and a real 429 fits what is declared.
import SwaggerParser from '@apidevtools/swagger-parser';
import { Ajv } from 'ajv';
import addFormats from 'ajv-formats';
import { randomBytes } from 'node:crypto';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { authModules } from '../../auth/modules.js';
import { buildOpenApiDocument } from '../../engine/openapi/document.js';
import { PolicyMatcher, scaleLimitTable, type LimitTable } from '../../engine/ratelimit/policy.js';
import { modules as projectModules } from '../../resources/modules.js';
import { uniqueEmail } from '../helpers/accounts.js';
import { createTestApp, type TestApp } from '../helpers/app.js';
import { assertError } from '../helpers/error-envelope.js';
import { operationsOf } from '../helpers/openapi.js';

const RATE_LIMIT_HEADERS = ['X-RateLimit-Limit', 'X-RateLimit-Remaining', 'X-RateLimit-Reset', 'RateLimit-Policy', 'RateLimit'];

let t: TestApp;
let doc: Record<string, any>;
test.before(async () => {
  // Limits on, in a store of their own (Redis too when the run has one).
  // Counted exactly: a slow moment of a loaded machine must not make a Redis count fail open (500 ms by default).
  const redis: Record<string, string> = process.env.REDIS_URL ? { REDIS_URL: process.env.REDIS_URL, RATE_LIMIT_STORE_TIMEOUT_MS: '5000' } : {};
  t = await createTestApp({ env: { RATE_LIMITS: 'on', RATE_LIMIT_PREFIX: `openapi-${randomBytes(4).toString('hex')}`, ...redis } });
  doc = t.openapi as Record<string, any>;
});
test.after(async () => {
  await t.close();
});

/** A component ($ref) resolved in a document, or the object itself. */
function resolve(document: Record<string, any>, value: any): any {
  if (!value?.$ref) return value;
  const [, , section, name] = String(value.$ref).split('/');
  const found = document.components[section]?.[name];
  assert.ok(found, `${value.$ref} exists`);
  return found;
}

async function problemsOf(document: Record<string, any>): Promise<string | undefined> {
  // swagger-parser's errors break uvu's reporter: rethrow as text.
  return SwaggerParser.validate(structuredClone(document) as any).then(() => undefined, (err: Error) => err.message);
}

function exemptOperations(document: Record<string, any>, table: LimitTable): string[] {
  const matcher = new PolicyMatcher(table);
  return operationsOf(document)
    .filter(({ path, method }) => matcher.isExempt(method.toUpperCase(), path))
    .map(({ path, method }) => `${method.toUpperCase()} ${path}`);
}

/** Every answer of every operation declares the five headers by $ref, and a 429 is declared, except on exempt operations. */
function assertDeclaredEverywhere(document: Record<string, any>, table: LimitTable) {
  const exempt = new Set(exemptOperations(document, table));
  let limited = 0;
  for (const { path, method, op } of operationsOf(document)) {
    const where = `${method.toUpperCase()} ${path}`;
    const responses = Object.entries<any>(op.responses).map(([status, r]) => [status, resolve(document, r)] as const);
    if (exempt.has(where)) {
      assert.not.ok(op.responses['429'], `${where} is exempt: no 429`);
      for (const [status, response] of responses) {
        for (const name of [...RATE_LIMIT_HEADERS, 'Retry-After']) assert.not.ok(response.headers?.[name], `${where} ${status} declares no ${name}`);
      }
      continue;
    }
    limited++;
    assert.ok(op.responses['429'], `${where} has a 429`);
    for (const [status, response] of responses) {
      for (const name of RATE_LIMIT_HEADERS) {
        assert.equal(response.headers?.[name], { $ref: `#/components/headers/${name}` }, `${where} ${status} declares ${name}`);
      }
    }
    const tooMany = resolve(document, op.responses['429']);
    assert.equal(tooMany.content['application/json'].schema, { $ref: '#/components/schemas/ErrorResponse' }, `${where} 429 body`);
    assert.is(resolve(document, tooMany.headers['Retry-After']).schema.type, 'integer', `${where} 429 Retry-After`);
    assert.match(op.description, /Rate limits counting each call/, `${where} lists its limits`);
  }
  assert.ok(limited > 50, `${limited} limited operations`);
}

test('the document with its rate limits is valid OpenAPI 3.0.3', async () => {
  const problem = await problemsOf(doc);
  assert.is(problem, undefined, problem);
  assert.is(doc.openapi, '3.0.3');
});

test('every operation but the health probes declares a 429 and the five headers on each answer; the probes declare none', () => {
  assert.equal(exemptOperations(doc, t.rateLimiting.table), ['GET /api/health', 'GET /api/health/live', 'GET /api/health/ready']);
  assertDeclaredEverywhere(doc, t.rateLimiting.table);
  const health = doc.paths['/api/health'].get;
  assert.equal(Object.keys(health.responses), ['200', '400', '503']);
  assert.not.match(health.description, /Rate limits counting/);
  assert.match(health.description, /Exempt from every rate limit: no rate-limit headers, never a 429\./);
  // Shared answers carry the headers once, in components, and operations refer to them.
  assert.equal(doc.paths['/api/employee'].get.responses['429'], { $ref: '#/components/responses/TooManyRequests' });
  assert.equal(doc.paths['/api/employee'].get.responses['401'], { $ref: '#/components/responses/Unauthorized' });
  assert.ok(doc.components.responses.Unauthorized.headers['WWW-Authenticate'], 'its own header is kept');
});

test('each operation names the tier, method and endpoint limits that match its method and path', () => {
  const tiers = /`anonymous`: 100 per 60 s, `authenticated`: 1000 per 60 s, `admin`: 5000 per 60 s/;
  const login = doc.paths['/api/auth/login'].post.description;
  assert.match(login, /`POST \/api\/auth\/login`: 5 per 60 s \(brute-force protection; per client address\)/);
  assert.match(login, /`POST \/api\/\*`: 100 per 60 s/);
  assert.match(login, tiers);
  assert.match(login, /^Unknown email/, 'the operation keeps its own description first');

  const reset = doc.paths['/api/auth/request-password'].post.description;
  assert.match(reset, /`POST \/api\/auth\/reset-password`: 3 per 300 s \(abuse prevention; per client address\)/, 'an alias is counted with its route');
  assert.not.match(doc.paths['/api/auth/register'].post.description, /per client address/, 'register counts per caller');
  assert.not.match(reset, /auth\/login/);

  const list = doc.paths['/api/employee'].get.description;
  assert.match(list, /`GET \/api\/\*`: 1000 per 60 s/);
  assert.match(list, tiers);
  assert.not.match(list, /POST|PUT|DELETE \//);

  const patch = doc.paths['/api/employee/{id}'].patch.description;
  assert.match(patch, /\(PATCH counts as PUT\)/);
  assert.match(patch, /`PUT \/api\/\*`: 100 per 60 s/);
  assert.match(doc.paths['/api/employee/{id}'].delete.description, /`DELETE \/api\/\*`: 50 per 60 s/);
});

test('an operation with a 429 of its own keeps it and adds the rate-limit headers', () => {
  const own = doc.paths['/api/email-reset/request-change'].post.responses['429'];
  assert.not.ok(own.$ref);
  assert.match(own.description, /^Too many codes.*Also answered when a rate limit of the operation is used up\.$/);
  assert.equal(own.headers['Retry-After'].schema, { type: 'integer', minimum: 1 });
  for (const name of RATE_LIMIT_HEADERS) assert.equal(own.headers[name], { $ref: `#/components/headers/${name}` });
});

test('header components: integers where the value is a number, with their units; the 429 component', () => {
  const headers = doc.components.headers;
  // Besides these, the headers on every answer (security headers, Cache-Control), marked x-every-answer.
  const limitHeaders = Object.keys(headers).filter((name) => !headers[name]['x-every-answer']);
  assert.equal(limitHeaders.sort(), [...RATE_LIMIT_HEADERS, 'Retry-After', 'X-Request-Id'].sort());
  for (const name of ['X-RateLimit-Limit', 'X-RateLimit-Remaining', 'X-RateLimit-Reset', 'Retry-After']) {
    assert.is(headers[name].schema.type, 'integer', name);
  }
  assert.is(headers['X-RateLimit-Limit'].schema.minimum, 1);
  assert.is(headers['X-RateLimit-Remaining'].schema.minimum, 0);
  assert.is(headers['Retry-After'].schema.minimum, 1);
  assert.match(headers['X-RateLimit-Reset'].description, /Unix time in whole seconds/);
  assert.match(headers['Retry-After'].description, /^Seconds/);
  assert.match(headers['X-RateLimit-Limit'].description, /most restrictive/);
  assert.match(headers['RateLimit-Policy'].description, /"name";q=<requests>;w=<window in seconds>/);
  assert.match(headers['RateLimit'].description, /"name";r=<requests left>;t=<seconds/);
  for (const name of ['RateLimit-Policy', 'RateLimit']) {
    const { pattern, example } = headers[name].schema;
    assert.ok(new RegExp(pattern).test(example), `${name}: the example fits the pattern`);
  }

  const tooMany = doc.components.responses.TooManyRequests;
  assert.equal(Object.keys(tooMany.headers).sort(), ['Retry-After', ...RATE_LIMIT_HEADERS, 'X-Request-Id'].sort());
  assert.is(tooMany.content['application/json'].example.statusCode, 429);
  assert.is(tooMany.content['application/json'].example.error, 'Too Many Requests');
});

test("the intro says the counting in one line and links the page that explains the keying, the headers and the exemptions", async () => {
  const { description } = doc.info;
  const line = description.split('\n').find((l: string) => l.startsWith('- **Rate limits**'));
  assert.ok(line, description);
  assert.match(line, /count each request by caller tier, method and endpoint \(each operation lists its own\)/);
  assert.match(line, /429 with `Retry-After`/);
  assert.match(line, /\[Rate limits\]\(\/docs\/rate-limits\.md\)/);
  // What the intro said before it was cut to a line, now on the page it links, as the service serves it.
  const page = await t.http.get('/docs/rate-limits.md');
  assert.is(page.status, 200);
  const text = page.text.replace(/\s+/g, ' ');
  assert.match(text, /A request with a valid access token \(one the API would accept: signature, expiry, kind, a known role, a live session\) counts against its user/);
  assert.match(text, /any other request, a revoked session's token included, against its client address/);
  assert.match(text, /`X-Forwarded-For` is believed only from the proxies of `TRUST_PROXY`/);
  assert.match(text, /a limit that counts by address is marked "per client address" there/);
  assert.match(text, /Every limit of `config\/limits\.yaml` that matches a request counts it/);
  assert.match(text, /the most restrictive limit \(the one with the fewest requests left\)/);
  assert.match(text, /`RateLimit-Policy` \| IETF draft syntax, every limit that counted the request/);
  assert.match(text, /`GET \/api\/health`, `\/api\/health\/live` and `\/api\/health\/ready` are exempt from every limit/);
  assert.match(text, /the numbers in force/);
});

test('another table: its exempt operations drop the headers (shared answers inlined), scaled numbers are shown', async () => {
  const table = scaleLimitTable(t.rateLimiting.table, { scale: 2, windowScale: 0.5 });
  const exempting: LimitTable = { ...table, exempt: [...table.exempt, { method: 'GET', paths: ['/api/employee'] }] };
  const other = buildOpenApiDocument(t.engine, t.routes, [...authModules, ...projectModules], exempting) as Record<string, any>;
  const problem = await problemsOf(other);
  assert.is(problem, undefined, problem);
  assert.equal(exemptOperations(other, exempting), ['GET /api/employee', 'GET /api/health', 'GET /api/health/live', 'GET /api/health/ready']);
  assertDeclaredEverywhere(other, exempting);
  const list = other.paths['/api/employee'].get;
  assert.equal(list.responses['401'].description, doc.components.responses.Unauthorized.description);
  assert.equal(Object.keys(list.responses['401'].headers), ['WWW-Authenticate', 'X-Request-Id']);
  assert.match(other.paths['/api/auth/login'].post.description, /`POST \/api\/auth\/login`: 10 per 30 s/);
  assert.match(other.paths['/api/employee'].get.description, /Exempt from every rate limit/);
  assert.not.match(doc.paths['/api/employee'].get.description, /Exempt from every rate limit/);
  // The app's own document is untouched.
  assert.ok(doc.paths['/api/employee'].get.responses['429']);
});

// ---------------------------------------------------------------------------------------------
// What the server answers fits what is declared.

const ajv = new Ajv({ strict: false, allErrors: true });
addFormats.default(ajv);
let withComponents = false;

/** Whether a body fits a response's declared JSON schema (its $refs into the document resolved). */
function bodyFits(response: any, body: unknown) {
  if (!withComponents) ajv.addSchema({ $id: 'doc', components: doc.components });
  withComponents = true;
  const schema = JSON.parse(JSON.stringify(response.content['application/json'].schema).replaceAll('"#/components/', '"doc#/components/'));
  const validate = ajv.compile(schema);
  assert.ok(validate(body), `${JSON.stringify(body)}: ${JSON.stringify(validate.errors)}`);
}

/** Every declared header that is sent fits its schema (integers arrive as digits); the rate-limit ones and required ones are sent. */
function assertHeadersFit(res: { headers: Record<string, any> }, response: any, where: string) {
  for (const [name, declared] of Object.entries<any>(response.headers)) {
    const header = resolve(doc, declared);
    const value = res.headers[name.toLowerCase()];
    if (RATE_LIMIT_HEADERS.includes(name) || header.required) assert.type(value, 'string', `${where}: ${name} is sent`);
    if (value === undefined) continue;
    const typed = header.schema.type === 'integer' && /^-?\d+$/.test(value) ? Number(value) : value;
    const validate = ajv.compile(header.schema);
    assert.ok(validate(typed), `${where}: ${name}: ${value} does not fit ${JSON.stringify(header.schema)}`);
  }
}

test('a real 429 (the sixth login within a minute) fits the declared body and headers, and so do the answers before it', async () => {
  const login = doc.paths['/api/auth/login'].post;
  const attempt = () => t.http.post('/api/auth/login').send({ email: uniqueEmail('limited'), password: 'Wr0ng!Passw0rd' });
  for (let i = 1; i <= 5; i++) {
    const res = await attempt();
    assertError(res, 401);
    const declared = resolve(doc, login.responses['401']);
    bodyFits(declared, res.body);
    assertHeadersFit(res, declared, `attempt ${i}`);
    assert.is(res.headers['x-ratelimit-limit'], '5', 'the login limit is the most restrictive');
    assert.is(res.headers['x-ratelimit-remaining'], String(5 - i));
  }

  const before = Math.floor(Date.now() / 1000);
  const refused = await attempt();
  assertError(refused, 429, /the limit "POST \/api\/auth\/login" \(5 requests per 60 s\) is used up/);
  const declared = resolve(doc, login.responses['429']);
  bodyFits(declared, refused.body);
  assertHeadersFit(refused, declared, '429');
  assert.is(refused.headers['x-ratelimit-remaining'], '0');
  // The units the document states: Retry-After in seconds, the reset in Unix seconds.
  const wait = Number(refused.headers['retry-after']);
  assert.ok(wait >= 1 && wait <= 60, `Retry-After ${wait}`);
  const reset = Number(refused.headers['x-ratelimit-reset']);
  assert.ok(reset >= before && reset <= before + 61, `X-RateLimit-Reset ${reset} is Unix seconds`);
  assert.match(refused.headers['ratelimit-policy'], /"POST \/api\/auth\/login";q=5;w=60/);

  // The exempt health check answers without them, as declared.
  const health = await t.http.get('/api/health');
  assert.is(health.status, 200);
  for (const name of [...RATE_LIMIT_HEADERS, 'Retry-After']) assert.is(health.headers[name.toLowerCase()], undefined, name);
});

test.run();
