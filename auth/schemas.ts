// Request bodies of register and login (auth/routes.ts), validated with these very objects and
// documented from them (auth/openapi.ts), and the server-owned fields a body may carry but never sets.
import { isPlainObject } from '../engine/objects.js';
import { MAX_PASSWORD_LENGTH } from './password.js';
import { ROLES } from './roles.js';

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

export interface RegisterBody {
  user: { firstName?: string; lastName?: string; email: string; password?: string; imageUrl?: string; role?: string; tenantId?: string };
  password?: string;
  confirmPassword?: string;
  tenantId?: string;
}

export const loginSchema = {
  type: 'object',
  additionalProperties: false,
  required: ['email', 'password'],
  properties: { email: { type: 'string', minLength: 1, maxLength: 254 }, password },
};

export interface LoginBody {
  email: string;
  password: string;
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
