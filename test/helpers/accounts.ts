// Sign-up helpers: a tenant with its SUPER_ADMIN, an organization, and users of other roles.
import { randomBytes } from 'node:crypto';
import type { TestApp } from './app.js';

export const PASSWORD = 'Str0ng!Passw0rd';

export interface Session {
  token: string;
  userId: string;
  tenantId: string;
  email: string;
  auth: { Authorization: string };
}

export const uniqueEmail = (prefix = 'user') => `${prefix}-${randomBytes(5).toString('hex')}@example.com`;

export async function login(t: TestApp, email: string, password = PASSWORD): Promise<Session> {
  const res = await t.http.post('/api/auth/login').send({ email, password });
  if (res.status !== 200) throw new Error(`login failed: ${res.status} ${JSON.stringify(res.body)}`);
  return { token: res.body.token, userId: res.body.user.id, tenantId: res.body.user.tenantId, email, auth: { Authorization: `Bearer ${res.body.token}` } };
}

/** A new tenant: its SUPER_ADMIN's session and one organization. */
export async function newTenant(t: TestApp, name = 'Acme'): Promise<Session & { organizationId: string }> {
  const email = uniqueEmail('owner');
  const reg = await t.http.post('/api/auth/register').send({ user: { firstName: 'Olive', lastName: 'Owner', email }, password: PASSWORD, confirmPassword: PASSWORD });
  if (reg.status !== 201) throw new Error(`register failed: ${reg.status} ${JSON.stringify(reg.body)}`);
  const session = await login(t, email);
  const org = await t.http.post('/api/organization').set(session.auth).send({ name, currency: 'EUR' });
  if (org.status !== 201) throw new Error(`organization failed: ${org.status} ${JSON.stringify(org.body)}`);
  return { ...session, organizationId: org.body.id };
}

/** A user of the admin's tenant with the given role; with an employee record when asked. */
export async function userWithRole(
  t: TestApp,
  admin: Session & { organizationId: string },
  role: string,
  withEmployee = false,
): Promise<Session & { employeeId?: string }> {
  const email = uniqueEmail(role.toLowerCase());
  const reg = await t.http.post('/api/auth/register').set(admin.auth).send({ user: { firstName: 'Erin', lastName: role, email, role }, password: PASSWORD, confirmPassword: PASSWORD });
  if (reg.status !== 201) throw new Error(`register ${role} failed: ${reg.status} ${JSON.stringify(reg.body)}`);
  let employeeId: string | undefined;
  if (withEmployee) {
    const emp = await t.http.post('/api/employee').set(admin.auth).send({ firstName: 'Erin', lastName: role, userId: reg.body.id, organizationId: admin.organizationId });
    if (emp.status !== 201) throw new Error(`employee failed: ${emp.status} ${JSON.stringify(emp.body)}`);
    employeeId = emp.body.id;
  }
  return { ...(await login(t, email)), employeeId };
}
