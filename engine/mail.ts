// Outgoing mail: through the SMTP server of SMTP_URL (nodemailer) when it is set, otherwise one
// JSON log line per message so a development setup still shows the codes and links it would send
// (in production the line keeps only who and what about: set SMTP_URL there).
// Messages are plain text only, and the code or link a message carries stands on a line of its own.
import type { Transporter } from 'nodemailer';
import type { Config } from './config/config.js';
import { REDACTED } from './log/log.js';

export interface MailMessage {
  to: string;
  subject: string;
  text: string;
}

export interface Mailer {
  send(message: MailMessage): Promise<void>;
  close(): Promise<void>;
}

export interface MailerOptions {
  /** Where a message goes without SMTP_URL. By default stdout, except under NODE_ENV=test. */
  log?: (line: string) => void;
}

export function createMailer(config: Config, options: MailerOptions = {}): Mailer {
  const { smtpUrl, from } = config.mail;
  if (!smtpUrl) {
    // Tests read mail from an SMTP capture; without one, the log lines would only be noise.
    const log = options.log ?? (config.env === 'test' ? () => {} : (line: string) => console.log(line));
    // The text carries a code or a reset link: fine in a developer's terminal, never in production's logs.
    const production = config.env === 'production';
    return {
      async send(message) {
        const text = production ? REDACTED : message.text;
        log(JSON.stringify({ level: 'info', time: new Date().toISOString(), msg: 'mail', from, to: message.to, subject: message.subject, text }));
      },
      async close() {},
    };
  }
  // Mail is sent while a request waits: nodemailer's defaults (2 minutes to connect, 10 of socket
  // silence) would hold it far longer than any client does. Query parameters of SMTP_URL still win.
  // nodemailer is loaded with the first message, not at start: most processes never send one.
  let transport: Promise<Transporter> | undefined;
  const connect = async () => {
    const { default: nodemailer } = await import('nodemailer');
    return nodemailer.createTransport({ url: smtpUrl, connectionTimeout: 10_000, greetingTimeout: 10_000, socketTimeout: 30_000 });
  };
  return {
    async send(message) {
      transport ??= connect();
      // base64 keeps the text byte-exact through any server (no soft line breaks to undo).
      await (await transport).sendMail({ from, to: message.to, subject: message.subject, text: message.text, textEncoding: 'base64' });
    },
    async close() {
      (await transport)?.close();
    },
  };
}
