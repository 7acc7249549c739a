// Share links of invoices and estimates (as Ever Gauzy shares them with a customer): users of the
// tenant create and revoke links (link-routes.ts); a customer opens the record with the link's
// token, without an account, and answers an estimate (public-routes.ts). The invoice definition
// carries estimateStatus; the links live in their own table (links.ts).
import type { Engine, Module } from '../../engine/module.js';
import type { ResourceService } from '../../engine/resource/service.js';
import { CustomerView } from './customer-view.js';
import { linkRoutes } from './link-routes.js';
import { publicRoutes } from './public-routes.js';
import { publicShareSchemas } from './schemas.js';

const INVOICE = 'invoice';

function invoicesOf(engine: Engine): ResourceService {
  const service = engine.services.get(INVOICE);
  if (!service) throw new Error(`The public-share module needs the ${INVOICE} resource: is invoice.yaml loaded?`);
  return service;
}

export const publicShareModule: Module = {
  name: 'public-share',
  routes: (engine) => [...linkRoutes(invoicesOf(engine), engine.config), ...publicRoutes(engine.db, new CustomerView(engine.db, engine.registry))],
  openapiSchemas(engine) {
    return publicShareSchemas(engine.registry);
  },
};
