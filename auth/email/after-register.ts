// What follows a registration: a code that verifies the new address is mailed to it.
import type { Engine } from '../../engine/module.js';
import { issueCode } from './codes.js';
import { verificationMail } from './messages.js';

/**
 * Never fails the registration: the account exists already, and the user can ask for another
 * code (resend-verification-code). A mail that cannot be sent is logged instead.
 */
export async function afterRegister(engine: Engine, user: { id: string; email: string; tenantId: string }): Promise<void> {
  try {
    const code = await issueCode(engine, engine.config.jwt.secret, user.id, 'verify-email');
    await engine.mailer.send(verificationMail(user.email, code));
  } catch (err) {
    console.error(JSON.stringify({ level: 'error', time: new Date().toISOString(), msg: 'verification mail not sent', userId: user.id, error: String(err) }));
  }
}
