// What a customer holding a share link sees of an invoice or estimate: a whitelist of fields per
// kind of record, and of the relations it may load. Only the listed columns are ever selected, so
// nothing else of the tenant (bill rates, budgets, user ids or emails, tenantId, internal notes) can
// reach the answer, and every related record is read inside the link's own tenant (the models'
// scope, with the link's tenant as the reader).
import type { Knex } from 'knex';
import { badRequest } from '../../engine/errors.js';
import type { Registry } from '../../engine/resource/compiled.js';
import type { ResourceModelClass } from '../../engine/resource/model.js';
import { relationNames } from '../../engine/resource/list-query.js';

/** relations[] of the public routes, published as the enum of the document. */
export const PUBLIC_RELATIONS = ['organization', 'fromOrganization', 'toContact', 'invoiceItems', 'invoiceItems.employee', 'invoiceItems.project'] as const;
export type PublicRelation = (typeof PUBLIC_RELATIONS)[number];

/** The fields a customer sees, by resource name. */
export const CUSTOMER_FIELDS = {
  invoice: [
    'id', 'invoiceNumber', 'invoiceDate', 'dueDate', 'currency', 'discountValue', 'discountType', 'tax', 'taxType', 'totalValue',
    'status', 'isEstimate', 'estimateStatus', 'estimateDecidedAt', 'terms', 'organizationId', 'fromOrganizationId', 'toContactId',
  ],
  organization: ['id', 'name', 'website'],
  'organization-contact': ['id', 'name'],
  'invoice-item': ['id', 'description', 'quantity', 'price', 'totalValue', 'employeeId', 'projectId'],
  employee: ['id', 'firstName', 'lastName'],
  'organization-project': ['id', 'name'],
} as const satisfies Record<string, readonly string[]>;

export type CustomerResource = keyof typeof CUSTOMER_FIELDS;
type Row = Record<string, any>;

const isPublicRelation = (name: string): name is PublicRelation => (PUBLIC_RELATIONS as readonly string[]).includes(name);

/**
 * The relations asked for (the list routes' spellings: relations[]=a, relations=a,b, …), each
 * nested one with its parent; any name outside the whitelist is a 400 naming the allowed ones.
 */
export function parseCustomerRelations(raw: unknown): Set<PublicRelation> {
  const wanted = new Set<PublicRelation>();
  if (raw === undefined) return wanted;
  const problems: string[] = [];
  for (const name of relationNames(raw, problems)) {
    if (!isPublicRelation(name)) problems.push(`relations: '${name}' is not allowed; allowed: ${PUBLIC_RELATIONS.join(', ')}`);
    else wanted.add(name);
  }
  if (problems.length) throw badRequest(problems);
  if (wanted.has('invoiceItems.employee') || wanted.has('invoiceItems.project')) wanted.add('invoiceItems');
  return wanted;
}

const present = (values: unknown[]) => [...new Set(values.filter((v): v is string => typeof v === 'string'))];

export class CustomerView {
  private readonly models: Record<CustomerResource, ResourceModelClass>;

  constructor(
    private readonly db: Knex,
    registry: Registry,
  ) {
    const modelOf = (name: CustomerResource) => {
      const resource = registry.get(name);
      if (!resource) throw new Error(`The public-share module needs the ${name} resource: is its definition loaded?`);
      return resource.model;
    };
    this.models = Object.fromEntries(Object.keys(CUSTOMER_FIELDS).map((name) => [name, modelOf(name as CustomerResource)])) as Record<CustomerResource, ResourceModelClass>;
  }

  modelOf(name: CustomerResource): ResourceModelClass {
    return this.models[name];
  }

  /** The customer's columns of `name`, qualified with `alias` (the table itself by default). */
  columns(name: CustomerResource, alias: string = this.models[name].tableName): string[] {
    return CUSTOMER_FIELDS[name].map((field) => `${alias}.${field}`);
  }

  /** The invoice row (its customer columns only) with the relations asked for, each read in `tenantId`. */
  async of(invoice: Row, tenantId: string, relations: Set<PublicRelation>): Promise<Row> {
    const view: Row = { ...invoice };
    const wants = (name: PublicRelation) => relations.has(name);
    const [organizations, contacts, items] = await Promise.all([
      wants('organization') || wants('fromOrganization') ? this.byId('organization', tenantId, [invoice.organizationId, invoice.fromOrganizationId]) : undefined,
      wants('toContact') ? this.byId('organization-contact', tenantId, [invoice.toContactId]) : undefined,
      wants('invoiceItems') ? this.itemsOf(invoice.id, tenantId) : undefined,
    ]);
    if (wants('organization')) view.organization = organizations?.get(invoice.organizationId) ?? null;
    if (wants('fromOrganization')) view.fromOrganization = organizations?.get(invoice.fromOrganizationId) ?? null;
    if (wants('toContact')) view.toContact = contacts?.get(invoice.toContactId) ?? null;
    if (!items) return view;
    const [employees, projects] = await Promise.all([
      wants('invoiceItems.employee') ? this.byId('employee', tenantId, items.map((i) => i.employeeId)) : undefined,
      wants('invoiceItems.project') ? this.byId('organization-project', tenantId, items.map((i) => i.projectId)) : undefined,
    ]);
    view.invoiceItems = items.map((item) => ({
      ...item,
      ...(employees ? { employee: employees.get(item.employeeId) ?? null } : {}),
      ...(projects ? { project: projects.get(item.projectId) ?? null } : {}),
    }));
    return view;
  }

  /** Records of `name` with these ids in the tenant, by id; a missing or foreign one is simply absent. */
  private async byId(name: CustomerResource, tenantId: string, ids: unknown[]): Promise<Map<string, Row>> {
    const wanted = present(ids);
    if (!wanted.length) return new Map();
    const rows = await this.models[name].scoped({ tenantId }, this.db).select(CUSTOMER_FIELDS[name]).whereIn('id', wanted);
    return new Map(rows.map((row) => [row.id, row]));
  }

  /** The invoice's items, in the order they were written (the id breaks ties within one write). */
  private async itemsOf(invoiceId: string, tenantId: string): Promise<Row[]> {
    return await this.models['invoice-item']
      .scoped({ tenantId }, this.db)
      .select(CUSTOMER_FIELDS['invoice-item'])
      .where({ invoiceId })
      .orderBy([{ column: 'createdAt' }, { column: 'id' }]);
  }
}
