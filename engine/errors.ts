// The error type handlers throw, and the envelope every failure leaves the service in:
// {statusCode, message, error}. A leaf: everything that maps errors (db/errors.ts,
// http/error-envelope.ts) imports it, and it imports none of them.
import { STATUS_CODES } from 'node:http';

export class HttpError extends Error {
  readonly status: number;
  readonly messages: string | string[];
  readonly headers: Record<string, string>;
  /** Members the envelope carries beside statusCode, message and error (a bulk write's `errors`). */
  readonly details?: Record<string, unknown>;

  constructor(status: number, messages: string | string[], headers: Record<string, string> = {}, details?: Record<string, unknown>) {
    // A 4xx is an expected answer, not a bug: nobody reads its stack, and capturing one cost more
    // than the rest of a 404. A 5xx keeps its stack for the log.
    const stackTraceLimit = Error.stackTraceLimit;
    if (status < 500) Error.stackTraceLimit = 0;
    super(Array.isArray(messages) ? messages.join('; ') : messages);
    Error.stackTraceLimit = stackTraceLimit;
    this.status = status;
    this.messages = messages;
    this.headers = headers;
    if (details) this.details = details;
  }
}

/** A 400 lists at most this many broken rules, so a huge hostile body cannot make a huge answer. */
export const MAX_MESSAGES = 50;

export function badRequest(messages: string[] | string): HttpError {
  const list = Array.isArray(messages) ? messages : [messages];
  if (list.length <= MAX_MESSAGES) return new HttpError(400, list);
  return new HttpError(400, [...list.slice(0, MAX_MESSAGES), `… and ${list.length - MAX_MESSAGES} more problems`]);
}
export const unauthorized = () => new HttpError(401, 'Unauthorized', { 'WWW-Authenticate': 'Bearer' });
export const forbidden = () => new HttpError(403, 'Forbidden resource');
export const notFound = () => new HttpError(404, 'The requested record was not found');
export const conflict = (message: string) => new HttpError(409, message);

export function errorBody(status: number, message: string | string[], details?: Record<string, unknown>) {
  return { statusCode: status, message, error: STATUS_CODES[status] ?? 'Error', ...details };
}
