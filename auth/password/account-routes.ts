// The signed-in user's own account: GET /api/user/me, PUT /api/user/me (profile), and
// POST /api/tenant (renames the caller's tenant: clients that onboard in two steps name it second).
import type { Knex } from 'knex';
import type { Caller } from '../../engine/caller.js';
import { badRequest, conflict, forbidden, notFound, unauthorized } from '../../engine/errors.js';
import { callerOf } from '../../engine/http/context.js';
import type { Engine } from '../../engine/module.js';
import { errorResponses, jsonBody, jsonResponse, tenantHeaderParameter } from '../../engine/openapi/fragments.js';
import { toOpenApiSchema } from '../../engine/openapi/schema-conversion.js';
import type { Route } from '../../engine/route.js';
import { compileValidator } from '../../engine/validation.js';
import { currentRole, fullName, roleId, userView } from '../accounts.js';
import { authModels, type AuthModels } from '../models.js';
import { authUser, ignoredProperties } from '../openapi.js';
import { ADMIN_ROLES } from '../roles.js';
import { withoutNeverAssigned } from '../schemas.js';
import { profileSchema, tenantSchema } from './schemas.js';
import { transactionOnceMoreIfUndone } from '../../engine/db/undone.js';
import { announceChange } from '../session/live.js';

interface ProfileBody {
  firstName?: string | null;
  lastName?: string | null;
  imageUrl?: string | null;
  email?: string;
  role?: string;
  tenantId?: string;
}

const EMAIL_CHANGE_ELSEWHERE = 'email cannot be changed here: request the change with POST /api/email-reset/request-change';
const LAST_SUPER_ADMIN = "The tenant's last SUPER_ADMIN cannot give up that role";

interface StoredUser {
  id: string;
  tenantId: string;
  email: string;
  firstName: string | null;
  lastName: string | null;
  role: string;
}

/** The caller's own user, active, in the caller's scope (its tenant), with its role's name. */
async function storedUser(models: AuthModels, caller: Caller): Promise<StoredUser | undefined> {
  const row = await models.user.scoped(caller).select('user.id', 'user.tenantId', 'user.email', 'user.firstName', 'user.lastName', 'role.name as role')
    .join('role', 'role.id', 'user.roleId').where({ 'user.id': caller.userId, 'user.isActive': true }).first();
  return row && { id: row.id, tenantId: row.tenantId, email: row.email, firstName: row.firstName, lastName: row.lastName, role: row.role };
}

/**
 * The privileged fields: role and tenantId need an ADMIN or SUPER_ADMIN, judged by the role stored
 * now rather than the token's (a demoted admin's unexpired token must not win its role back).
 */
function checkPrivileged(body: ProfileBody, user: StoredUser) {
  if (body.role === undefined && body.tenantId === undefined) return;
  if (!ADMIN_ROLES.has(user.role)) throw forbidden();
  if (body.tenantId !== undefined && body.tenantId.toLowerCase() !== user.tenantId) throw forbidden();
  if (body.role === 'SUPER_ADMIN' && user.role !== 'SUPER_ADMIN') throw forbidden();
}

/** A tenant keeps at least one SUPER_ADMIN; the tenant row is locked so two demotions cannot race past this. */
async function checkNotLastSuperAdmin(models: AuthModels, caller: Caller, trx: Knex.Transaction, user: StoredUser) {
  await trx('tenant').where({ id: user.tenantId }).forUpdate().first();
  // The caller's scope is the user's tenant (storedUser read the user in it).
  const [{ n }] = (await models.user.scoped(caller, trx).join('role', 'role.id', 'user.roleId')
    .where({ 'role.name': 'SUPER_ADMIN', 'user.isActive': true }).count({ n: '*' })) as unknown as Array<{ n: number | string }>;
  if (Number(n) <= 1) throw conflict(LAST_SUPER_ADMIN);
}

const profileRequest = (() => {
  const schema = toOpenApiSchema(profileSchema) as { properties: Record<string, object> };
  // Server-owned fields are dropped before validation: documented as readOnly (sent, they are ignored).
  return { ...schema, properties: { ...schema.properties, ...ignoredProperties() } };
})();

const tenantAnswer = {
  type: 'object',
  required: ['id', 'name', 'createdAt', 'updatedAt'],
  properties: {
    id: { type: 'string', format: 'uuid' },
    name: { type: 'string' },
    createdAt: { type: 'string', format: 'date-time' },
    updatedAt: { type: 'string', format: 'date-time' },
  },
};

export function accountRoutes(engine: Engine): Route[] {
  const { db } = engine;
  const models = authModels(engine);
  const validateProfile = compileValidator<ProfileBody>(profileSchema);
  // Validated after the role check (a caller who may not rename is a 403 whatever it sends): not the route's `schemas`.
  const validateTenant = compileValidator<{ name: string }>(tenantSchema);

  return [
    {
      method: 'GET',
      path: '/api/user/me',
      // Query parameters are ignored: Ever Gauzy clients ask for relations here that the answer already carries.
      async handler(ctx) {
        const caller = callerOf(ctx);
        // Read in the caller's scope: a user of another tenant is no user here.
        const user = await userView(models, caller.userId, { caller });
        // A deactivated user is signed out here as at login, even before its token expires.
        if (!user || !user.isActive) throw unauthorized();
        ctx.body = user;
      },
      docs: {
        tags: ['user'],
        operationId: 'getMe',
        summary: 'The signed-in user',
        description: 'Query parameters (such as relations[]) are ignored: the answer always carries the role and the first employee id.',
        parameters: [tenantHeaderParameter],
        responses: { '200': jsonResponse('The user (no secrets)', authUser), ...errorResponses(401, 403, 500, 503) },
      },
    },
    {
      method: 'PUT',
      path: '/api/user/me',
      async handler(ctx) {
        const caller = callerOf(ctx);
        const body = validateProfile(withoutNeverAssigned(ctx.request.body));
        const user = await storedUser(models, caller);
        if (!user) throw unauthorized();
        checkPrivileged(body, user);
        if (body.email !== undefined && body.email.trim().toLowerCase() !== user.email) throw badRequest(EMAIL_CHANGE_ELSEWHERE);

        const changes: Record<string, unknown> = {};
        if (body.firstName !== undefined || body.lastName !== undefined) {
          // name follows the two parts only when one is sent: a name given otherwise (social sign-in) stays.
          const firstName = body.firstName !== undefined ? body.firstName : user.firstName;
          const lastName = body.lastName !== undefined ? body.lastName : user.lastName;
          Object.assign(changes, { firstName, lastName, name: fullName(firstName, lastName) });
        }
        if (body.imageUrl !== undefined) changes.imageUrl = body.imageUrl;
        await transactionOnceMoreIfUndone(db, async (trx) => {
          if (body.role !== undefined && body.role !== user.role) {
            if (user.role === 'SUPER_ADMIN') await checkNotLastSuperAdmin(models, caller, trx, user);
            changes.roleId = await roleId(models, caller, trx, body.role);
            // Every process stops trusting the role it knows of this user's sessions before it changes.
            await announceChange(engine.broadcast, { users: [user.id] }, trx);
          }
          await models.user.scoped(caller, trx).where({ id: user.id }).patch({ ...changes, updatedAt: trx.fn.now() });
        });
        ctx.body = await userView(models, user.id, { caller });
      },
      docs: {
        tags: ['user'],
        operationId: 'updateMe',
        summary: "Update the signed-in user's profile",
        description: [
          'Only the fields sent change; null clears firstName, lastName or imageUrl; when either part is sent, name becomes firstName and lastName.',
          'Server-owned fields (readOnly: id, hash, isEmailVerified, isActive, roleId, name, createdAt, updatedAt) are ignored.',
          `email is accepted only unchanged (otherwise 400: "${EMAIL_CHANGE_ELSEWHERE}").`,
          "role and tenantId need a caller whose role is now ADMIN or SUPER_ADMIN (else 403); tenantId must be the caller's tenant (else 403);",
          `only a SUPER_ADMIN may give the SUPER_ADMIN role (else 403), and the tenant's last SUPER_ADMIN may not give it up (409: "${LAST_SUPER_ADMIN}").`,
          "A new role takes effect at once: the user's access tokens act with it from the next request on, on every instance (a token's role claim says what the role was when it was issued); the stored role, not the token's, decides who may change roles.",
        ].join(' '),
        parameters: [tenantHeaderParameter],
        requestBody: jsonBody(profileRequest),
        responses: { '200': jsonResponse('The updated user (no secrets)', authUser), ...errorResponses(400, 401, 403, 409, 413, 415, 500, 503) },
      },
    },
    {
      method: 'POST',
      path: '/api/tenant',
      async handler(ctx) {
        const caller = callerOf(ctx);
        const role = await currentRole(models, caller);
        if (!role) throw unauthorized();
        if (!ADMIN_ROLES.has(role)) throw forbidden();
        const { name } = validateTenant(ctx.request.body);
        const [tenant] = await db('tenant').where({ id: caller.tenantId }).update({ name, updatedAt: db.fn.now() })
          .returning(['id', 'name', 'createdAt', 'updatedAt']);
        if (!tenant) throw notFound();
        ctx.body = tenant;
      },
      docs: {
        tags: ['tenant'],
        operationId: 'renameTenant',
        summary: "Rename the caller's tenant",
        description: "Needs an ADMIN or SUPER_ADMIN token (else 403). Renames the caller's tenant (registration names it after its first user).",
        parameters: [tenantHeaderParameter],
        requestBody: jsonBody(toOpenApiSchema(tenantSchema)),
        responses: { '200': jsonResponse('The tenant', tenantAnswer), ...errorResponses(400, 401, 403, 404, 413, 415, 500, 503) },
      },
    },
  ];
}
