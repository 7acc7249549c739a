// The password and account routes in the OpenAPI document, built from the schemas their
// validators compile (./schemas.ts).
import { okSchema } from '../answers.js';
import type { OpenApiPaths } from '../../engine/module.js';
import { errorResponses, jsonBody, jsonResponse, tenantHeaderParameter } from '../../engine/openapi/fragments.js';
import { toOpenApiSchema } from '../../engine/openapi/schema-conversion.js';
import { authUser, ignoredProperties } from '../openapi.js';
import { newPasswordSchema, PASSWORD_RULES_IN_WORDS as PASSWORD_RULES } from '../password.js';
import { EMAIL_CHANGE_ELSEWHERE, LAST_SUPER_ADMIN } from './account-routes.js';
import { WRONG_CURRENT } from './change-route.js';
import { INVALID_TOKEN } from './reset-routes.js';
import { changePasswordSchema, profileSchema, resetRequestSchema, resetWithTokenSchema, tenantSchema } from './schemas.js';

const ok = jsonResponse('Done', okSchema);

/**
 * The reset request as the route reads it: the email is trimmed before its format is checked (a
 * pasted address often carries a space), so blanks around it are taken.
 */
const resetRequest = (() => {
  const schema = toOpenApiSchema(resetRequestSchema) as Record<string, any>;
  const email = {
    type: 'string',
    pattern: '^\\s*[^\\s@]+@[^\\s@]+\\s*$',
    description: 'An email address of at most 254 characters; blanks around it are ignored',
    example: 'ann.lee@example.com',
  };
  return { ...schema, properties: { ...schema.properties, email } };
})();

/** A body schema with the new-password rules (checked by the route after validation) on the named properties. */
function withPasswordRules(schema: Record<string, any>, names: string[]): Record<string, any> {
  const converted = toOpenApiSchema(schema) as Record<string, any>;
  for (const name of names) converted.properties[name] = { ...newPasswordSchema, ...(name === 'confirmPassword' ? { description: 'Equal to the new password' } : {}) };
  return converted;
}

const requestDescription = [
  'Emails a reset token, valid 1 hour and usable once, to the account with this email, if there is one (an inactive account gets none).',
  'The answer is the same 200 either way, and the mail is sent after answering, so neither the body nor the time tells whether the account exists.',
  'The mail carries the token alone on a line, and a link CLIENT_BASE_URL/#/auth/reset-password?token=… on another. A new request spends the tokens sent before.',
].join(' ');

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

export function passwordOpenApi(): OpenApiPaths {
  return {
    '/api/auth/reset-password': {
      post: {
        tags: ['auth'],
        operationId: 'resetPassword',
        summary: 'Request a password reset by email, or reset the password with the emailed token',
        description: [
          `With {email}: ${requestDescription}`,
          `With {token, password, confirmPassword}: the password (${PASSWORD_RULES}; confirmPassword equal) replaces the old one,`,
          `the token is spent and every refresh token of the user is revoked. A wrong, expired or spent token is a 400 ("${INVALID_TOKEN}").`,
        ].join(' '),
        security: [],
        requestBody: jsonBody({ oneOf: [resetRequest, withPasswordRules(resetWithTokenSchema, ['password', 'confirmPassword'])] }),
        responses: { '200': ok, ...errorResponses(400, 413, 415, 500, 503) },
      },
    },
    '/api/auth/request-password': {
      post: {
        tags: ['auth'],
        operationId: 'requestPassword',
        summary: 'Request a password reset by email (alias)',
        description: `Alias of POST /api/auth/reset-password with {email}, kept for Ever Gauzy clients. ${requestDescription}`,
        security: [],
        requestBody: jsonBody(resetRequest),
        responses: { '200': ok, ...errorResponses(400, 413, 415, 500, 503) },
      },
    },
    '/api/auth/change-password': {
      post: {
        tags: ['auth'],
        operationId: 'changePassword',
        summary: "Change the signed-in user's password",
        description: [
          `currentPassword must be the present password ("${WRONG_CURRENT}" otherwise); newPassword: ${PASSWORD_RULES}, different from`,
          'the current one, and confirmPassword equal to it. Every refresh token of the user is revoked except those of the session the access token belongs to.',
        ].join(' '),
        parameters: [tenantHeaderParameter],
        requestBody: jsonBody(withPasswordRules(changePasswordSchema, ['newPassword', 'confirmPassword'])),
        responses: { '200': ok, ...errorResponses(400, 401, 403, 413, 415, 500, 503) },
      },
    },
    '/api/user/me': {
      get: {
        tags: ['user'],
        operationId: 'getMe',
        summary: 'The signed-in user',
        description: 'Query parameters (such as relations[]) are ignored: the answer always carries the role and the first employee id.',
        parameters: [tenantHeaderParameter],
        responses: { '200': jsonResponse('The user (no secrets)', authUser), ...errorResponses(401, 403, 500, 503) },
      },
      put: {
        tags: ['user'],
        operationId: 'updateMe',
        summary: "Update the signed-in user's profile",
        description: [
          'Only the fields sent change; null clears firstName, lastName or imageUrl; when either part is sent, name becomes firstName and lastName.',
          'Server-owned fields (readOnly: id, hash, isEmailVerified, isActive, roleId, name, createdAt, updatedAt) are ignored.',
          `email is accepted only unchanged (otherwise 400: "${EMAIL_CHANGE_ELSEWHERE}").`,
          "role and tenantId need a caller whose role is now ADMIN or SUPER_ADMIN (else 403); tenantId must be the caller's tenant (else 403);",
          `only a SUPER_ADMIN may give the SUPER_ADMIN role (else 403), and the tenant's last SUPER_ADMIN may not give it up (409: "${LAST_SUPER_ADMIN}").`,
          'A new role shows in the access tokens issued from then on (at the next refresh or sign-in); the stored role, not the token\'s, decides who may change roles.',
        ].join(' '),
        parameters: [tenantHeaderParameter],
        requestBody: jsonBody(profileRequest),
        responses: { '200': jsonResponse('The updated user (no secrets)', authUser), ...errorResponses(400, 401, 403, 409, 413, 415, 500, 503) },
      },
    },
    '/api/tenant': {
      post: {
        tags: ['tenant'],
        operationId: 'renameTenant',
        summary: "Rename the caller's tenant",
        description: "Needs an ADMIN or SUPER_ADMIN token (else 403). Renames the caller's tenant (registration names it after its first user).",
        parameters: [tenantHeaderParameter],
        requestBody: jsonBody(toOpenApiSchema(tenantSchema)),
        responses: { '200': jsonResponse('The tenant', tenantAnswer), ...errorResponses(400, 401, 403, 404, 413, 415, 500, 503) },
      },
    },
  };
}
