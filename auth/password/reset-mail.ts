// The password reset email: the link into the client app and the bare token each stand on a line
// of their own, so a person clicks and a program (or a test) reads the token.
import type { Engine } from '../../engine/module.js';
import type { MailMessage } from '../../engine/mail.js';
import { RESET_TOKEN_HOURS } from './reset-tokens.js';

export function resetLink(clientBaseUrl: string, token: string): string {
  return `${clientBaseUrl}/#/auth/reset-password?token=${encodeURIComponent(token)}`;
}

export function resetMail(engine: Engine, to: string, token: string): MailMessage {
  return {
    to,
    subject: 'Reset your password',
    text: [
      `Someone asked to reset the password of your account. To choose a new one, open this link within ${RESET_TOKEN_HOURS} hour:`,
      '',
      resetLink(engine.config.clientBaseUrl, token),
      '',
      'or send this token with the new password to POST /api/auth/reset-password:',
      '',
      token,
      '',
      'The token works once. If you did not ask for this, ignore this message: your password stays as it is.',
    ].join('\n'),
  };
}

/**
 * Sends without keeping the request waiting: an SMTP round trip is slow enough to tell an existing
 * account from an unknown one by the time of the answer. A failure is logged, never answered.
 */
export function sendInBackground(engine: Engine, message: MailMessage): void {
  engine.mailer.send(message).catch((err: unknown) => {
    console.error(JSON.stringify({ level: 'error', time: new Date().toISOString(), msg: 'password reset mail failed', error: String((err as Error)?.message ?? err) }));
  });
}
