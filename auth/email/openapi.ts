// What the email routes' documentation shares: the rules of codes and the answers several routes
// give, in words built from the same constants the routes enforce. Each route's operation stands
// next to its handler (verify.ts, check.ts, change.ts).
import { ERROR_SCHEMA } from '../../engine/openapi/components.js';
import { jsonResponse, ref } from '../../engine/openapi/fragments.js';
import type { OperationDoc, Route } from '../../engine/route.js';
import { MAIL_UNAVAILABLE, okSchema } from './answers.js';
import { CODE_TTL_SECONDS, MAX_ATTEMPTS } from './codes.js';
import { LIMIT_WINDOW_SECONDS, MAX_CODES_PER_WINDOW, MAX_WRONG_PER_WINDOW, TOO_MANY_CODES, TOO_MANY_WRONG } from './limits.js';

export const ok = (description: string) => ({ '200': jsonResponse(description, okSchema) });
const hour = `${LIMIT_WINDOW_SECONDS / 60} minutes`;
export const codeRules =
  `A code is valid for ${CODE_TTL_SECONDS / 60} minutes and for ${MAX_ATTEMPTS} tries: after ${MAX_ATTEMPTS} wrong ones even the right code fails. ` +
  `Per user and purpose, at most ${MAX_CODES_PER_WINDOW} codes are mailed and at most ${MAX_WRONG_PER_WINDOW} wrong codes are entered within any ${hour}, ` +
  `whatever code they were tried against; beyond that every code of the purpose fails until the window passes.`;
export const mailFailure = `503 when the mail server refuses the message ("${MAIL_UNAVAILABLE}").`;
export const foreignTenant = '403 when a Tenant-Id header names another tenant than the token\'s.';
export const tooManyCodes = `429 with Retry-After (seconds) when ${MAX_CODES_PER_WINDOW} codes were mailed within ${hour} ("${TOO_MANY_CODES}"), or ${MAX_WRONG_PER_WINDOW} wrong codes entered ("${TOO_MANY_WRONG}").`;

/** 429: no shared component exists for it, and this one carries its Retry-After header. */
export const tooManyResponse = {
  '429': {
    description: 'Too many codes asked for, or too many wrong codes entered, within the window; nothing is mailed',
    headers: { 'Retry-After': { description: 'Whole seconds until a new code can be asked for (or until a rate limit frees up)', schema: { type: 'integer', minimum: 1 } } },
    content: { 'application/json': { schema: ref(ERROR_SCHEMA), example: { statusCode: 429, message: TOO_MANY_CODES, error: 'Too Many Requests' } } },
  },
};

/** A route the document shows. */
export type DocumentedRoute = Route & { docs: OperationDoc };

/**
 * The route, and the same route under each Ever Gauzy alias: an operationId of its own
 * (`<id>Alias`, `<id>Alias2`, …) and a summary naming the main path.
 */
export function withAliases(route: DocumentedRoute, aliases: string[]): Route[] {
  const { operationId, summary } = route.docs;
  return [
    route,
    ...aliases.map((path, i) => ({
      ...route,
      path,
      docs: { ...route.docs, operationId: `${operationId}Alias${i ? i + 1 : ''}`, summary: `${summary} (alias of ${route.path})` },
    })),
  ];
}
