// Schemas of the auth routes' documentation (auth/routes.ts), shared with the account routes
// (auth/password): the user as they answer it, and the register body as documented, from the very
// schema object the route validates with (auth/schemas.ts).
import { toOpenApiSchema } from '../engine/openapi/schema-conversion.js';
import { newPasswordSchema } from './password.js';
import { NEVER_ASSIGNED, registerSchema } from './schemas.js';

const uuid = { type: 'string', format: 'uuid' };
const nullableString = { type: 'string', nullable: true };

/** The user as auth/accounts.ts userView() returns it: no secrets, with its role and first employee. */
/** The user as the account endpoints answer it (login, register, GET /api/user/me). */
export const authUser = {
  type: 'object',
  required: ['id', 'tenantId', 'email', 'roleId', 'role', 'isActive', 'isEmailVerified', 'employeeId', 'createdAt', 'updatedAt'],
  properties: {
    id: uuid,
    tenantId: uuid,
    email: { type: 'string', format: 'email' },
    firstName: nullableString,
    lastName: nullableString,
    name: { ...nullableString, description: 'First and last name' },
    imageUrl: nullableString,
    roleId: uuid,
    role: { type: 'object', required: ['id', 'name'], properties: { id: uuid, name: { type: 'string' } } },
    isActive: { type: 'boolean' },
    isEmailVerified: { type: 'boolean' },
    employeeId: { ...uuid, nullable: true, description: "The user's first employee record, if any" },
    createdAt: { type: 'string', format: 'date-time' },
    updatedAt: { type: 'string', format: 'date-time' },
  },
};

/** The server-owned fields as a body may carry them: dropped unread, whatever their value (no type to break). */
export const ignoredProperties = () =>
  Object.fromEntries(Object.entries(NEVER_ASSIGNED).map(([key, value]) => [key, { readOnly: true, description: `Ignored, whatever its value${'description' in value ? ` (${String(value.description)})` : ''}` }]));

/**
 * What registration ignores, at the top level and inside user (the mass-assignment guard drops
 * them before validation): documented as readOnly properties, which in OpenAPI 3.0 means a value
 * sent is ignored, rather than left to read as unknown (a 400).
 */
function withIgnored(schema: Record<string, any>): Record<string, any> {
  const ignored = ignoredProperties();
  return { ...schema, properties: { ...schema.properties, ...ignored } };
}

/**
 * The register body the route validates, plus the server-owned fields it accepts and ignores, the
 * password rules the route checks after validation (auth/password.ts), and the rule that a
 * password is sent at the top level, inside user, or both.
 */
export function registerRequest() {
  const schema = withIgnored(toOpenApiSchema(registerSchema));
  schema.properties.user = withIgnored(schema.properties.user);
  schema.properties.password = newPasswordSchema;
  schema.properties.confirmPassword = { ...newPasswordSchema, description: 'When sent, equal to the password' };
  schema.properties.user.properties.password = { ...newPasswordSchema, description: `${newPasswordSchema.description}; equal to password when both are sent` };
  schema.anyOf = [{ required: ['password'] }, { required: ['user'], properties: { user: { required: ['password'] } } }];
  schema.example = { user: { firstName: 'Ann', lastName: 'Lee', email: 'ann.lee@example.com' }, password: 'Str0ng!Passw0rd', confirmPassword: 'Str0ng!Passw0rd' };
  return schema;
}

/** What login answers: the user and a token pair. */
export const loginAnswer = {
  type: 'object',
  required: ['user', 'token', 'refresh_token'],
  properties: {
    user: authUser,
    token: { type: 'string', description: 'JWT access token: send it as Authorization: Bearer <token>' },
    refresh_token: { type: 'string', description: 'JWT refresh token (single use)' },
  },
};
