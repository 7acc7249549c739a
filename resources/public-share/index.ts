// Share links of invoices and estimates (as Ever Gauzy shares them with a customer): users of the
// tenant create and revoke links (link-routes.ts); a customer opens the record with the link's
// token, without an account, and answers an estimate (public-routes.ts). The invoice definition
// carries estimateStatus; the links live in their own table (links.ts).
import type { Engine, Module } from '../../engine/module.js';
import type { ResourceService } from '../../engine/resource/service.js';
import { CustomerView } from './customer-view.js';
import { registerLinkRoutes } from './link-routes.js';
import { publicShareOpenApi } from './openapi.js';
import { registerPublicRoutes } from './public-routes.js';
import { publicShareSchemas } from './schemas.js';

const INVOICE = 'invoice';

function invoicesOf(engine: Engine): ResourceService {
  const service = engine.services.get(INVOICE);
  if (!service) throw new Error(`The public-share module needs the ${INVOICE} resource: is invoice.yaml loaded?`);
  return service;
}

export const publicShareModule: Module = {
  name: 'public-share',
  register(router, engine) {
    registerLinkRoutes(router, invoicesOf(engine), engine.config);
    registerPublicRoutes(router, engine.db, new CustomerView(engine.db, engine.registry));
  },
  openapi() {
    return publicShareOpenApi();
  },
  openapiSchemas(engine) {
    return publicShareSchemas(engine.registry);
  },
  // Share links: a customer opens an invoice or estimate with the link's token, not an account.
  publicPaths: [/^\/api\/public\//],
  // The token is a credential: request log lines show the route, never the token.
  logMasks: [{ pattern: /^(\/api\/public\/[^/]+\/[^/]+\/)[^/]+/, replacement: '$1:token' }],
};
