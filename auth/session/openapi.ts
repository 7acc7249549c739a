// Schemas of the session routes' documentation (auth/session/routes.ts), and the operation both
// spellings of signing out share.
import { errorResponses, jsonResponse, tenantHeaderParameter } from '../../engine/openapi/fragments.js';
import { okSchema } from '../answers.js';

export const tokenPair = {
  type: 'object',
  required: ['token', 'refresh_token'],
  properties: {
    token: { type: 'string', description: 'New JWT access token, with the role and employee read at this refresh' },
    refresh_token: { type: 'string', description: 'New JWT refresh token (single use), replacing the one sent' },
  },
};

export const checkAnswer = {
  type: 'object',
  required: ['valid', 'userId', 'tenantId', 'role', 'expiresAt'],
  properties: {
    valid: { type: 'boolean', enum: [true] },
    userId: { type: 'string', format: 'uuid' },
    tenantId: { type: 'string', format: 'uuid' },
    role: { type: 'string' },
    expiresAt: { type: 'string', format: 'date-time', description: 'When the access token expires (a token without exp is refused)' },
  },
};

export function logoutOperation(operationId: string, method: 'post' | 'get') {
  return {
    tags: ['auth'],
    operationId,
    summary: 'Sign out: end the session of the bearer token',
    description: [
      'Ends the session the access token belongs to (the sign-in it was issued with, and every refresh since):',
      'its refresh tokens are refused from then on (401), and so are its access tokens, at once on every instance (each',
      'is told before this answers). The caller\'s other sessions (other devices) stay signed in.',
      'Signing out twice with the same token is a 401: the token ended with its session.',
      method === 'post' ? 'It takes no body; one sent anyway is read as any JSON body is (400 malformed, 413 too large, 415 not JSON).' : '',
    ].join(' ').trim(),
    parameters: [tenantHeaderParameter],
    responses: {
      '200': jsonResponse('The session has ended', okSchema),
      // The JSON body parser runs before the route: a POST's body is refused even here.
      ...(method === 'post' ? errorResponses(400, 401, 403, 413, 415, 500, 503) : errorResponses(401, 403, 500, 503)),
    },
  };
}
