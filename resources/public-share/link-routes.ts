// Share links of one invoice, for its tenant's users: POST /api/invoice/{id}/share-link creates one
// (201 with its token and URL, shown this once), GET lists them, DELETE .../{linkId} revokes one.
// The invoice is found as a read of it would find it (the caller's tenant, else 404), so a link is
// never made, seen or revoked across tenants. Creating and revoking need the invoice's write
// permission (INVOICES_EDIT), listing its read permission.
import type { Context } from 'koa';
import type { Config } from '../../engine/config/config.js';
import { badRequest, notFound } from '../../engine/errors.js';
import { callerOf, parseQueryString } from '../../engine/http/context.js';
import { errorResponses, idParameter, jsonBody, jsonResponse, ref } from '../../engine/openapi/fragments.js';
import { toTimestamp } from '../../engine/resource/fields.js';
import type { Route } from '../../engine/route.js';
import { checkId, type ResourceService } from '../../engine/resource/service.js';
import { compileValidator } from '../../engine/validation.js';
import { createLink, linksOf, revokeLink } from './links.js';
import type { Kind } from './public-routes.js';
import { SHARE_LINK_CREATE, SHARE_LINK_CREATED, SHARE_LINK_LIST } from './schemas.js';

const LINKS_PATH = '/api/invoice/:id/share-link';
const LINK_PATH = `${LINKS_PATH}/:linkId`;

/** How long a link lives when the request names no expiry, and at most. */
export const DEFAULT_DAYS = 30;
export const MAX_DAYS = 365;
const DAY_MS = 24 * 60 * 60 * 1000;

export const CREATE_BODY = {
  type: 'object',
  additionalProperties: false,
  properties: { expiresAt: { type: 'string', format: 'iso-date' } },
} as const;

const validCreate = compileValidator<{ expiresAt?: string }>(CREATE_BODY);

/** The expiry asked for (an ISO date or date-time, as a timestamp field takes it), in the future and at most MAX_DAYS ahead. */
function expiryOf(body: unknown): Date {
  const { expiresAt } = validCreate(body ?? {});
  const now = Date.now();
  if (expiresAt === undefined) return new Date(now + DEFAULT_DAYS * DAY_MS);
  const at = new Date(toTimestamp(expiresAt));
  if (at.getTime() <= now) throw badRequest('expiresAt must be in the future');
  if (at.getTime() > now + MAX_DAYS * DAY_MS) throw badRequest(`expiresAt must not be more than ${MAX_DAYS} days ahead`);
  return at;
}

function noQuery(ctx: Context) {
  const unknown = Object.keys(parseQueryString(ctx.querystring));
  if (unknown.length) throw badRequest(unknown.map((name) => `${name} is not a supported parameter of this route`));
}

/** The address a customer opens: the public route of the record's kind, under API_BASE_URL. */
export const linkUrl = (config: Config, kind: Kind, invoiceId: string, token: string) => `${config.apiBaseUrl}/api/public/${kind}/${invoiceId}/${token}`;

const TAG = 'invoice';
const linkIdParameter = { name: 'linkId', in: 'path', required: true, description: 'Share link id', schema: { type: 'string', format: 'uuid' } };

export function linkRoutes(invoices: ResourceService, config: Config): Route[] {
  const { db, resource } = invoices;
  const can = resource.permissions;
  return [
    {
      method: 'POST',
      path: LINKS_PATH,
      permission: can.update,
      async handler(ctx) {
        const caller = callerOf(ctx);
        noQuery(ctx);
        const expiresAt = expiryOf(ctx.request.body);
        const invoice = await invoices.read(caller, ctx.params.id);
        const link = await createLink(db, caller, invoice.id, expiresAt);
        const kind: Kind = invoice.isEstimate ? 'estimate' : 'invoice';
        ctx.status = 201;
        ctx.body = { ...link, url: linkUrl(config, kind, invoice.id, link.token) };
      },
      docs: {
        tags: [TAG],
        operationId: 'createInvoiceShareLink',
        summary: 'Share an invoice or estimate with its customer through a link that needs no sign-in',
        description:
          `A new link to the invoice (an estimate opens under /api/public/estimate, an invoice under /api/public/invoice). ` +
          `It works until expiresAt (default ${DEFAULT_DAYS} days, at most ${MAX_DAYS}) or until revoked. ` +
          'The token is in this answer only: the service keeps a hash of it. Needs INVOICES_EDIT; an invoice of another tenant is a 404.',
        parameters: [idParameter()],
        requestBody: jsonBody(ref(SHARE_LINK_CREATE), 'The expiry; an empty or absent body takes the default', { required: false }),
        responses: {
          '201': jsonResponse('The link, with its token and URL', ref(SHARE_LINK_CREATED)),
          ...errorResponses(400, 401, 403, 404, 413, 415, 500, 503),
        },
      },
    },
    {
      method: 'GET',
      path: LINKS_PATH,
      permission: can.read,
      async handler(ctx) {
        const caller = callerOf(ctx);
        noQuery(ctx);
        const invoice = await invoices.read(caller, ctx.params.id);
        const items = await linksOf(db, caller.tenantId, invoice.id);
        ctx.body = { items, total: items.length };
      },
      docs: {
        tags: [TAG],
        operationId: 'listInvoiceShareLinks',
        summary: "An invoice's share links",
        description: 'Every link of the invoice, active, expired or revoked, newest first; never their tokens. Needs INVOICES_VIEW.',
        parameters: [idParameter()],
        responses: {
          '200': jsonResponse('The links', ref(SHARE_LINK_LIST)),
          ...errorResponses(400, 401, 403, 404, 500, 503),
        },
      },
    },
    {
      method: 'DELETE',
      path: LINK_PATH,
      permission: can.update,
      async handler(ctx) {
        const caller = callerOf(ctx);
        noQuery(ctx);
        const linkId = checkId(ctx.params.linkId, 'linkId');
        const invoice = await invoices.read(caller, ctx.params.id);
        if (!(await revokeLink(db, caller.tenantId, invoice.id, linkId))) throw notFound();
        ctx.status = 204;
      },
      docs: {
        tags: [TAG],
        operationId: 'revokeInvoiceShareLink',
        summary: 'Revoke a share link',
        description:
          'The link stops working at once and stays listed with its revokedAt. Revoking a revoked link changes nothing (204). ' +
          'Needs INVOICES_EDIT; a link of another invoice, or an invoice of another tenant, is a 404.',
        parameters: [idParameter(), linkIdParameter],
        responses: { '204': { description: 'Revoked' }, ...errorResponses(400, 401, 403, 404, 500, 503) },
      },
    },
  ];
}
