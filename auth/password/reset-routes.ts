// POST /api/auth/reset-password in its two forms, and the Ever Gauzy alias of the first:
//   {email}                            → a reset token is emailed (if the account exists); 200 either way
//   {token, password, confirmPassword} → the token is spent, the password replaced, every session revoked
// Both are for a signed-out user: public.
import { OK } from '../answers.js';
import { badRequest } from '../../engine/errors.js';
import type { Engine } from '../../engine/module.js';
import { isPlainObject } from '../../engine/objects.js';
import { errorResponses, jsonBody } from '../../engine/openapi/fragments.js';
import { toOpenApiSchema } from '../../engine/openapi/schema-conversion.js';
import type { Route } from '../../engine/route.js';
import { compileValidator } from '../../engine/validation.js';
import { authModels } from '../models.js';
import { hashPassword, passwordProblems } from '../password.js';
import { clearPendingCodes } from '../email/codes.js';
import { revokeUserSessions } from '../session/revoke.js';
import { ok, PASSWORD_RULES, withPasswordRules } from './openapi.js';
import { resetMail, sendInBackground } from './reset-mail.js';
import { createResetToken, spendOutstanding, spendResetToken } from './reset-tokens.js';
import { resetRequestSchema, resetWithTokenSchema } from './schemas.js';
import { transactionOnceMoreIfUndone } from '../../engine/db/undone.js';

export const INVALID_TOKEN = 'token is invalid, has expired or was already used';

const TOKEN_FORM_FIELDS = ['token', 'password', 'confirmPassword'];

/** A body without email that carries any field of the second form is that form (so its 400s name its fields). */
const isTokenForm = (body: unknown) =>
  isPlainObject(body) && !Object.hasOwn(body, 'email') && TOKEN_FORM_FIELDS.some((field) => Object.hasOwn(body, field));

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

const requestDescription = [
  'Emails a reset token, valid 1 hour and usable once, to the account with this email, if there is one (an inactive account gets none).',
  'The answer is the same 200 either way, and the mail is sent after answering, so neither the body nor the time tells whether the account exists.',
  'The mail carries the token alone on a line, and a link CLIENT_BASE_URL/#/auth/reset-password?token=… on another. A new request spends the tokens sent before.',
].join(' ');

export function resetRoutes(engine: Engine): Route[] {
  const { db } = engine;
  const models = authModels(engine);
  const validateRequest = compileValidator<{ email: string }>(resetRequestSchema);
  const validateReset = compileValidator<{ token: string; password: string; confirmPassword: string }>(resetWithTokenSchema);

  async function requestReset(body: unknown) {
    // Trimmed before the format check: a pasted address often carries a space.
    const trimmed = isPlainObject(body) && typeof body.email === 'string' ? { ...body, email: body.email.trim() } : body;
    const email = validateRequest(trimmed).email.toLowerCase();
    const token = await createResetToken(models, db, email);
    if (token) sendInBackground(engine, resetMail(engine, email, token));
    return OK;
  }

  async function resetWithToken(body: unknown) {
    const { token, password, confirmPassword } = validateReset(body);
    const problems = passwordProblems(password);
    if (confirmPassword !== password) problems.unshift('confirmPassword must match password');
    if (problems.length) throw badRequest(problems);
    // Hashed before the transaction, so the token's row is locked only as long as three updates take.
    const hash = await hashPassword(password);
    const done = await transactionOnceMoreIfUndone(db, async (trx) => {
      // The token names the user: nobody is signed in to scope by.
      const userId = await spendResetToken(models, trx, token);
      if (!userId) return false;
      await models.user.query(trx).where({ id: userId }).patch({ hash, updatedAt: trx.fn.now() });
      await spendOutstanding(trx, userId);
      // Whoever held a session (perhaps the reason for the reset) must sign in again, and an email
      // change it may have started dies with it.
      await revokeUserSessions(engine.broadcast, trx, userId);
      await clearPendingCodes(trx, userId);
      return true;
    });
    if (!done) throw badRequest(INVALID_TOKEN);
    return OK;
  }

  return [
    {
      method: 'POST',
      path: '/api/auth/reset-password',
      access: 'public',
      async handler(ctx) {
        const body = ctx.request.body;
        ctx.body = isTokenForm(body) ? await resetWithToken(body) : await requestReset(body);
      },
      docs: {
        tags: ['auth'],
        operationId: 'resetPassword',
        summary: 'Request a password reset by email, or reset the password with the emailed token',
        description: [
          `With {email}: ${requestDescription}`,
          `With {token, password, confirmPassword}: the password (${PASSWORD_RULES}; confirmPassword equal) replaces the old one,`,
          `the token is spent and every refresh token of the user is revoked. A wrong, expired or spent token is a 400 ("${INVALID_TOKEN}").`,
        ].join(' '),
        requestBody: jsonBody({ oneOf: [resetRequest, withPasswordRules(resetWithTokenSchema, ['password', 'confirmPassword'])] }),
        responses: { '200': ok, ...errorResponses(400, 413, 415, 500, 503) },
      },
    },
    {
      method: 'POST',
      path: '/api/auth/request-password',
      access: 'public',
      async handler(ctx) {
        ctx.body = await requestReset(ctx.request.body);
      },
      docs: {
        tags: ['auth'],
        operationId: 'requestPassword',
        summary: 'Request a password reset by email (alias)',
        description: `Alias of POST /api/auth/reset-password with {email}, kept for Ever Gauzy clients. ${requestDescription}`,
        requestBody: jsonBody(resetRequest),
        responses: { '200': ok, ...errorResponses(400, 413, 415, 500, 503) },
      },
    },
  ];
}
