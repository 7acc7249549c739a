// POST /api/auth/register and POST /api/auth/login, each declared once with its documentation.
import type { Knex } from 'knex';
import { nativeError } from '../engine/db/errors.js';
import { transactionOnceMoreIfUndone } from '../engine/db/undone.js';
import { badRequest, conflict, forbidden, unauthorized } from '../engine/errors.js';
import type { Engine } from '../engine/module.js';
import { errorResponses, jsonBody, jsonResponse } from '../engine/openapi/fragments.js';
import type { Route } from '../engine/route.js';
import { validBody } from '../engine/route.js';
import { compileValidator } from '../engine/validation.js';
import { createTenant, currentRole, findLogin, fullName, primaryEmployee, roleId, userView } from './accounts.js';
import { optionalCaller } from './authenticate.js';
import { authModels } from './models.js';
import { afterRegister } from './email/after-register.js';
import { authUser, loginAnswer, registerRequest } from './openapi.js';
import { hashPassword, passwordProblems, verifyPassword } from './password.js';
import { ADMIN_ROLES } from './roles.js';
import { loginSchema, registerSchema, withoutNeverAssigned, type LoginBody, type RegisterBody } from './schemas.js';
import { issueSession } from './session/issue.js';

// The account routes (auth/password) take the mass-assignment guard from here.
export { withoutNeverAssigned } from './schemas.js';

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

export function authRoutes(engine: Engine): Route[] {
  const { db } = engine;
  const models = authModels(engine);
  // Validated in the handler: the token is read first, and the server-owned fields are dropped before.
  const validateRegister = compileValidator<RegisterBody>(registerSchema);

  const register: Route = {
    method: 'POST',
    path: '/api/auth/register',
    // Anonymous registration is the common case; an admin's token registers into the admin's tenant.
    access: 'optional',
    async handler(ctx) {
      const caller = optionalCaller(ctx);
      const body = validateRegister(withoutNeverAssigned(ctx.request.body, 'user'));
      const requestedRole = body.user.role;
      const requestedTenant = body.user.tenantId ?? body.tenantId;
      // A token of a user deactivated or deleted since is refused; an admin is one whose role is so now.
      const role = caller && (await currentRole(models, caller));
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
        userId = await transactionOnceMoreIfUndone(db, async (trx: Knex.Transaction) => {
          let tenantId: string;
          let role: string;
          if (admin) {
            tenantId = admin.tenantId;
            role = await roleId(models, admin, trx, requestedRole ?? 'EMPLOYEE');
          } else {
            const tenant = await createTenant(models, trx, profile.name ?? email);
            tenantId = tenant.id;
            role = tenant.roles.get('SUPER_ADMIN')!;
          }
          const row = await models.user.query(trx).insert({ ...profile, tenantId, roleId: role }).returning('id');
          return row.id as string;
        });
      } catch (err: any) {
        // The model's insert: Objection wraps the driver's error.
        if (nativeError(err)?.code === '23505') throw conflict('This email is already registered');
        throw err;
      }
      const user = (await userView(models, userId))!;
      await afterRegister(engine, user);
      ctx.status = 201;
      ctx.body = user;
    },
    docs: {
      tags: ['auth'],
      operationId: 'register',
      summary: 'Register a user',
      description: [
        'Without a token: creates the user and a new tenant, with the user as its SUPER_ADMIN.',
        "With an ADMIN or SUPER_ADMIN token: creates the user in the caller's tenant with user.role (default EMPLOYEE).",
        'role and tenantId without such a token are a 403. The password may be sent at the top level, inside user, or both',
        '(then equal): at least 8 characters with an upper-case letter, a lower-case letter, a digit and a special character;',
        'confirmPassword, when sent, must match. The server-owned fields (readOnly in the schema: id, hash, isEmailVerified,',
        'isActive, roleId, name, createdAt, updatedAt) are ignored wherever they are sent, at the top level or inside user.',
      ].join(' '),
      // Documented with the fields it ignores and the password rules checked after validation.
      requestBody: jsonBody(registerRequest()),
      responses: {
        '201': jsonResponse('The new user (no secrets)', authUser),
        ...errorResponses(400, 401, 403, 409, 413, 415, 500, 503),
      },
    },
  };

  const login: Route = {
    method: 'POST',
    path: '/api/auth/login',
    access: 'public',
    schemas: { body: loginSchema },
    async handler(ctx) {
      const body = validBody<LoginBody>(ctx);
      const account = await findLogin(models, body.email.trim().toLowerCase());
      const valid = await verifyPassword(account?.hash, body.password);
      if (!account || !valid || !account.isActive) throw unauthorized();
      const employee = await primaryEmployee(models, account.id, account.tenantId);
      const session = await issueSession(engine, { id: account.id, tenantId: account.tenantId, role: account.role, employeeId: employee?.id, organizationId: employee?.organizationId });
      ctx.body = { user: await userView(models, account.id, { employee }), ...session };
    },
    docs: {
      tags: ['auth'],
      operationId: 'login',
      summary: 'Sign in with email and password',
      description: 'Unknown email, wrong password and inactive user all answer the same 401.',
      responses: {
        '200': jsonResponse('The user, an access token and a refresh token', loginAnswer),
        ...errorResponses(400, 401, 413, 415, 500, 503),
      },
    },
  };

  return [register, login];
}
