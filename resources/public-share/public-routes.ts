// The routes a customer opens without an account: GET /api/public/{invoice|estimate}/{id}/{token}
// answers the customer's view of the record, PUT /api/public/estimate/{id}/{token} takes the
// customer's answer to an estimate. The token is the only credential: the routes are public,
// counted as anonymous whatever token is sent, and logged with the token masked. A token that is
// malformed, unknown, revoked, expired, for another record or for the other kind (an estimate
// asked for as an invoice) is the same 404, so an answer never says which part was wrong.
import type { Context } from 'koa';
import type { Knex } from 'knex';
import { badRequest, notFound } from '../../engine/errors.js';
import { MAX_QUERY_VALUES, parseQueryString, readParameters } from '../../engine/http/context.js';
import { errorResponses, idParameter, jsonBody, jsonResponse, ref } from '../../engine/openapi/fragments.js';
import type { Route } from '../../engine/route.js';
import { checkId } from '../../engine/resource/service.js';
import { compileValidator } from '../../engine/validation.js';
import { CUSTOMER_FIELDS, parseCustomerRelations, PUBLIC_RELATIONS, type CustomerView } from './customer-view.js';
import { ALREADY_DECIDED, decideEstimate, DECISIONS, VOID_ESTIMATE, type Decision } from './estimate-decision.js';
import { sharedInvoice } from './links.js';
import { ESTIMATE_DECISION, publicSchemaName } from './schemas.js';
import { isShareTokenShape } from './tokens.js';

/** The two kinds of shared record, as their path segment names them. */
export const KINDS = { invoice: { isEstimate: false }, estimate: { isEstimate: true } } as const;
export type Kind = keyof typeof KINDS;

const publicPath = (kind: Kind) => `/api/public/${kind}/:id/:token`;

/** What a customer may write: the answer, nothing else. */
export const DECISION_BODY = {
  type: 'object',
  required: ['status'],
  additionalProperties: false,
  properties: { status: { type: 'string', enum: [...DECISIONS] } },
} as const;

const validDecision = compileValidator<{ status: Decision }>(DECISION_BODY);

const TAG = 'invoice';

const NOT_FOUND =
  'The same 404 for every way a link can fail to open the record: a malformed, unknown, revoked or expired token, ' +
  "a token of another record, or a record of the other kind (an estimate asked for as an invoice, or the reverse).";

const tokenParameter = {
  name: 'token',
  in: 'path',
  required: true,
  description: 'The token of a share link (POST /api/invoice/{id}/share-link)',
  schema: { type: 'string' },
};

const relationsParameter = {
  name: 'relations[]',
  in: 'query',
  required: false,
  style: 'form',
  explode: true,
  description:
    'Related records to load, only these (also accepted as relations[0]=… or relations=a,b; a nested one loads its parent; a name repeated counts once). ' +
    'Each comes with the fields a customer may see; any other value is a 400.',
  schema: { type: 'array', items: { type: 'string', enum: [...PUBLIC_RELATIONS] }, maxItems: MAX_QUERY_VALUES },
};

/**
 * What every customer route is: public, counted as anonymous, and logged without its token. The
 * log masks a near miss with it too (engine/routing/route-table.ts): everything after the kind
 * and the id, so an empty segment or one added after the token leaves no token in the log.
 */
const customerRoute = {
  access: 'public',
  rateLimit: 'anonymous',
  logPath: (path: string) => path.replace(/^(\/api\/public\/[^/]*\/[^/]*\/).+/, '$1:token'),
} as const;

export function publicRoutes(db: Knex, view: CustomerView): Route[] {
  const invoices = view.modelOf('invoice');
  const columns = view.columns('invoice', 'invoice');

  /** The record the path's token opens, and its tenant; the one 404 otherwise. */
  async function opened(ctx: Context, kind: Kind) {
    const id = checkId(ctx.params.id);
    const token = ctx.params.token;
    const found = isShareTokenShape(token) ? await sharedInvoice(db, invoices, columns, { id, token, isEstimate: KINDS[kind].isEstimate }) : undefined;
    if (!found) throw notFound();
    return found;
  }

  const opens = (Object.keys(KINDS) as Kind[]).map(
    (kind): Route => ({
      ...customerRoute,
      method: 'GET',
      path: publicPath(kind),
      async handler(ctx) {
        checkId(ctx.params.id);
        const relations = parseCustomerRelations(readParameters(ctx).relations);
        const { invoice, tenantId } = await opened(ctx, kind);
        ctx.body = await view.of(invoice, tenantId, relations);
      },
      docs: {
        tags: [TAG],
        operationId: kind === 'invoice' ? 'getPublicInvoice' : 'getPublicEstimate',
        summary: `Open a shared ${kind} (no sign-in)`,
        description:
          `The ${kind} a share link opens, without a bearer token: its customer-visible fields only, and the relations asked for. ` +
          `Counted as anonymous whatever token is sent. ${NOT_FOUND} An id that is not a UUID is a 400.`,
        parameters: [idParameter(), tokenParameter, relationsParameter],
        responses: { '200': jsonResponse(`The ${kind} as its customer sees it`, ref(publicSchemaName('invoice'))), ...errorResponses(400, 404, 500, 503) },
      },
    }),
  );

  const decides: Route = {
    ...customerRoute,
    method: 'PUT',
    path: publicPath('estimate'),
    async handler(ctx) {
      checkId(ctx.params.id);
      const unknown = Object.keys(parseQueryString(ctx.querystring));
      if (unknown.length) throw badRequest(unknown.map((name) => `${name} is not a supported parameter of this route`));
      const { status } = validDecision(ctx.request.body);
      const { invoice, tenantId } = await opened(ctx, 'estimate');
      ctx.body = await decideEstimate(db, invoices, CUSTOMER_FIELDS.invoice, { tenantId, id: invoice.id, decision: status });
    },
    docs: {
      tags: [TAG],
      operationId: 'decidePublicEstimate',
      summary: 'Accept or reject a shared estimate (no sign-in)',
      description:
        'The customer answers the estimate: {status: ACCEPTED|REJECTED}, nothing else. The first answer is kept, with estimateDecidedAt; ' +
        `the same answer again changes nothing (200). 409 for another answer after the first ("${ALREADY_DECIDED('ACCEPTED')}") ` +
        `or any answer to a void estimate ("${VOID_ESTIMATE}"). Takes no query parameters. ${NOT_FOUND}`,
      parameters: [idParameter(), tokenParameter],
      requestBody: jsonBody(ref(ESTIMATE_DECISION)),
      responses: {
        '200': jsonResponse('The estimate as its customer now sees it', ref(publicSchemaName('invoice'))),
        ...errorResponses(400, 404, 409, 413, 415, 500, 503),
      },
    },
  };
  return [...opens, decides];
}
