// What the rate limits add to the document: the headers every limited answer carries, the 429
// answer, and on each operation the limits that count it. All of it is read from the table the
// middleware enforces (engine/ratelimit), with its matcher, so the document cannot promise other
// limits than the server's. Exempt operations get none of it.
import type { OpenApiPaths } from '../module.js';
import { tooManyRequests } from '../ratelimit/headers.js';
import { PolicyMatcher, type LimitPolicy, type LimitTable } from '../ratelimit/policy.js';
import { ERROR_SCHEMA } from './components.js';
import { OPERATION_METHODS, ref } from './fragments.js';

type Json = Record<string, any>;

/** The headers engine/ratelimit/headers.ts sends on every answer to a limited request. */
export const RATE_LIMIT_HEADERS = ['X-RateLimit-Limit', 'X-RateLimit-Remaining', 'X-RateLimit-Reset', 'RateLimit-Policy', 'RateLimit'] as const;
export const RETRY_AFTER = 'Retry-After';
/** components/responses name of the 429 a used-up limit answers. */
export const TOO_MANY_REQUESTS = 'TooManyRequests';

const headerRef = (name: string) => ({ $ref: `#/components/headers/${name}` });
const rateLimitHeaderRefs = () => Object.fromEntries(RATE_LIMIT_HEADERS.map((name) => [name, headerRef(name)]));

/** "60", "0.5": a scaled window may be fractional, without float noise. */
const number = (value: number) => String(Number(value.toPrecision(6)));
const perWindow = (policy: LimitPolicy) => `${policy.requests} per ${number(policy.windowSeconds)} s`;

const WHEN_SENT =
  'Sent on every answer to a rate-limited operation, errors included, unless the limit store is unreachable ' +
  '(the limits are then not enforced).';

function headerComponents(table: LimitTable): Record<string, Json> {
  // Examples name a policy that every table has.
  const tier = table.tiers[0];
  const window = Math.max(1, Math.ceil(tier.windowSeconds));
  return {
    'X-RateLimit-Limit': {
      description: `Requests allowed per window by the most restrictive limit counting this request (the one with the fewest left). ${WHEN_SENT}`,
      schema: { type: 'integer', minimum: 1, example: tier.requests },
    },
    'X-RateLimit-Remaining': {
      description: `Requests that limit still allows in its current window, this one counted. ${WHEN_SENT}`,
      schema: { type: 'integer', minimum: 0, example: tier.requests - 1 },
    },
    'X-RateLimit-Reset': {
      description: `When that limit's window frees up: Unix time in whole seconds (rounded up). ${WHEN_SENT}`,
      schema: { type: 'integer', minimum: 0, example: 1767225600 },
    },
    'RateLimit-Policy': {
      description:
        'Every limit counting this request, most restrictive first, in the IETF RateLimit header draft syntax: ' +
        '`"name";q=<requests>;w=<window in seconds>`, comma-separated. ' + WHEN_SENT,
      schema: { type: 'string', pattern: '^"[^"]+";q=\\d+;w=\\d+(, "[^"]+";q=\\d+;w=\\d+)*$', example: `"${tier.name}";q=${tier.requests};w=${window}` },
    },
    RateLimit: {
      description:
        'The same limits in the same order, IETF draft syntax: `"name";r=<requests left>;t=<seconds until the window frees up>`. ' + WHEN_SENT,
      schema: { type: 'string', pattern: '^"[^"]+";r=\\d+;t=\\d+(, "[^"]+";r=\\d+;t=\\d+)*$', example: `"${tier.name}";r=${tier.requests - 1};t=${window}` },
    },
    [RETRY_AFTER]: {
      description: 'Seconds to wait before retrying (whole, at least 1): until every used-up limit has freed up.',
      required: true,
      schema: { type: 'integer', minimum: 1, example: 42 },
    },
  };
}

function tooManyRequestsComponent(table: LimitTable): Json {
  // The server's own wording, for a limit of the table.
  const tier = table.tiers[0];
  const example = tooManyRequests([{ policy: tier, limit: tier.requests, remaining: 0, resetAt: 42, refused: true }], 0);
  return {
    description: "A rate limit counting this request is used up, and nothing was done; the operation's description lists its limits.",
    headers: { [RETRY_AFTER]: headerRef(RETRY_AFTER), ...rateLimitHeaderRefs() },
    content: { 'application/json': { schema: ref(ERROR_SCHEMA), example: { statusCode: 429, message: example.messages, error: 'Too Many Requests' } } },
  };
}

/** The limits that count a call of one operation, in words; its path template is matched as a request path would be. */
function describeLimits(matcher: PolicyMatcher, method: string, path: string, anonymous: boolean): string {
  const counted = matcher.countedMethod(method);
  const endpoint = matcher.endpointPolicies(method, path).map((p) => {
    const notes = [p.reason, p.per === 'address' ? 'per client address' : undefined].filter(Boolean);
    return `\`${p.name}\`: ${perWindow(p)}${notes.length ? ` (${notes.join('; ')})` : ''}`;
  });
  const tiers = matcher.table.tiers.map((t) => `\`${t.name}\`: ${perWindow(t)}`).join(', ');
  const anonymousTier = matcher.tierOf(undefined);
  const tier = anonymous
    ? `the \`${anonymousTier.name}\` tier, ${perWindow(anonymousTier)}, per client address whatever token the request carries`
    : `the caller's tier, one of ${tiers}`;
  const sameAs = counted === method ? '' : ` (${method} counts as ${counted})`;
  const listed = [...endpoint, tier].join('; ');
  return `Rate limits counting each call${sameAs}, 429 when any is used up: ${listed}.`;
}

/** An answer of a limited operation: its own headers plus the rate-limit ones. */
const withLimitHeaders = (response: Json): Json => ({ ...response, headers: { ...response.headers, ...rateLimitHeaderRefs() } });

function limitedOperation(op: Json, limits: string): Json {
  const responses: Json = {};
  for (const [status, response] of Object.entries<Json>(op.responses ?? {})) {
    // Shared responses ($ref) carry the headers in components.
    responses[status] = response.$ref ? response : withLimitHeaders(response);
  }
  const own = responses['429'];
  // An operation with a 429 of its own (a quota of its own) keeps it, now also answered for a rate limit.
  responses['429'] = own
    ? { ...own, description: `${own.description}. Also answered when a rate limit of the operation is used up.` }
    : { $ref: `#/components/responses/${TOO_MANY_REQUESTS}` };
  return { ...op, description: op.description ? `${op.description}\n\n${limits}` : limits, responses };
}

const EXEMPT = 'Exempt from every rate limit: no rate-limit headers, never a 429.';

/**
 * An exempt operation answers without the headers: it gets plain copies of the shared responses
 * it names, and its description says so (where a limited one lists its limits).
 */
function exemptOperation(op: Json, plain: Record<string, Json>): Json {
  const responses = Object.fromEntries(
    Object.entries<Json>(op.responses ?? {}).map(([status, response]) => [
      status,
      response.$ref ? structuredClone(plain[String(response.$ref).split('/').pop()!]) : response,
    ]),
  );
  return { ...op, description: op.description ? `${op.description}\n\n${EXEMPT}` : EXEMPT, responses };
}

/**
 * Declares the limits of `table` on every operation it does not exempt: the rate-limit headers on
 * each of its answers, a 429, and its limits in its description. The shared error responses get
 * the headers themselves (every answer passes the limiter first); exempt operations stop naming them.
 */
export function withRateLimits(
  paths: OpenApiPaths,
  components: Json,
  table: LimitTable,
  countsAsAnonymous: (method: string, path: string) => boolean,
): { paths: OpenApiPaths; components: Json } {
  const matcher = new PolicyMatcher(table);
  const plain: Record<string, Json> = components.responses ?? {};
  const limitedPaths: OpenApiPaths = {};
  for (const [path, item] of Object.entries(paths)) {
    limitedPaths[path] = Object.fromEntries(
      Object.entries(item).map(([key, value]) => {
        if (!OPERATION_METHODS.has(key)) return [key, value];
        const method = key.toUpperCase();
        const op = value as Json;
        return [key, matcher.isExempt(method, path) ? exemptOperation(op, plain) : limitedOperation(op, describeLimits(matcher, method, path, countsAsAnonymous(method, path)))];
      }),
    );
  }
  const responses = Object.fromEntries(Object.entries(plain).map(([name, response]) => [name, withLimitHeaders(response)]));
  return {
    paths: limitedPaths,
    components: {
      ...components,
      headers: { ...components.headers, ...headerComponents(table) },
      responses: { ...responses, [TOO_MANY_REQUESTS]: tooManyRequestsComponent(table) },
    },
  };
}
