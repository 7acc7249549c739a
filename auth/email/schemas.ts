// Request bodies of the email routes, validated with these very objects and documented from them.
import { CODE_MAX, CODE_MIN } from './codes.js';

export const emailProperty = { type: 'string', format: 'email', maxLength: 254 };

/** Six digits, as a number or a string: codes start at 100000, so the number form loses nothing. */
export const codeProperty = {
  type: ['integer', 'string'],
  description: `The six-digit code from the mail (${CODE_MIN}–${CODE_MAX}), as a number or a string`,
};

export const emailBody = {
  type: 'object',
  additionalProperties: false,
  required: ['email'],
  properties: { email: emailProperty },
};

export const verifyCodeBody = {
  type: 'object',
  additionalProperties: false,
  required: ['email', 'code'],
  properties: {
    email: emailProperty,
    code: codeProperty,
    // Ever Gauzy clients send the tenant of the account too.
    tenantId: { type: 'string', format: 'uuid', description: "Optional: the account's tenant (a different one fails like a wrong code)" },
  },
};

export const changeCodeBody = {
  type: 'object',
  additionalProperties: false,
  required: ['code'],
  properties: { code: codeProperty },
};

export interface EmailBody {
  email: string;
}
export interface VerifyCodeBody {
  email: string;
  code: number | string;
  tenantId?: string;
}
export interface ChangeCodeBody {
  code: number | string;
}

/** Addresses are compared and stored lower-case, as registration stores them. */
export const normalizeEmail = (email: string) => email.trim().toLowerCase();
