// The routes a customer opens without an account: GET /api/public/{invoice|estimate}/{id}/{token}
// answers the customer's view of the record, PUT /api/public/estimate/{id}/{token} takes the
// customer's answer to an estimate. The token is the only credential (auth/authenticate.ts serves
// /api/public/ without a bearer token; limits.yaml counts it as anonymous). A token that is
// malformed, unknown, revoked, expired, for another record or for the other kind (an estimate
// asked for as an invoice) is the same 404, so an answer never says which part was wrong.
import type Router from '@koa/router';
import type { Context } from 'koa';
import type { Knex } from 'knex';
import { badRequest, notFound } from '../../engine/errors.js';
import { parseQueryString, readParameters } from '../../engine/http/context.js';
import { checkId } from '../../engine/resource/service.js';
import { compileValidator } from '../../engine/validation.js';
import { CUSTOMER_FIELDS, parseCustomerRelations, type CustomerView } from './customer-view.js';
import { decideEstimate, DECISIONS, type Decision } from './estimate-decision.js';
import { sharedInvoice } from './links.js';
import { isShareTokenShape } from './tokens.js';

/** The two kinds of shared record, as their path segment names them. */
export const KINDS = { invoice: { isEstimate: false }, estimate: { isEstimate: true } } as const;
export type Kind = keyof typeof KINDS;

export const publicPath = (kind: Kind) => `/api/public/${kind}/:id/:token`;

/** What a customer may write: the answer, nothing else. */
export const DECISION_BODY = {
  type: 'object',
  required: ['status'],
  additionalProperties: false,
  properties: { status: { type: 'string', enum: [...DECISIONS] } },
} as const;

const validDecision = compileValidator<{ status: Decision }>(DECISION_BODY);

export function registerPublicRoutes(router: Router, db: Knex, view: CustomerView) {
  const invoiceTable = view.tableOf('invoice');
  const columns = view.columns('invoice', 'invoice');

  /** The record the path's token opens, and its tenant; the one 404 otherwise. */
  async function opened(ctx: Context, kind: Kind) {
    const id = checkId(ctx.params.id);
    const token = ctx.params.token;
    const found = isShareTokenShape(token) ? await sharedInvoice(db, invoiceTable, columns, { id, token, isEstimate: KINDS[kind].isEstimate }) : undefined;
    if (!found) throw notFound();
    return found;
  }

  for (const kind of Object.keys(KINDS) as Kind[]) {
    router.get(publicPath(kind), async (ctx) => {
      checkId(ctx.params.id);
      const relations = parseCustomerRelations(readParameters(ctx).relations);
      const { invoice, tenantId } = await opened(ctx, kind);
      ctx.body = await view.of(invoice, tenantId, relations);
    });
  }

  router.put(publicPath('estimate'), async (ctx) => {
    checkId(ctx.params.id);
    const unknown = Object.keys(parseQueryString(ctx.querystring));
    if (unknown.length) throw badRequest(unknown.map((name) => `${name} is not a supported parameter of this route`));
    const { status } = validDecision(ctx.request.body);
    const { invoice, tenantId } = await opened(ctx, 'estimate');
    ctx.body = await decideEstimate(db, invoiceTable, CUSTOMER_FIELDS.invoice, { tenantId, id: invoice.id, decision: status });
  });
}
