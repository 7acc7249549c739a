// What the email routes answer, shared by their handlers and their OpenAPI paths.
import { badRequest, HttpError } from '../../engine/errors.js';
import type { Mailer, MailMessage } from '../../engine/mail.js';

export { OK, okSchema } from '../answers.js';

/** One message for every code that does not count: wrong, expired, used up, or no code at all. */
export const invalidCode = () => badRequest('The code is invalid or has expired: ask for a new one');

export const MAIL_UNAVAILABLE = 'The mail could not be sent: try again later';

/** Sends a mail the request exists for; a mail server that fails is a 503, not a 500. */
export async function sendOrFail(mailer: Mailer, message: MailMessage): Promise<void> {
  try {
    await mailer.send(message);
  } catch {
    throw new HttpError(503, MAIL_UNAVAILABLE);
  }
}
