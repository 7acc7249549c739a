// STUB (to be replaced): outgoing mail. SMTP through nodemailer when SMTP_URL is set, otherwise
// one JSON log line per message. The code or link a message carries stands on a line of its own.
import type { Config } from './config.js';

export interface MailMessage {
  to: string;
  subject: string;
  text: string;
}

export interface Mailer {
  send(message: MailMessage): Promise<void>;
  close(): Promise<void>;
}

export function createMailer(config: Config): Mailer {
  return {
    async send(message) {
      console.log(JSON.stringify({ level: 'info', msg: 'mail', from: config.mail.from, ...message }));
    },
    async close() {},
  };
}
