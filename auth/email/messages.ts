// The mails of this part. Plain text, with the code on a line of its own so that a person can copy
// it and a program can read it.
import type { MailMessage } from '../../engine/mail.js';
import { CODE_TTL_SECONDS } from './codes.js';

const minutes = CODE_TTL_SECONDS / 60;

export function verificationMail(to: string, code: string): MailMessage {
  return {
    to,
    subject: 'Your email verification code',
    text: [
      'Enter this code to verify your email address:',
      '',
      code,
      '',
      `It expires in ${minutes} minutes. If you did not create an account, ignore this message.`,
    ].join('\n'),
  };
}

export function changeEmailMail(to: string, code: string): MailMessage {
  return {
    to,
    subject: 'Confirm your new email address',
    text: [
      'Enter this code to make this address the email of your account:',
      '',
      code,
      '',
      `It expires in ${minutes} minutes. If you did not ask for this change, ignore this message.`,
    ].join('\n'),
  };
}

/** To the old address after a change: no code and no link, only what happened and what to do if it was not you. */
export function emailChangedMail(to: string, newEmail: string): MailMessage {
  return {
    to,
    subject: 'The email of your account was changed',
    text: [
      `The email of your account was changed from ${to} to:`,
      '',
      newEmail,
      '',
      'This address will no longer receive messages about the account. If you did not make this change, contact your administrator at once.',
    ].join('\n'),
  };
}
