// POST /api/auth/change-password: the signed-in user replaces its password, proving the current
// one; every other session of the user is revoked, the caller's own stays signed in.
import { badRequest, unauthorized } from '../../engine/errors.js';
import { callerOf } from '../../engine/http/context.js';
import type { Engine } from '../../engine/module.js';
import { errorResponses, jsonBody, tenantHeaderParameter } from '../../engine/openapi/fragments.js';
import { validBody, type Route } from '../../engine/route.js';
import { authModels } from '../models.js';
import { hashPassword, passwordProblems, verifyPassword } from '../password.js';
import { sessionOf } from '../authenticate.js';
import { revokeUserSessions } from '../session/revoke.js';
import { OK } from '../answers.js';
import { ok, PASSWORD_RULES, withPasswordRules } from './openapi.js';
import { changePasswordSchema } from './schemas.js';
import { transactionOnceMoreIfUndone } from '../../engine/db/undone.js';

const WRONG_CURRENT = 'currentPassword is incorrect';

export function changePasswordRoute(engine: Engine): Route {
  const { db } = engine;
  const { user: users } = authModels(engine);
  return {
    method: 'POST',
    path: '/api/auth/change-password',
    schemas: { body: changePasswordSchema },
    async handler(ctx) {
      const caller = callerOf(ctx);
      const { currentPassword, newPassword, confirmPassword } = validBody<{ currentPassword: string; newPassword: string; confirmPassword: string }>(ctx);
      // hash is hidden (left out of a row's JSON): read as the instance's property, never sent.
      const user = await users.scoped(caller).select('hash').where({ id: caller.userId, isActive: true }).first();
      if (!user) throw unauthorized();
      const problems = passwordProblems(newPassword, 'newPassword');
      if (confirmPassword !== newPassword) problems.unshift('confirmPassword must match newPassword');
      // Checked even when the new password breaks a rule, so that every problem is listed at once.
      if (!(await verifyPassword(user.hash, currentPassword))) problems.unshift(WRONG_CURRENT);
      else if (newPassword === currentPassword) problems.push('newPassword must differ from currentPassword');
      if (problems.length) throw badRequest(problems);

      const hash = await hashPassword(newPassword);
      await transactionOnceMoreIfUndone(db, async (trx) => {
        await users.scoped(caller, trx).where({ id: caller.userId }).patch({ hash, updatedAt: trx.fn.now() });
        await revokeUserSessions(engine.broadcast, trx, caller.userId, sessionOf(caller));
      });
      ctx.body = OK;
    },
    docs: {
      tags: ['auth'],
      operationId: 'changePassword',
      summary: "Change the signed-in user's password",
      description: [
        `currentPassword must be the present password ("${WRONG_CURRENT}" otherwise); newPassword: ${PASSWORD_RULES}, different from`,
        'the current one, and confirmPassword equal to it. Every refresh token of the user is revoked except those of the session the access token belongs to.',
      ].join(' '),
      parameters: [tenantHeaderParameter],
      // The schema validated, with the new-password rules the handler checks after it.
      requestBody: jsonBody(withPasswordRules(changePasswordSchema, ['newPassword', 'confirmPassword'])),
      responses: { '200': ok, ...errorResponses(400, 401, 403, 413, 415, 500, 503) },
    },
  };
}
