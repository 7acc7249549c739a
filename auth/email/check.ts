// Whether an address has an account (sign-up forms ask before they submit).
import type Router from '@koa/router';
import type { Engine } from '../../engine/module.js';
import { compileValidator } from '../../engine/validation.js';
import { emailBody, normalizeEmail, type EmailBody } from './schemas.js';

export const EMAIL_CHECK_PATH = '/api/email-check/validate';

export function registerCheckRoutes(router: Router, engine: Engine) {
  const validate = compileValidator<EmailBody>(emailBody);
  router.post(EMAIL_CHECK_PATH, async (ctx) => {
    const email = normalizeEmail(validate(ctx.request.body).email);
    const found = await engine.db('user').where({ email }).first('id');
    ctx.body = { exists: Boolean(found) };
  });
}
