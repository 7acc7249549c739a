// Tenants, roles and users in the database: what registration and login need.
import type { Knex } from 'knex';
import { ROLES } from './roles.js';

export interface UserView {
  id: string;
  tenantId: string;
  email: string;
  firstName: string | null;
  lastName: string | null;
  name: string | null;
  roleId: string;
  role: { id: string; name: string };
  isActive: boolean;
  isEmailVerified: boolean;
  imageUrl: string | null;
  employeeId: string | null;
  createdAt: Date;
  updatedAt: Date;
}

export const fullName = (first?: string | null, last?: string | null) => [first, last].filter(Boolean).join(' ') || null;

const USER_COLUMNS = ['id', 'tenantId', 'email', 'firstName', 'lastName', 'name', 'roleId', 'isActive', 'isEmailVerified', 'imageUrl', 'createdAt', 'updatedAt'];

/** A new tenant with one row per role. */
/** The tenant column's length: a name made from a long first and last name is cut to fit. */
const TENANT_NAME_MAX = 255;

export async function createTenant(trx: Knex.Transaction, name: string): Promise<{ id: string; roles: Map<string, string> }> {
  const [tenant] = await trx('tenant').insert({ name: name.slice(0, TENANT_NAME_MAX) }).returning('id');
  const rows = await trx('role')
    .insert(ROLES.map((role) => ({ tenantId: tenant.id, name: role })))
    .returning(['id', 'name']);
  return { id: tenant.id, roles: new Map(rows.map((r: { id: string; name: string }) => [r.name, r.id])) };
}

export async function roleId(db: Knex, tenantId: string, role: string): Promise<string> {
  const row = await db('role').select('id').where({ tenantId, name: role }).first();
  if (!row) throw new Error(`tenant ${tenantId} has no role ${role}`);
  return row.id;
}

/**
 * The role an active user holds now, or undefined for an inactive or deleted one. Privileges are
 * judged by this, not by the token's claim: a demoted or deactivated admin's unexpired token must
 * not keep its powers.
 */
export async function currentRole(db: Knex, userId: string, tenantId: string): Promise<string | undefined> {
  const row = await db('user').select({ role: 'role.name' }).join('role', 'role.id', 'user.roleId')
    .where({ 'user.id': userId, 'user.tenantId': tenantId, 'user.isActive': true }).first();
  return row?.role;
}

/** The caller's first employee record: its id and organization go into the access token. */
export async function primaryEmployee(db: Knex, userId: string, tenantId: string): Promise<{ id: string; organizationId: string } | undefined> {
  return db('employee').select('id', 'organizationId').where({ userId, tenantId }).orderBy([{ column: 'createdAt' }, { column: 'id' }]).first();
}

type Employee = { id: string; organizationId: string } | undefined;

/** The user as the API shows it: no hash, with its role and first employee id (pass it when already known). */
export async function userView(db: Knex, userId: string, known?: { employee: Employee }): Promise<UserView | undefined> {
  const user = await db('user').select(USER_COLUMNS.map((c) => `user.${c}`)).select({ roleName: 'role.name' })
    .join('role', 'role.id', 'user.roleId').where('user.id', userId).first();
  if (!user) return undefined;
  const employee = known ? known.employee : await primaryEmployee(db, user.id, user.tenantId);
  const { roleName, ...rest } = user;
  return { ...rest, role: { id: user.roleId, name: roleName }, employeeId: employee?.id ?? null };
}

export async function findLogin(db: Knex, email: string): Promise<{ id: string; tenantId: string; hash: string; isActive: boolean; role: string } | undefined> {
  return db('user').select('user.id', 'user.tenantId', 'user.hash', 'user.isActive', { role: 'role.name' })
    .join('role', 'role.id', 'user.roleId').where('user.email', email).first();
}
