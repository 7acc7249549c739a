// The share link routes in the OpenAPI document: the invoice's link routes (bearer token) and the
// customer's public routes (security: [], relations[] as the enum of customer-view.ts).
import { MAX_QUERY_VALUES } from '../../engine/http/context.js';
import type { OpenApiPaths } from '../../engine/module.js';
import { errorResponses, idParameter, jsonBody, jsonResponse, ref } from '../../engine/openapi/fragments.js';
import { PUBLIC_RELATIONS } from './customer-view.js';
import { ALREADY_DECIDED, VOID_ESTIMATE } from './estimate-decision.js';
import { DEFAULT_DAYS, LINK_PATH, LINKS_PATH, MAX_DAYS } from './link-routes.js';
import { KINDS, publicPath, type Kind } from './public-routes.js';
import { ESTIMATE_DECISION, publicSchemaName, SHARE_LINK_CREATE, SHARE_LINK_CREATED, SHARE_LINK_LIST } from './schemas.js';

const TAG = 'invoice';
const template = (path: string) => path.replace(/:(\w+)/g, '{$1}');

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

const linkIdParameter = { name: 'linkId', in: 'path', required: true, description: 'Share link id', schema: { type: 'string', format: 'uuid' } };

function linkPaths(): OpenApiPaths {
  return {
    [template(LINKS_PATH)]: {
      post: {
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
      get: {
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
    [template(LINK_PATH)]: {
      delete: {
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
  };
}

const viewResponse = (kind: Kind) => jsonResponse(`The ${kind} as its customer sees it`, ref(publicSchemaName('invoice')));

function publicGet(kind: Kind): Record<string, unknown> {
  return {
    tags: [TAG],
    operationId: kind === 'invoice' ? 'getPublicInvoice' : 'getPublicEstimate',
    summary: `Open a shared ${kind} (no sign-in)`,
    description:
      `The ${kind} a share link opens, without a bearer token: its customer-visible fields only, and the relations asked for. ` +
      `Counted as anonymous whatever token is sent. ${NOT_FOUND} An id that is not a UUID is a 400.`,
    security: [],
    parameters: [idParameter(), tokenParameter, relationsParameter],
    responses: { '200': viewResponse(kind), ...errorResponses(400, 404, 500, 503) },
  };
}

function publicDecision(): Record<string, unknown> {
  return {
    tags: [TAG],
    operationId: 'decidePublicEstimate',
    summary: 'Accept or reject a shared estimate (no sign-in)',
    description:
      'The customer answers the estimate: {status: ACCEPTED|REJECTED}, nothing else. The first answer is kept, with estimateDecidedAt; ' +
      `the same answer again changes nothing (200). 409 for another answer after the first ("${ALREADY_DECIDED('ACCEPTED')}") ` +
      `or any answer to a void estimate ("${VOID_ESTIMATE}"). Takes no query parameters. ${NOT_FOUND}`,
    security: [],
    parameters: [idParameter(), tokenParameter],
    requestBody: jsonBody(ref(ESTIMATE_DECISION)),
    responses: {
      '200': jsonResponse('The estimate as its customer now sees it', ref(publicSchemaName('invoice'))),
      ...errorResponses(400, 404, 409, 413, 415, 500, 503),
    },
  };
}

export function publicShareOpenApi(): OpenApiPaths {
  const paths = linkPaths();
  for (const kind of Object.keys(KINDS) as Kind[]) paths[template(publicPath(kind))] = { get: publicGet(kind) };
  paths[template(publicPath('estimate'))].put = publicDecision();
  return paths;
}
