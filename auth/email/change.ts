// Changing the account's email: a code goes to the new address, and entering it makes the change.
import { nativeError } from '../../engine/db/errors.js';
import { badRequest, conflict, unauthorized } from '../../engine/errors.js';
import { callerOf } from '../../engine/http/context.js';
import type { Engine } from '../../engine/module.js';
import { errorResponses } from '../../engine/openapi/fragments.js';
import { validBody, type Route } from '../../engine/route.js';
import { invalidCode, OK, sendOrFail } from './answers.js';
import { clearPendingCodes, consumeCode, issueCode, normalizeCode, codeSecrets } from './codes.js';
import { changeEmailMail, emailChangedMail } from './messages.js';
import { codeRules, foreignTenant, mailFailure, ok, tooManyCodes, tooManyResponse, withAliases, type DocumentedRoute } from './openapi.js';
import { authModels } from '../models.js';
import { changeCodeBody, emailBody, normalizeEmail, type ChangeCodeBody, type EmailBody } from './schemas.js';

const EMAIL_TAKEN = 'This email is already registered';

export function changeRoutes(engine: Engine): Route[] {
  const { db, mailer } = engine;
  const { user: users } = authModels(engine);
  const secret = engine.config.jwt.secret;

  const requestChange: DocumentedRoute = {
    method: 'POST',
    path: '/api/email-reset/request-change',
    schemas: { body: emailBody },
    async handler(ctx) {
      const caller = callerOf(ctx);
      const email = normalizeEmail(validBody<EmailBody>(ctx).email);
      const user = await users.scoped(caller).select('id', 'email').where({ id: caller.userId }).first();
      if (!user) throw unauthorized();
      if (user.email === email) throw badRequest('email must differ from the current email');
      // Not the caller's scope: an address is one account's in every tenant (login looks for it in all).
      if (await users.query().select('id').where({ email }).first()) throw conflict(EMAIL_TAKEN);
      const code = await issueCode(engine, secret, user.id, 'change-email', email);
      await sendOrFail(mailer, changeEmailMail(email, code));
      ctx.body = OK;
    },
    docs: {
      tags: ['auth'],
      operationId: 'requestEmailChange',
      summary: "Mail a code to the caller's new email address",
      description: `The change happens when the code is entered (POST /api/email-reset/verify). ${codeRules} 400 when the address is not an email or is the current one; 409 when another account has it. ${tooManyCodes} ${foreignTenant} ${mailFailure}`,
      responses: { ...ok('The code is on its way to the new address'), ...errorResponses(400, 401, 403, 409, 413, 415, 500, 503), ...tooManyResponse },
    },
  };

  const verifyChange: DocumentedRoute = {
    method: 'POST',
    path: '/api/email-reset/verify',
    schemas: { body: changeCodeBody },
    async handler(ctx) {
      const caller = callerOf(ctx);
      const code = normalizeCode(validBody<ChangeCodeBody>(ctx).code);
      if (!code) throw invalidCode();
      const before = await users.scoped(caller).select('email').where({ id: caller.userId }).first();
      if (!before) throw unauthorized();
      const spent = await consumeCode(engine, codeSecrets(engine.config.jwt), caller.userId, 'change-email', code);
      if (!spent?.email) throw invalidCode();
      try {
        // The code proved the new mailbox, so the new address is verified as well.
        const changed = await users.scoped(caller).where({ id: caller.userId }).patch({ email: spent.email, isEmailVerified: true, updatedAt: new Date() });
        if (!changed) throw unauthorized();
      } catch (err) {
        // Someone registered the address after the code was sent (the model's error wraps the driver's).
        if (nativeError(err)?.code === '23505') throw conflict(EMAIL_TAKEN);
        throw err;
      }
      // Codes mailed for the old address (verification) prove nothing about the new one.
      await clearPendingCodes(db, caller.userId);
      await noticeToOldAddress(engine, caller.userId, before.email, spent.email);
      ctx.body = OK;
    },
    docs: {
      tags: ['auth'],
      operationId: 'verifyEmailChange',
      summary: "Change the caller's email with the code mailed to the new address",
      description: `The new address becomes the account's email, verified, and the old address is told of the change (a mail without code). ${codeRules} 409 when another account took the address meanwhile. ${foreignTenant}`,
      responses: { ...ok('The email is changed'), ...errorResponses(400, 401, 403, 409, 413, 415, 500, 503) },
    },
  };

  return [...withAliases(requestChange, ['/api/email-reset/request-change-email']), ...withAliases(verifyChange, ['/api/email-reset/verify-change-email'])];
}

/**
 * Tells the old address that the account's email changed: if a stolen session made the change, the
 * owner learns it at the address they still read. The change is done, so a mail that cannot be
 * sent is logged rather than failing the request.
 */
async function noticeToOldAddress(engine: Engine, userId: string, oldEmail: string, newEmail: string): Promise<void> {
  try {
    await engine.mailer.send(emailChangedMail(oldEmail, newEmail));
  } catch (err) {
    console.error(JSON.stringify({ level: 'error', time: new Date().toISOString(), msg: 'email change notice not sent', userId, error: String(err) }));
  }
}
