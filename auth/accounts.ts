// Tenants, roles and users in the database: what registration and login need.
import type { Knex } from 'knex';
import type { Caller } from '../engine/caller.js';
import type { AuthModels } from './models.js';
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

export async function createTenant(models: AuthModels, trx: Knex.Transaction, name: string): Promise<{ id: string; roles: Map<string, string> }> {
  const [tenant] = await trx('tenant').insert({ name: name.slice(0, TENANT_NAME_MAX) }).returning('id');
  const rows = await models.role.query(trx)
    .insert(ROLES.map((role) => ({ tenantId: tenant.id, name: role })))
    .returning(['id', 'name']);
  return { id: tenant.id, roles: new Map(rows.map((r: { id: string; name: string }) => [r.name, r.id])) };
}

/** The id of a role of the caller's tenant (an admin assigning it), read in the caller's scope. */
export async function roleId(models: AuthModels, caller: Caller, trx: Knex.Transaction, role: string): Promise<string> {
  const row = await models.role.scoped(caller, trx).select('id').where({ name: role }).first();
  if (!row) throw new Error(`tenant ${caller.tenantId} has no role ${role}`);
  return row.id;
}

/**
 * The role the signed-in caller's user holds now, or undefined for an inactive or deleted one.
 * Privileges are judged by this, not by the token's claim: a demoted or deactivated admin's
 * unexpired token must not keep its powers.
 */
export async function currentRole(models: AuthModels, caller: Caller): Promise<string | undefined> {
  const row = await models.user.scoped(caller).select('role.name as role').join('role', 'role.id', 'user.roleId')
    .where({ 'user.id': caller.userId, 'user.isActive': true }).first();
  return row?.role;
}

/** The user's first employee record: its id and organization go into the access token (issued before any caller exists). */
export async function primaryEmployee(models: AuthModels, userId: string, tenantId: string): Promise<{ id: string; organizationId: string } | undefined> {
  const row = await models.employee.query().select('id', 'organizationId').where({ userId, tenantId }).orderBy([{ column: 'createdAt' }, { column: 'id' }]).first();
  return row && { id: row.id, organizationId: row.organizationId };
}

type Employee = { id: string; organizationId: string } | undefined;

/**
 * The user as the API shows it: no hash, with its role and first employee id (pass it when already
 * known). Read in the caller's scope when there is one (the account routes), by id alone otherwise
 * (registration and login, before a token exists).
 */
export async function userView(models: AuthModels, userId: string, known: { caller?: Caller; employee?: Employee } = {}): Promise<UserView | undefined> {
  const users = known.caller ? models.user.scoped(known.caller) : models.user.query();
  const user = await users.select(USER_COLUMNS.map((c) => `user.${c}`)).select('role.name as roleName')
    .join('role', 'role.id', 'user.roleId').where('user.id', userId).first();
  if (!user) return undefined;
  const employee = 'employee' in known ? known.employee : await primaryEmployee(models, user.id, user.tenantId);
  const { roleName, ...rest } = user as Record<string, any>;
  return { ...rest, role: { id: user.roleId, name: roleName }, employeeId: employee?.id ?? null } as UserView;
}

/** The account an email signs in to, in whichever tenant it is (no caller yet): hash included, for the password check. */
export async function findLogin(models: AuthModels, email: string): Promise<{ id: string; tenantId: string; hash: string; isActive: boolean; role: string } | undefined> {
  // The instance, not its JSON: hash is a hidden field, left out of the JSON but read here as a property.
  const row = await models.user.query().select('user.id', 'user.tenantId', 'user.hash', 'user.isActive', 'role.name as role')
    .join('role', 'role.id', 'user.roleId').where('user.email', email).first();
  return row && { id: row.id, tenantId: row.tenantId, hash: row.hash, isActive: row.isActive, role: row.role };
}
