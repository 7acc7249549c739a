// Verifying the account's email: a code mailed at registration or on request, entered with the address.
import { unauthorized } from '../../engine/errors.js';
import { callerOf } from '../../engine/http/context.js';
import type { Engine } from '../../engine/module.js';
import { errorResponses } from '../../engine/openapi/fragments.js';
import { validBody, type Route } from '../../engine/route.js';
import { invalidCode, OK, sendOrFail } from './answers.js';
import { consumeCode, issueCode, normalizeCode, codeSecrets } from './codes.js';
import { verificationMail } from './messages.js';
import { codeRules, foreignTenant, mailFailure, ok, tooManyCodes, tooManyResponse, withAliases, type DocumentedRoute } from './openapi.js';
import { authModels } from '../models.js';
import { normalizeEmail, verifyCodeBody, type VerifyCodeBody } from './schemas.js';

export function verifyRoutes(engine: Engine): Route[] {
  const { mailer } = engine;
  const { user: users } = authModels(engine);
  const secret = engine.config.jwt.secret;

  const resend: DocumentedRoute = {
    method: 'POST',
    path: '/api/auth/email/verify/resend-verification-code',
    async handler(ctx) {
      const caller = callerOf(ctx);
      const user = await users.scoped(caller).select('id', 'email', 'isEmailVerified').where({ id: caller.userId }).first();
      // A valid token of a user deleted since: nobody to mail.
      if (!user) throw unauthorized();
      // Nothing left to prove: no mail, and no code that could be mistaken for a pending one.
      if (!user.isEmailVerified) {
        const code = await issueCode(engine, secret, user.id, 'verify-email');
        await sendOrFail(mailer, verificationMail(user.email, code));
      }
      ctx.body = OK;
    },
    docs: {
      tags: ['auth'],
      operationId: 'resendVerificationCode',
      summary: "Mail a new code that verifies the caller's email",
      description: `A new six-digit code replaces any earlier one. ${codeRules} An already verified email gets no mail (still 200). ${tooManyCodes} ${foreignTenant} ${mailFailure} It takes no body; one sent anyway is read as any JSON body is (400 malformed, 413 too large, 415 not JSON).`,
      // The JSON body parser runs before the route, so a body that is not JSON is refused even here.
      responses: { ...ok('The code is on its way'), ...errorResponses(400, 401, 403, 413, 415, 500, 503), ...tooManyResponse },
    },
  };

  return [
    ...withAliases(resend, ['/api/auth/email/verify/resend-link']),
    {
      method: 'POST',
      path: '/api/auth/email/verify/code',
      // The code proves the mailbox: no token needed.
      access: 'public',
      schemas: { body: verifyCodeBody },
      async handler(ctx) {
        const body = validBody<VerifyCodeBody>(ctx);
        const code = normalizeCode(body.code);
        if (!code) throw invalidCode();
        // Nobody is signed in: the address is looked for in every tenant, as at login.
        const user = await users.query().select('id', 'tenantId').where({ email: normalizeEmail(body.email) }).first();
        // An unknown address, or another tenant, fails exactly like a wrong code: this public route
        // must not tell which addresses have accounts.
        if (!user || (body.tenantId && body.tenantId.toLowerCase() !== user.tenantId)) throw invalidCode();
        if (!(await consumeCode(engine, codeSecrets(engine.config.jwt), user.id, 'verify-email', code))) throw invalidCode();
        await users.query().where({ id: user.id }).patch({ isEmailVerified: true, updatedAt: new Date() });
        ctx.body = OK;
      },
      docs: {
        tags: ['auth'],
        operationId: 'verifyEmailByCode',
        summary: 'Verify an email with the code mailed to it',
        description: `Sets isEmailVerified. ${codeRules} Wrong, expired, used-up codes and unknown addresses all answer the same 400.`,
        responses: { ...ok('The email is verified'), ...errorResponses(400, 413, 415, 500, 503) },
      },
    },
  ];
}
