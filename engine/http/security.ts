// Browser-facing protections of every answer. Security headers (helmet): nothing served here may
// run as a page, be framed, be sniffed into another type or leak a referrer; /api answers are never
// stored by caches (they are per caller). CORS: only origins on the allowlist (CORS_ORIGINS) may
// read answers from a browser page; no cookies are involved (the API takes bearer tokens), so
// credentials are never allowed.
import cors from '@koa/cors';
import type { Context, Middleware, Next } from 'koa';
import helmet from 'koa-helmet';
import { TOTAL_EXACT_HEADER } from '../resource/route-names.js';
import { IDEMPOTENCY_KEY_HEADER, REPLAYED_HEADER } from '../idempotency/request.js';
import { ETAG_HEADER } from './conditional.js';
import { REQUEST_ID_HEADER } from './request-id.js';

/** Answers are JSON or files, never pages: a browser that renders one anyway may load nothing and sits in no frame. */
const API_CONTENT_SECURITY_POLICY = { useDefaults: false, directives: { defaultSrc: ["'none'"], frameAncestors: ["'none'"] } };

/** Headers a browser page of an allowed origin may read: ids, tags, totals, limits, deprecation and download names. */
const EXPOSED_HEADERS = [
  REQUEST_ID_HEADER,
  ETAG_HEADER,
  TOTAL_EXACT_HEADER,
  'X-RateLimit-Limit',
  'X-RateLimit-Remaining',
  'X-RateLimit-Reset',
  'RateLimit',
  'RateLimit-Policy',
  'Retry-After',
  'Deprecation',
  'Link',
  'Preference-Applied',
  REPLAYED_HEADER,
  'Content-Disposition',
  'WWW-Authenticate',
];
/** Request headers a page may send; the definitions add the headers they read (Organization-Id). */
const ALLOWED_HEADERS = ['Authorization', 'Content-Type', 'Tenant-Id', REQUEST_ID_HEADER, 'Accept', 'Accept-Language', 'Prefer', 'If-Match', 'If-None-Match', IDEMPOTENCY_KEY_HEADER];
/** How long a browser may reuse a preflight's answer (seconds). */
const PREFLIGHT_MAX_AGE = 600;

/**
 * helmet's headers, worked out once at start-up by running it against a stand-in answer: they
 * depend on no request (no directive here is a function of one), and setting them from a list
 * costs a fraction of running helmet's dozen middlewares, promisified, on every request.
 */
function helmetHeaders(options: Parameters<typeof helmet>[0]): Array<[string, string]> {
  const headers: Array<[string, string]> = [];
  const answer = { setHeader: (name: string, value: unknown) => void headers.push([name, String(value)]), removeHeader: () => {} };
  // helmet sets every header before it calls on (synchronously): the list is complete here. A
  // failure it reported later would be one of a stand-in answer; the check below is what counts.
  helmet(options)({ req: {}, res: answer } as unknown as Context, async () => {}).catch(() => {});
  const named = new Set(headers.map(([name]) => name.toLowerCase()));
  if (!['content-security-policy', 'x-content-type-options', 'x-frame-options'].every((name) => named.has(name))) {
    throw new Error(`helmet did not set its headers on a stand-in answer (it set: ${[...named].join(', ') || 'none'}): check how this helmet version sets them`);
  }
  return headers;
}

/** helmet's settings shared by both sets of headers. */
const HELMET_SETTINGS = {
  contentSecurityPolicy: API_CONTENT_SECURITY_POLICY,
  // Same site, not same origin: a web client on another port of the same host may show an image file.
  crossOriginResourcePolicy: { policy: 'same-site' },
  frameguard: { action: 'deny' },
  referrerPolicy: { policy: 'no-referrer' },
} as const;

/**
 * Under /api (JSON and stored files, never a page) only what protects such an answer, the set
 * OWASP's REST Security Cheat Sheet names plus the referrer and resource policies. The headers
 * that only ever govern a page (its opener, agent cluster, DNS prefetching, the XSS auditor,
 * IE8's downloads, Flash's cross-domain policies) would add about 180 bytes to every answer, and
 * on a small one that is a measurable share of a server's throughput.
 */
const API_ONLY = {
  crossOriginOpenerPolicy: false,
  originAgentCluster: false,
  xDnsPrefetchControl: false,
  xDownloadOptions: false,
  xPermittedCrossDomainPolicies: false,
  xXssProtection: false,
} as const;

/** The security headers of an /api answer (its Cache-Control aside): also on the errors the HTTP server writes itself (stoppable-server.ts). */
export const API_SECURITY_HEADERS: ReadonlyArray<[string, string]> = helmetHeaders({ ...HELMET_SETTINGS, ...API_ONLY });

/**
 * Every /api answer's headers set here, with their values: the security headers and Cache-Control
 * (a route may set its own Cache-Control, as the image file route does). The OpenAPI document
 * declares these once, as headers on every answer (engine/openapi/every-answer-headers.ts).
 */
export const API_ANSWER_HEADERS: ReadonlyArray<[string, string]> = [...API_SECURITY_HEADERS, ['Cache-Control', 'no-store']];

export function securityHeaders(): Middleware {
  const forApi = API_ANSWER_HEADERS;
  const forPages = helmetHeaders(HELMET_SETTINGS);
  return function secured(ctx: Context, next: Next) {
    const headers = ctx.path.startsWith('/api') ? forApi : forPages;
    for (const [name, value] of headers) ctx.res.setHeader(name, value);
    return next();
  };
}

export function crossOrigin(allowedOrigins: string[], requestHeaders: string[] = []): Middleware {
  const allowed = new Set(allowedOrigins);
  const answer = cors({
    origin: (ctx) => (allowed.has(ctx.get('Origin')) ? ctx.get('Origin') : ''),
    allowMethods: ['GET', 'HEAD', 'PUT', 'POST', 'DELETE', 'PATCH'],
    allowHeaders: [...new Set([...ALLOWED_HEADERS, ...requestHeaders])],
    exposeHeaders: EXPOSED_HEADERS,
    maxAge: PREFLIGHT_MAX_AGE,
    credentials: false,
  });
  return function crossOriginChecked(ctx: Context, next: Next) {
    // Not a browser's cross-origin request: nothing to allow (most API clients send no Origin).
    if (!ctx.get('Origin')) return next();
    return answer(ctx, next);
  };
}
