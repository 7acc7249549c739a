// The session module's part of the OpenAPI document, with the refresh body its route validates.
import type { OpenApiPaths } from '../../engine/module.js';
import { BEARER_SCHEME } from '../../engine/openapi/components.js';
import { errorResponses, jsonBody, jsonResponse, tenantHeaderParameter } from '../../engine/openapi/fragments.js';
import { toOpenApiSchema } from '../../engine/openapi/schema-conversion.js';
import { okSchema } from '../answers.js';
import { LOGOUT_PATH, refreshSchema } from './routes.js';

const tokenPair = {
  type: 'object',
  required: ['token', 'refresh_token'],
  properties: {
    token: { type: 'string', description: 'New JWT access token, with the role and employee read at this refresh' },
    refresh_token: { type: 'string', description: 'New JWT refresh token (single use), replacing the one sent' },
  },
};

const checkAnswer = {
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

function logoutOperation(operationId: string, method: 'post' | 'get') {
  return {
    tags: ['auth'],
    operationId,
    summary: 'Sign out: end the session of the bearer token',
    description: [
      'Ends the session the access token belongs to (the sign-in it was issued with, and every refresh since):',
      'its refresh tokens are refused from then on (401), and so are its access tokens, at once on the instance that',
      'answered and within SESSION_CHECK_TTL_MS on the others. The caller\'s other sessions (other devices) stay signed in.',
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

export function sessionOpenApi(): OpenApiPaths {
  return {
    '/api/auth/refresh-token': {
      post: {
        tags: ['auth'],
        operationId: 'refreshToken',
        summary: 'Exchange a refresh token for a new token pair',
        description: [
          'Each refresh token is good for one exchange: the one sent is spent and the answer carries its successor.',
          'An expired, revoked, unknown or forged token, an access token, or a token of an inactive user is a 401.',
          'Sending a token that was already spent is a 401 and ends its whole session: the successor issued for it',
          'is revoked too, so whoever holds it must sign in again, and the access tokens of that session are refused',
          'from then on, as after a password reset or change. The new access token carries the role and employee',
          'of the user as they are now.',
        ].join(' '),
        security: [],
        requestBody: jsonBody(toOpenApiSchema(refreshSchema)),
        responses: {
          '200': jsonResponse('A new access token and refresh token', tokenPair),
          ...errorResponses(400, 401, 413, 415, 500, 503),
        },
      },
    },
    '/api/auth/check': {
      get: {
        tags: ['auth'],
        operationId: 'checkToken',
        summary: 'Check the access token',
        description:
          'The claims of the bearer token and when it expires; any token the API would refuse is a 401, ' +
          'among them one whose session has ended (password reset or change, a spent refresh token sent again).',
        responses: {
          '200': jsonResponse('The token is valid', checkAnswer),
          ...errorResponses(401, 403, 500, 503),
        },
      },
    },
    [LOGOUT_PATH]: {
      post: logoutOperation('logout', 'post'),
      get: { ...logoutOperation('logoutGet', 'get'), summary: 'Sign out (the GET Ever Gauzy clients send)' },
    },
    '/api/auth/authenticated': {
      get: {
        tags: ['auth'],
        operationId: 'isAuthenticated',
        summary: 'Whether the bearer token (if any) is valid',
        description:
          'true for a token the API would accept; false without a token or with any other one (never a 401). ' +
          'A valid token with a Tenant-Id header naming another tenant is a 403, as everywhere a token is taken.',
        // The token is optional: it is what the answer is about.
        security: [{}, { [BEARER_SCHEME]: [] }],
        responses: {
          '200': jsonResponse('true or false', { type: 'boolean' }),
          ...errorResponses(403, 500, 503),
        },
      },
    },
  };
}
