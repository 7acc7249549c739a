// Whether an address has an account (sign-up forms ask before they submit).
import type { Engine } from '../../engine/module.js';
import { errorResponses, jsonResponse } from '../../engine/openapi/fragments.js';
import { validBody, type Route } from '../../engine/route.js';
import { authModels } from '../models.js';
import { emailBody, normalizeEmail, type EmailBody } from './schemas.js';

export function checkRoutes(engine: Engine): Route[] {
  const { user: users } = authModels(engine);
  return [
    {
      method: 'POST',
      path: '/api/email-check/validate',
      // Asked before there is an account to sign in with.
      access: 'public',
      schemas: { body: emailBody },
      async handler(ctx) {
        const email = normalizeEmail(validBody<EmailBody>(ctx).email);
        // Nobody is signed in: every tenant's accounts count.
        const found = await users.query().select('id').where({ email }).first();
        ctx.body = { exists: Boolean(found) };
      },
      docs: {
        tags: ['auth'],
        operationId: 'emailCheck',
        summary: 'Whether an email has an account',
        responses: {
          '200': jsonResponse('Whether the email is registered', { type: 'object', required: ['exists'], properties: { exists: { type: 'boolean' } } }),
          ...errorResponses(400, 413, 415, 500, 503),
        },
      },
    },
  ];
}
