// Share links in the database (table invoice_share_link): created for an invoice of the caller's
// tenant, listed and revoked within that tenant, and found for a customer by the hash of the token
// it presents. A revoked link is kept (who shared what, and when), and never works again. The table
// is this module's own, not a resource (no definition, no model): it is read with knex; the
// invoice a link opens is read through the invoice model.
import type { Knex } from 'knex';
import type { Caller } from '../../engine/caller.js';
import type { ResourceModelClass } from '../../engine/resource/model.js';
import { hashShareToken, newShareToken } from './tokens.js';

const TABLE = 'invoice_share_link';

/** A link as the API shows it: never its token (shown once, when created) or the token's hash. */
export interface ShareLink {
  id: string;
  invoiceId: string;
  expiresAt: Date;
  revokedAt: Date | null;
  createdById: string | null;
  createdAt: Date;
  /** Neither revoked nor expired. */
  active: boolean;
}

const shown = (db: Knex) => [
  'id', 'invoiceId', 'expiresAt', 'revokedAt', 'createdById', 'createdAt',
  db.raw('(?? is null and ?? > now()) as ??', ['revokedAt', 'expiresAt', 'active']),
];

/** A new link to the invoice (already found in the caller's tenant), with its token. */
export async function createLink(db: Knex, caller: Caller, invoiceId: string, expiresAt: Date): Promise<ShareLink & { token: string }> {
  const token = newShareToken();
  const [link] = await db(TABLE)
    .insert({ tenantId: caller.tenantId, invoiceId, tokenHash: hashShareToken(token), expiresAt, createdById: caller.userId })
    .returning(shown(db));
  return { ...link, token };
}

/** Every link of the invoice, newest first. */
export function linksOf(db: Knex, tenantId: string, invoiceId: string): Promise<ShareLink[]> {
  return db(TABLE).select(shown(db)).where({ tenantId, invoiceId }).orderBy([{ column: 'createdAt', order: 'desc' }, { column: 'id', order: 'desc' }]);
}

/** Revokes the link (a revoked one stays as it was): false when the invoice has no such link in the tenant. */
export async function revokeLink(db: Knex, tenantId: string, invoiceId: string, linkId: string): Promise<boolean> {
  const ofInvoice = () => db(TABLE).where({ id: linkId, tenantId, invoiceId });
  const revoked = await ofInvoice().whereNull('revokedAt').update({ revokedAt: db.fn.now(), updatedAt: db.fn.now() }).returning('id');
  return revoked.length > 0 || (await ofInvoice().first('id')) !== undefined;
}

/**
 * The invoice a customer's token opens, when the token is a live link (not revoked, not expired)
 * to exactly that invoice, of that kind (estimate or not), in the link's own tenant: `columns` of
 * it (qualified with `invoice`) and that tenant. Undefined for anything else, whichever part failed.
 */
export async function sharedInvoice(
  db: Knex,
  invoices: ResourceModelClass,
  columns: string[],
  found: { id: string; token: string; isEstimate: boolean },
): Promise<{ invoice: Record<string, any>; tenantId: string } | undefined> {
  const row = await invoices
    .query(db)
    .alias('invoice')
    .join(`${TABLE} as link`, (on) => on.on('invoice.id', 'link.invoiceId').andOn('invoice.tenantId', 'link.tenantId'))
    .where('link.tokenHash', hashShareToken(found.token))
    .where('link.invoiceId', found.id)
    .whereNull('link.revokedAt')
    .where('link.expiresAt', '>', db.fn.now())
    .where('invoice.isEstimate', found.isEstimate)
    // Read before the tenant is known, so not through scoped(): a deleted invoice (softDelete) opens nothing.
    .whereNull('invoice.deletedAt')
    .select([...columns, 'link.tenantId as linkTenantId'])
    .first();
  if (!row) return undefined;
  const { linkTenantId, ...invoice } = row;
  return { invoice, tenantId: linkTenantId };
}
