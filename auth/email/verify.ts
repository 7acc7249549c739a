// Verifying the account's email: a code mailed at registration or on request, entered with the address.
import type Router from '@koa/router';
import type { Context } from 'koa';
import { unauthorized } from '../../engine/errors.js';
import { callerOf } from '../../engine/http/context.js';
import type { Engine } from '../../engine/module.js';
import { compileValidator } from '../../engine/validation.js';
import { invalidCode, OK, sendOrFail } from './answers.js';
import { consumeCode, issueCode, normalizeCode, codeSecrets } from './codes.js';
import { verificationMail } from './messages.js';
import { normalizeEmail, verifyCodeBody, type VerifyCodeBody } from './schemas.js';

export const RESEND_PATHS = ['/api/auth/email/verify/resend-verification-code', '/api/auth/email/verify/resend-link'];
export const VERIFY_CODE_PATH = '/api/auth/email/verify/code';

export function registerVerifyRoutes(router: Router, engine: Engine) {
  const { db, mailer } = engine;
  const secret = engine.config.jwt.secret;
  const validateVerify = compileValidator<VerifyCodeBody>(verifyCodeBody);

  const resend = async (ctx: Context) => {
    const caller = callerOf(ctx);
    const user = await db('user').select('id', 'email', 'isEmailVerified').where({ id: caller.userId }).first();
    // A valid token of a user deleted since: nobody to mail.
    if (!user) throw unauthorized();
    // Nothing left to prove: no mail, and no code that could be mistaken for a pending one.
    if (!user.isEmailVerified) {
      const code = await issueCode(db, secret, user.id, 'verify-email');
      await sendOrFail(mailer, verificationMail(user.email, code));
    }
    ctx.body = OK;
  };
  for (const path of RESEND_PATHS) router.post(path, resend);

  router.post(VERIFY_CODE_PATH, async (ctx) => {
    const body = validateVerify(ctx.request.body);
    const code = normalizeCode(body.code);
    if (!code) throw invalidCode();
    const user = await db('user').select('id', 'tenantId').where({ email: normalizeEmail(body.email) }).first();
    // An unknown address, or another tenant, fails exactly like a wrong code: this public route
    // must not tell which addresses have accounts.
    if (!user || (body.tenantId && body.tenantId.toLowerCase() !== user.tenantId)) throw invalidCode();
    if (!(await consumeCode(db, codeSecrets(engine.config.jwt), user.id, 'verify-email', code))) throw invalidCode();
    await db('user').where({ id: user.id }).update({ isEmailVerified: true, updatedAt: new Date() });
    ctx.body = OK;
  });
}
