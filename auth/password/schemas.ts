// The bodies of the password and account routes: the schemas their validators compile and the
// OpenAPI document shows, so both say the same thing. The password rules (auth/password.ts)
// are checked after these, one message per broken rule.
import { MAX_PASSWORD_LENGTH } from '../password.js';
import { ROLES } from '../roles.js';

const password = { type: 'string', minLength: 1, maxLength: MAX_PASSWORD_LENGTH };
const email = { type: 'string', format: 'email', maxLength: 254 };

export const resetRequestSchema = {
  type: 'object',
  additionalProperties: false,
  required: ['email'],
  properties: { email },
};

export const resetWithTokenSchema = {
  type: 'object',
  additionalProperties: false,
  required: ['token', 'password', 'confirmPassword'],
  properties: {
    token: { type: 'string', minLength: 1, maxLength: 512, description: 'The token of the reset email' },
    password,
    confirmPassword: password,
  },
};

export const changePasswordSchema = {
  type: 'object',
  additionalProperties: false,
  required: ['currentPassword', 'newPassword', 'confirmPassword'],
  properties: { currentPassword: password, newPassword: password, confirmPassword: password },
};

const profileName = { type: ['string', 'null'], minLength: 1, maxLength: 255 };

export const profileSchema = {
  type: 'object',
  additionalProperties: false,
  properties: {
    firstName: profileName,
    lastName: profileName,
    imageUrl: { type: ['string', 'null'], format: 'uri', maxLength: 2048 },
    email: { ...email, description: 'Accepted only when unchanged: a new address goes through POST /api/email-reset/request-change' },
    role: { type: 'string', enum: [...ROLES], description: 'needs an ADMIN or SUPER_ADMIN caller; SUPER_ADMIN only from a SUPER_ADMIN' },
    tenantId: { type: 'string', format: 'uuid', description: "needs an ADMIN or SUPER_ADMIN caller; must be the caller's tenant" },
  },
};

export const tenantSchema = {
  type: 'object',
  additionalProperties: false,
  required: ['name'],
  properties: { name: { type: 'string', minLength: 1, maxLength: 255 } },
};
