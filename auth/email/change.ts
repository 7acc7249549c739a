// Changing the account's email: a code goes to the new address, and entering it makes the change.
import type Router from '@koa/router';
import type { Context } from 'koa';
import { badRequest, conflict, unauthorized } from '../../engine/errors.js';
import { callerOf } from '../../engine/http/context.js';
import type { Engine } from '../../engine/module.js';
import { compileValidator } from '../../engine/validation.js';
import { invalidCode, OK, sendOrFail } from './answers.js';
import { clearPendingCodes, consumeCode, issueCode, normalizeCode, codeSecrets } from './codes.js';
import { changeEmailMail, emailChangedMail } from './messages.js';
import { changeCodeBody, emailBody, normalizeEmail, type ChangeCodeBody, type EmailBody } from './schemas.js';

export const REQUEST_CHANGE_PATHS = ['/api/email-reset/request-change', '/api/email-reset/request-change-email'];
export const VERIFY_CHANGE_PATHS = ['/api/email-reset/verify', '/api/email-reset/verify-change-email'];

const EMAIL_TAKEN = 'This email is already registered';

export function registerChangeRoutes(router: Router, engine: Engine) {
  const { db, mailer } = engine;
  const secret = engine.config.jwt.secret;
  const validateRequest = compileValidator<EmailBody>(emailBody);
  const validateVerify = compileValidator<ChangeCodeBody>(changeCodeBody);

  const requestChange = async (ctx: Context) => {
    const caller = callerOf(ctx);
    const email = normalizeEmail(validateRequest(ctx.request.body).email);
    const user = await db('user').select('id', 'email').where({ id: caller.userId }).first();
    if (!user) throw unauthorized();
    if (user.email === email) throw badRequest('email must differ from the current email');
    if (await db('user').where({ email }).first('id')) throw conflict(EMAIL_TAKEN);
    const code = await issueCode(db, secret, user.id, 'change-email', email);
    await sendOrFail(mailer, changeEmailMail(email, code));
    ctx.body = OK;
  };
  for (const path of REQUEST_CHANGE_PATHS) router.post(path, requestChange);

  const verifyChange = async (ctx: Context) => {
    const caller = callerOf(ctx);
    const code = normalizeCode(validateVerify(ctx.request.body).code);
    if (!code) throw invalidCode();
    const before = await db('user').select('email').where({ id: caller.userId }).first();
    if (!before) throw unauthorized();
    const spent = await consumeCode(db, codeSecrets(engine.config.jwt), caller.userId, 'change-email', code);
    if (!spent?.email) throw invalidCode();
    try {
      // The code proved the new mailbox, so the new address is verified as well.
      const changed = await db('user').where({ id: caller.userId }).update({ email: spent.email, isEmailVerified: true, updatedAt: new Date() });
      if (!changed) throw unauthorized();
    } catch (err: any) {
      // Someone registered the address after the code was sent.
      if (err?.code === '23505') throw conflict(EMAIL_TAKEN);
      throw err;
    }
    // Codes mailed for the old address (verification) prove nothing about the new one.
    await clearPendingCodes(db, caller.userId);
    await noticeToOldAddress(engine, caller.userId, before.email, spent.email);
    ctx.body = OK;
  };
  for (const path of VERIFY_CHANGE_PATHS) router.post(path, verifyChange);
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
