// The world the share link suites work in: two tenants, and in the first an invoice and an
// estimate of an organization to a contact, with items naming an employee (whose user has an
// email), a project and a task; helpers to share a record and to open it as a customer.
import { createHash } from 'node:crypto';
import * as assert from 'uvu/assert';
import { newTenant, type Session } from './accounts.js';
import type { TestApp } from './app.js';

export type Tenant = Awaited<ReturnType<typeof newTenant>>;

export interface ShareWorld {
  acme: Tenant;
  other: Tenant;
  contact: string;
  project: string;
  task: string;
  /** Acme's employee, named on items; its user's email must never reach a customer. */
  employee: { id: string; email: string };
  invoice: Record<string, any>;
  estimate: Record<string, any>;
  /** An invoice of the other tenant. */
  foreignInvoice: Record<string, any>;
}

let nextNumber = 5000;

export async function created(t: TestApp, session: Session, path: string, body: Record<string, unknown>): Promise<Record<string, any>> {
  const res = await t.http.post(`/api/${path}`).set(session.auth).send(body);
  assert.is(res.status, 201, `${path}: ${JSON.stringify(res.body)}`);
  return res.body;
}

/** An invoice (or estimate) of the tenant, with two items when an employee and project are given. */
export async function invoiceOf(t: TestApp, tenant: Tenant, extra: Record<string, unknown> = {}): Promise<Record<string, any>> {
  return created(t, tenant, 'invoice', {
    invoiceNumber: nextNumber++,
    invoiceDate: '2026-03-01',
    dueDate: '2026-03-31',
    currency: 'EUR',
    fromOrganizationId: tenant.organizationId,
    organizationId: tenant.organizationId,
    totalValue: 1500,
    terms: 'Net 30',
    ...extra,
  });
}

export async function buildShareWorld(t: TestApp): Promise<ShareWorld> {
  const acme = await newTenant(t, 'Acme');
  const other = await newTenant(t, 'Other');
  const contact = (await created(t, acme, 'organization-contact', { name: 'Globex', primaryEmail: 'billing@globex.example', budget: 99000 })).id;
  const project = (await created(t, acme, 'organization-project', { name: 'Website', budget: 42000, description: 'internal budget notes' })).id;
  const task = (await created(t, acme, 'task', { title: 'Build the site', projectId: project })).id;
  const employeeRecord = await created(t, acme, 'employee', { firstName: 'Erin', lastName: 'Coder', userId: acme.userId, billRateValue: 120 });
  const items = [
    { description: 'Design', quantity: 10, price: 100, totalValue: 1000, employeeId: employeeRecord.id, projectId: project, taskId: task },
    { description: 'Hosting', quantity: 1, price: 500, totalValue: 500 },
  ];
  const invoice = await invoiceOf(t, acme, { toContactId: contact, invoiceItems: items });
  const estimate = await invoiceOf(t, acme, { toContactId: contact, isEstimate: true, invoiceItems: items });
  const foreignInvoice = await invoiceOf(t, other);
  return { acme, other, contact, project, task, employee: { id: employeeRecord.id, email: acme.email }, invoice, estimate, foreignInvoice };
}

/** POST /api/invoice/{id}/share-link as `session`; asserts the 201 and answers the link with its token. */
export async function share(t: TestApp, session: Session, invoiceId: string, body?: Record<string, unknown>): Promise<Record<string, any>> {
  const req = t.http.post(`/api/invoice/${invoiceId}/share-link`).set(session.auth);
  const res = body === undefined ? await req : await req.send(body);
  assert.is(res.status, 201, JSON.stringify(res.body));
  return res.body;
}

export const sha256 = (text: string) => createHash('sha256').update(text).digest('hex');

export const publicUrl = (kind: 'invoice' | 'estimate', id: string, token: string) => `/api/public/${kind}/${id}/${token}`;
