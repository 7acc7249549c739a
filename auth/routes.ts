// POST /api/auth/register and POST /api/auth/login.
import type Router from '@koa/router';
import type { Knex } from 'knex';
import { badRequest, conflict, forbidden, unauthorized } from '../engine/errors.js';
import type { Engine } from '../engine/module.js';
import { isPlainObject } from '../engine/objects.js';
import { compileValidator } from '../engine/validation.js';
import { createTenant, currentRole, findLogin, fullName, primaryEmployee, roleId, userView } from './accounts.js';
import { optionalCaller } from './authenticate.js';
import { afterRegister } from './email/after-register.js';
import { hashPassword, MAX_PASSWORD_LENGTH, passwordProblems, verifyPassword } from './password.js';
import { ADMIN_ROLES, ROLES } from './roles.js';
import { issueSession } from './session/issue.js';

const name = { type: 'string', minLength: 1, maxLength: 255 };
const password = { type: 'string', minLength: 1, maxLength: MAX_PASSWORD_LENGTH };

export const registerSchema = {
  type: 'object',
  additionalProperties: false,
  required: ['user'],
  properties: {
    user: {
      type: 'object',
      additionalProperties: false,
      required: ['email'],
      properties: {
        firstName: name,
        lastName: name,
        email: { type: 'string', format: 'email', maxLength: 254 },
        password,
        imageUrl: { type: 'string', format: 'uri', maxLength: 2048 },
        role: { type: 'string', enum: [...ROLES], description: 'needs an ADMIN or SUPER_ADMIN token' },
        tenantId: { type: 'string', format: 'uuid', description: "needs an ADMIN or SUPER_ADMIN token; must be the caller's tenant" },
      },
    },
    password,
    confirmPassword: password,
    tenantId: { type: 'string', format: 'uuid', description: "needs an ADMIN or SUPER_ADMIN token; must be the caller's tenant" },
  },
};

export const loginSchema = {
  type: 'object',
  additionalProperties: false,
  required: ['email', 'password'],
  properties: { email: { type: 'string', minLength: 1, maxLength: 254 }, password },
};

interface RegisterBody {
  user: { firstName?: string; lastName?: string; email: string; password?: string; imageUrl?: string; role?: string; tenantId?: string };
  password?: string;
  confirmPassword?: string;
  tenantId?: string;
}

/**
 * Fields a client may send (at the top level or inside `user`) but never sets, the mass-assignment
 * guard: they are dropped before validation, as read-only fields are everywhere else. With their
 * schemas, so the OpenAPI document lists exactly these as read-only.
 */
export const NEVER_ASSIGNED: Record<string, object> = {
  id: { type: 'string', format: 'uuid' },
  hash: { type: 'string' },
  isEmailVerified: { type: 'boolean' },
  isActive: { type: 'boolean' },
  roleId: { type: 'string', format: 'uuid' },
  name: { type: 'string', description: 'Computed from firstName and lastName' },
  createdAt: { type: 'string', format: 'date-time' },
  updatedAt: { type: 'string', format: 'date-time' },
};

/** A body without the server-owned fields (a profile's own, or a registration's and its user's). */
export function withoutNeverAssigned(body: unknown, nested?: 'user'): unknown {
  if (!isPlainObject(body)) return body;
  const drop = (record: Record<string, unknown>) => Object.fromEntries(Object.entries(record).filter(([key]) => !Object.hasOwn(NEVER_ASSIGNED, key)));
  const copy = drop(body);
  if (nested && isPlainObject(copy[nested])) copy[nested] = drop(copy[nested]);
  return copy;
}

function chosenPassword(body: RegisterBody): string {
  const top = body.password;
  const nested = body.user.password;
  const problems: string[] = [];
  if (top === undefined && nested === undefined) throw badRequest('password should not be empty');
  if (top !== undefined && nested !== undefined && top !== nested) problems.push('user.password must match password');
  const chosen = (top ?? nested)!;
  if (body.confirmPassword !== undefined && body.confirmPassword !== chosen) problems.push('confirmPassword must match password');
  problems.push(...passwordProblems(chosen));
  if (problems.length) throw badRequest(problems);
  return chosen;
}

export function registerAuthRoutes(router: Router, engine: Engine) {
  const { db } = engine;
  const validateRegister = compileValidator<RegisterBody>(registerSchema);
  const validateLogin = compileValidator<{ email: string; password: string }>(loginSchema);

  router.post('/api/auth/register', async (ctx) => {
    const caller = optionalCaller(ctx);
    const body = validateRegister(withoutNeverAssigned(ctx.request.body, 'user'));
    const requestedRole = body.user.role;
    const requestedTenant = body.user.tenantId ?? body.tenantId;
    // A token of a user deactivated or deleted since is refused; an admin is one whose role is so now.
    const role = caller && (await currentRole(db, caller.userId, caller.tenantId));
    if (caller && !role) throw unauthorized();
    const admin = caller && role && ADMIN_ROLES.has(role) ? { ...caller, role } : undefined;
    if ((requestedRole || requestedTenant) && !admin) throw forbidden();
    if (admin && requestedTenant && requestedTenant.toLowerCase() !== admin.tenantId) throw forbidden();
    // Only a SUPER_ADMIN may make another SUPER_ADMIN.
    if (admin && requestedRole === 'SUPER_ADMIN' && admin.role !== 'SUPER_ADMIN') throw forbidden();

    const secret = chosenPassword(body);
    const email = body.user.email.trim().toLowerCase();
    const hash = await hashPassword(secret);
    const profile = {
      email,
      firstName: body.user.firstName ?? null,
      lastName: body.user.lastName ?? null,
      name: fullName(body.user.firstName, body.user.lastName),
      imageUrl: body.user.imageUrl ?? null,
      hash,
    };
    let userId: string;
    try {
      userId = await db.transaction(async (trx: Knex.Transaction) => {
        let tenantId: string;
        let role: string;
        if (admin) {
          tenantId = admin.tenantId;
          role = await roleId(trx, tenantId, requestedRole ?? 'EMPLOYEE');
        } else {
          const tenant = await createTenant(trx, profile.name ?? email);
          tenantId = tenant.id;
          role = tenant.roles.get('SUPER_ADMIN')!;
        }
        const [row] = await trx('user').insert({ ...profile, tenantId, roleId: role }).returning('id');
        return row.id as string;
      });
    } catch (err: any) {
      if (err?.code === '23505') throw conflict('This email is already registered');
      throw err;
    }
    const user = (await userView(db, userId))!;
    await afterRegister(engine, user);
    ctx.status = 201;
    ctx.body = user;
  });

  router.post('/api/auth/login', async (ctx) => {
    const body = validateLogin(ctx.request.body);
    const account = await findLogin(db, body.email.trim().toLowerCase());
    const valid = await verifyPassword(account?.hash, body.password);
    if (!account || !valid || !account.isActive) throw unauthorized();
    const employee = await primaryEmployee(db, account.id, account.tenantId);
    const session = await issueSession(engine, { id: account.id, tenantId: account.tenantId, role: account.role, employeeId: employee?.id, organizationId: employee?.organizationId });
    ctx.body = { user: await userView(db, account.id, { employee }), ...session };
  });
}
