// POST /api/auth/reset-password in its two forms, and the Ever Gauzy alias of the first:
//   {email}                            → a reset token is emailed (if the account exists); 200 either way
//   {token, password, confirmPassword} → the token is spent, the password replaced, every session revoked
import { OK } from '../answers.js';
import type Router from '@koa/router';
import { badRequest } from '../../engine/errors.js';
import type { Engine } from '../../engine/module.js';
import { isPlainObject } from '../../engine/objects.js';
import { compileValidator } from '../../engine/validation.js';
import { hashPassword, passwordProblems } from '../password.js';
import { clearPendingCodes } from '../email/codes.js';
import { revokeUserSessions } from '../session/revoke.js';
import { resetMail, sendInBackground } from './reset-mail.js';
import { createResetToken, spendOutstanding, spendResetToken } from './reset-tokens.js';
import { resetRequestSchema, resetWithTokenSchema } from './schemas.js';

export const INVALID_TOKEN = 'token is invalid, has expired or was already used';

const TOKEN_FORM_FIELDS = ['token', 'password', 'confirmPassword'];

/** A body without email that carries any field of the second form is that form (so its 400s name its fields). */
const isTokenForm = (body: unknown) =>
  isPlainObject(body) && !Object.hasOwn(body, 'email') && TOKEN_FORM_FIELDS.some((field) => Object.hasOwn(body, field));

export function registerResetRoutes(router: Router, engine: Engine) {
  const { db } = engine;
  const validateRequest = compileValidator<{ email: string }>(resetRequestSchema);
  const validateReset = compileValidator<{ token: string; password: string; confirmPassword: string }>(resetWithTokenSchema);

  async function requestReset(body: unknown) {
    // Trimmed before the format check: a pasted address often carries a space.
    const trimmed = isPlainObject(body) && typeof body.email === 'string' ? { ...body, email: body.email.trim() } : body;
    const email = validateRequest(trimmed).email.toLowerCase();
    const token = await createResetToken(db, email);
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
    const done = await db.transaction(async (trx) => {
      const userId = await spendResetToken(trx, token);
      if (!userId) return false;
      await trx('user').where({ id: userId }).update({ hash, updatedAt: trx.fn.now() });
      await spendOutstanding(trx, userId);
      // Whoever held a session (perhaps the reason for the reset) must sign in again, and an email
      // change it may have started dies with it.
      await revokeUserSessions(trx, userId);
      await clearPendingCodes(trx, userId);
      return true;
    });
    if (!done) throw badRequest(INVALID_TOKEN);
    return OK;
  }

  router.post('/api/auth/reset-password', async (ctx) => {
    const body = ctx.request.body;
    ctx.body = isTokenForm(body) ? await resetWithToken(body) : await requestReset(body);
  });
  router.post('/api/auth/request-password', async (ctx) => {
    ctx.body = await requestReset(ctx.request.body);
  });
}
