// The email part's OpenAPI paths, documented from the schemas its routes validate with.
import type { OpenApiPaths } from '../../engine/module.js';
import { BEARER_SCHEME, ERROR_SCHEMA } from '../../engine/openapi/components.js';
import { errorResponses, jsonBody, jsonResponse, ref } from '../../engine/openapi/fragments.js';
import { toOpenApiSchema } from '../../engine/openapi/schema-conversion.js';
import { MAIL_UNAVAILABLE, okSchema } from './answers.js';
import { REQUEST_CHANGE_PATHS, VERIFY_CHANGE_PATHS } from './change.js';
import { EMAIL_CHECK_PATH } from './check.js';
import { CODE_TTL_SECONDS, MAX_ATTEMPTS } from './codes.js';
import { LIMIT_WINDOW_SECONDS, MAX_CODES_PER_WINDOW, MAX_WRONG_PER_WINDOW, TOO_MANY_CODES, TOO_MANY_WRONG } from './limits.js';
import { changeCodeBody, emailBody, verifyCodeBody } from './schemas.js';
import { RESEND_PATHS, VERIFY_CODE_PATH } from './verify.js';

const ok = (description: string) => ({ '200': jsonResponse(description, okSchema) });
const hour = `${LIMIT_WINDOW_SECONDS / 60} minutes`;
const codeRules =
  `A code is valid for ${CODE_TTL_SECONDS / 60} minutes and for ${MAX_ATTEMPTS} tries: after ${MAX_ATTEMPTS} wrong ones even the right code fails. ` +
  `Per user and purpose, at most ${MAX_CODES_PER_WINDOW} codes are mailed and at most ${MAX_WRONG_PER_WINDOW} wrong codes are entered within any ${hour}, ` +
  `whatever code they were tried against; beyond that every code of the purpose fails until the window passes.`;
const mailFailure = `503 when the mail server refuses the message ("${MAIL_UNAVAILABLE}").`;
const foreignTenant = '403 when a Tenant-Id header names another tenant than the token\'s.';
const tooManyCodes = `429 with Retry-After (seconds) when ${MAX_CODES_PER_WINDOW} codes were mailed within ${hour} ("${TOO_MANY_CODES}"), or ${MAX_WRONG_PER_WINDOW} wrong codes entered ("${TOO_MANY_WRONG}").`;

/** 429: no shared component exists for it, and this one carries its Retry-After header. */
const tooManyResponse = {
  '429': {
    description: 'Too many codes asked for, or too many wrong codes entered, within the window; nothing is mailed',
    headers: { 'Retry-After': { description: 'Whole seconds until a new code can be asked for (or until a rate limit frees up)', schema: { type: 'integer', minimum: 1 } } },
    content: { 'application/json': { schema: ref(ERROR_SCHEMA), example: { statusCode: 429, message: TOO_MANY_CODES, error: 'Too Many Requests' } } },
  },
};

/** The same operation under its path and under the Ever Gauzy alias (with its own operationId). */
function withAlias(paths: string[], operationId: string, operation: Record<string, unknown>): OpenApiPaths {
  const [main, ...aliases] = paths;
  return {
    [main]: { post: { ...operation, operationId } },
    ...Object.fromEntries(aliases.map((alias, i) => [alias, {
      post: { ...operation, operationId: `${operationId}Alias${i ? i + 1 : ''}`, summary: `${operation.summary} (alias of ${main})` },
    }])),
  };
}

export function emailOpenApi(): OpenApiPaths {
  const bearer = [{ [BEARER_SCHEME]: [] }];
  return {
    ...withAlias(RESEND_PATHS, 'resendVerificationCode', {
      tags: ['auth'],
      summary: "Mail a new code that verifies the caller's email",
      description: `A new six-digit code replaces any earlier one. ${codeRules} An already verified email gets no mail (still 200). ${tooManyCodes} ${foreignTenant} ${mailFailure} It takes no body; one sent anyway is read as any JSON body is (400 malformed, 413 too large, 415 not JSON).`,
      security: bearer,
      // The JSON body parser runs before the route, so a body that is not JSON is refused even here.
      responses: { ...ok('The code is on its way'), ...errorResponses(400, 401, 403, 413, 415, 500, 503), ...tooManyResponse },
    }),
    [VERIFY_CODE_PATH]: {
      post: {
        tags: ['auth'],
        operationId: 'verifyEmailByCode',
        summary: 'Verify an email with the code mailed to it',
        description: `Sets isEmailVerified. ${codeRules} Wrong, expired, used-up codes and unknown addresses all answer the same 400.`,
        security: [],
        requestBody: jsonBody(toOpenApiSchema(verifyCodeBody)),
        responses: { ...ok('The email is verified'), ...errorResponses(400, 413, 415, 500, 503) },
      },
    },
    [EMAIL_CHECK_PATH]: {
      post: {
        tags: ['auth'],
        operationId: 'emailCheck',
        summary: 'Whether an email has an account',
        security: [],
        requestBody: jsonBody(toOpenApiSchema(emailBody)),
        responses: {
          '200': jsonResponse('Whether the email is registered', { type: 'object', required: ['exists'], properties: { exists: { type: 'boolean' } } }),
          ...errorResponses(400, 413, 415, 500, 503),
        },
      },
    },
    ...withAlias(REQUEST_CHANGE_PATHS, 'requestEmailChange', {
      tags: ['auth'],
      summary: "Mail a code to the caller's new email address",
      description: `The change happens when the code is entered (POST /api/email-reset/verify). ${codeRules} 400 when the address is not an email or is the current one; 409 when another account has it. ${tooManyCodes} ${foreignTenant} ${mailFailure}`,
      security: bearer,
      requestBody: jsonBody(toOpenApiSchema(emailBody)),
      responses: { ...ok('The code is on its way to the new address'), ...errorResponses(400, 401, 403, 409, 413, 415, 500, 503), ...tooManyResponse },
    }),
    ...withAlias(VERIFY_CHANGE_PATHS, 'verifyEmailChange', {
      tags: ['auth'],
      summary: "Change the caller's email with the code mailed to the new address",
      description: `The new address becomes the account's email, verified, and the old address is told of the change (a mail without code). ${codeRules} 409 when another account took the address meanwhile. ${foreignTenant}`,
      security: bearer,
      requestBody: jsonBody(toOpenApiSchema(changeCodeBody)),
      responses: { ...ok('The email is changed'), ...errorResponses(400, 401, 403, 409, 413, 415, 500, 503) },
    }),
  };
}
