// The module's named schemas: the customer's views, each built from its resource's record schema
// narrowed to customer-view.ts's whitelist (so the document cannot list a field the answer lacks,
// or the reverse), and the share link records and bodies.
import { pascalCase, ref } from '../../engine/openapi/fragments.js';
import { toOpenApiSchema } from '../../engine/openapi/schema-conversion.js';
import type { Registry } from '../../engine/resource/compiled.js';
import { CUSTOMER_FIELDS, type CustomerResource } from './customer-view.js';
import { DECISION_BODY } from './public-routes.js';
import { CREATE_BODY, DEFAULT_DAYS, MAX_DAYS } from './link-routes.js';

type Json = Record<string, any>;

export const publicSchemaName = (name: CustomerResource) => `Public${pascalCase(name)}`;
export const SHARE_LINK = 'ShareLink';
export const SHARE_LINK_CREATED = 'ShareLinkCreated';
export const SHARE_LINK_LIST = 'ShareLinkList';
export const SHARE_LINK_CREATE = 'ShareLinkCreate';
export const ESTIMATE_DECISION = 'EstimateDecision';

const WHEN_ASKED = (name: string) => `Present only when requested with relations[]=${name}`;
const nullable = (schemaName: string, description: string) => ({ anyOf: [ref(schemaName), { type: 'object', nullable: true, enum: [null] }], description });

/** The record schema of `name`, with the whitelisted properties only. */
function narrowed(registry: Registry, name: CustomerResource, description: string): Json {
  const record = toOpenApiSchema(registry.get(name)!.schemas.record) as Json;
  const fields: readonly string[] = CUSTOMER_FIELDS[name];
  const properties = Object.fromEntries(fields.map((field) => [field, record.properties[field]]));
  const required = ((record.required as string[] | undefined) ?? []).filter((field) => fields.includes(field));
  return { type: 'object', additionalProperties: false, description, ...(required.length ? { required } : {}), properties };
}

const timestamp = (description: string) => ({ type: 'string', format: 'date-time', description });
const uuid = (description: string) => ({ type: 'string', format: 'uuid', description });

const shareLink: Json = {
  type: 'object',
  additionalProperties: false,
  required: ['id', 'invoiceId', 'expiresAt', 'revokedAt', 'createdById', 'createdAt', 'active'],
  properties: {
    id: uuid('The link id, for revoking it'),
    invoiceId: uuid('The invoice or estimate it opens'),
    expiresAt: timestamp('After this the link opens nothing'),
    revokedAt: { ...timestamp('When it was revoked; null while it is not'), nullable: true },
    createdById: { ...uuid('The user who created it; null once that user is deleted'), nullable: true },
    createdAt: timestamp('When it was created'),
    active: { type: 'boolean', description: 'Neither revoked nor expired: the link opens its record' },
  },
};

/** The create body, as Ajv checks it, in OpenAPI's terms (an ISO date or date-time). */
function shareLinkCreate(): Json {
  const expiresAt = {
    ...CREATE_BODY.properties.expiresAt,
    description: `When the link stops working: in the future, at most ${MAX_DAYS} days ahead. Default: ${DEFAULT_DAYS} days from now`,
  };
  const schema = toOpenApiSchema({ ...CREATE_BODY, properties: { expiresAt } }) as Json;
  // A fixed example date would lie in the past one day; none is given.
  delete schema.properties.expiresAt.example;
  return schema;
}

export function publicShareSchemas(registry: Registry): Record<string, Json> {
  const invoice = narrowed(registry, 'invoice', "An invoice or estimate as its customer sees it through a share link: no tenant, no record's internal fields");
  const organization = publicSchemaName('organization');
  invoice.properties.organization = nullable(organization, `${WHEN_ASKED('organization')}; the organization the invoice belongs to`);
  invoice.properties.fromOrganization = nullable(organization, `${WHEN_ASKED('fromOrganization')}; the issuer`);
  invoice.properties.toContact = nullable(publicSchemaName('organization-contact'), `${WHEN_ASKED('toContact')}; null when toContactId is empty`);
  invoice.properties.invoiceItems = { type: 'array', items: ref(publicSchemaName('invoice-item')), description: WHEN_ASKED('invoiceItems (or one of its nested relations)') };
  const item = narrowed(registry, 'invoice-item', 'One line of a shared invoice or estimate');
  item.properties.employee = nullable(publicSchemaName('employee'), `${WHEN_ASKED('invoiceItems.employee')}; null when employeeId is empty`);
  item.properties.project = nullable(publicSchemaName('organization-project'), `${WHEN_ASKED('invoiceItems.project')}; null when projectId is empty`);
  return {
    [publicSchemaName('invoice')]: invoice,
    [publicSchemaName('invoice-item')]: item,
    [organization]: narrowed(registry, 'organization', 'An organization as a customer sees it: its name and website'),
    [publicSchemaName('organization-contact')]: narrowed(registry, 'organization-contact', 'The customer contact: its name only'),
    [publicSchemaName('employee')]: narrowed(registry, 'employee', 'An employee as a customer sees it: the name only (never a user, an email or a rate)'),
    [publicSchemaName('organization-project')]: narrowed(registry, 'organization-project', 'A project as a customer sees it: its name only'),
    [SHARE_LINK]: shareLink,
    [SHARE_LINK_CREATED]: {
      ...shareLink,
      required: [...shareLink.required, 'token', 'url'],
      properties: {
        ...shareLink.properties,
        token: { type: 'string', pattern: '^[A-Za-z0-9_-]{43}$', description: 'The secret of the link: shown this once, only its hash is kept' },
        url: { type: 'string', format: 'uri', description: 'The public route that opens the record (estimate or invoice, as the record is now), under API_BASE_URL' },
      },
    },
    [SHARE_LINK_LIST]: {
      type: 'object',
      additionalProperties: false,
      required: ['items', 'total'],
      properties: { items: { type: 'array', items: ref(SHARE_LINK) }, total: { type: 'integer', minimum: 0 } },
    },
    [SHARE_LINK_CREATE]: shareLinkCreate(),
    [ESTIMATE_DECISION]: { ...DECISION_BODY, properties: { status: { ...DECISION_BODY.properties.status, description: "The customer's answer" } } },
  };
}
