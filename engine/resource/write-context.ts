// What a create takes from its request beside the body: the organization header.
import type { Context } from 'koa';
import { badRequest } from '../errors.js';
import type { CompiledResource } from './compiled.js';
import { UUID_PATTERN } from './fields.js';

/**
 * The organization header (Organization-Id for Ever Gauzy clients) may name a new record's
 * organization. Sent, it must be a UUID, also when the body names the organization itself (one
 * rule, the document's); sent empty, it counts as not sent.
 */
export function writeContext(ctx: Context, resource: CompiledResource) {
  const organizationHeader = (resource.organizationHeader && ctx.get(resource.organizationHeader)) || undefined;
  if (organizationHeader !== undefined && !UUID_PATTERN.test(organizationHeader)) throw badRequest(`${resource.organizationHeader} header must be a UUID`);
  return { organizationHeader };
}
