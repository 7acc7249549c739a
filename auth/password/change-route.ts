// POST /api/auth/change-password: the signed-in user replaces its password, proving the current
// one; every other session of the user is revoked, the caller's own stays signed in.
import type Router from '@koa/router';
import { badRequest, unauthorized } from '../../engine/errors.js';
import { callerOf } from '../../engine/http/context.js';
import type { Engine } from '../../engine/module.js';
import { compileValidator } from '../../engine/validation.js';
import { hashPassword, passwordProblems, verifyPassword } from '../password.js';
import { sessionOf } from '../authenticate.js';
import { revokeUserSessions } from '../session/revoke.js';
import { OK } from '../answers.js';
import { changePasswordSchema } from './schemas.js';

export const WRONG_CURRENT = 'currentPassword is incorrect';

export function registerChangePassword(router: Router, engine: Engine) {
  const { db } = engine;
  const validate = compileValidator<{ currentPassword: string; newPassword: string; confirmPassword: string }>(changePasswordSchema);

  router.post('/api/auth/change-password', async (ctx) => {
    const caller = callerOf(ctx);
    const { currentPassword, newPassword, confirmPassword } = validate(ctx.request.body);
    const user = await db('user').select('hash').where({ id: caller.userId, tenantId: caller.tenantId, isActive: true }).first();
    if (!user) throw unauthorized();
    const problems = passwordProblems(newPassword, 'newPassword');
    if (confirmPassword !== newPassword) problems.unshift('confirmPassword must match newPassword');
    // Checked even when the new password breaks a rule, so that every problem is listed at once.
    if (!(await verifyPassword(user.hash, currentPassword))) problems.unshift(WRONG_CURRENT);
    else if (newPassword === currentPassword) problems.push('newPassword must differ from currentPassword');
    if (problems.length) throw badRequest(problems);

    const hash = await hashPassword(newPassword);
    await db.transaction(async (trx) => {
      await trx('user').where({ id: caller.userId }).update({ hash, updatedAt: trx.fn.now() });
      await revokeUserSessions(trx, caller.userId, sessionOf(caller));
    });
    ctx.body = OK;
  });
}
