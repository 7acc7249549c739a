// What an idempotent route (engine/route.ts: idempotent) adds to its operation: the
// Idempotency-Key header, the Idempotent-Replayed header on its successes, and the 409 (the first
// request with the key still runs) and 422 (the key was used with another request) answers.
import { IDEMPOTENCY_KEY_HEADER, REPLAYED_HEADER } from '../idempotency/request.js';
import { errorResponses } from './fragments.js';

const keyParameter = {
  name: IDEMPOTENCY_KEY_HEADER,
  in: 'header',
  required: false,
  description:
    'A key of your choosing (1 to 255 visible ASCII characters), new for each new request: retried with the same key and the same request, ' +
    'the first success is answered again (Idempotent-Replayed: true) and nothing is written twice. An empty one counts as none. ' +
    'Kept per caller; see docs/api-conventions.md.',
  // Empty is allowed: the server reads an empty header as none (as an empty Organization-Id or
  // Tenant-Id), and a client or proxy may send one blank; refusing it would break such requests.
  schema: { type: 'string', maxLength: 255, pattern: '^[\\x21-\\x7e]*$', example: '4f0c7a2e-create-ada' },
};

const replayedHeader = {
  [REPLAYED_HEADER]: { description: 'true: this answer is the one kept for the Idempotency-Key sent; the request did not run again', schema: { type: 'string', enum: ['true'] } },
};

/** The operation with the key's parameter, header and answers added (a fresh object: route declarations are not changed). */
export function idempotentOperation(operation: Record<string, any>): Record<string, any> {
  const responses: Record<string, any> = {};
  for (const [status, response] of Object.entries<Record<string, any>>(operation.responses ?? {})) {
    responses[status] = /^2/.test(status) && !response.$ref ? { ...response, headers: { ...response.headers, ...replayedHeader } } : response;
  }
  return {
    ...operation,
    parameters: [...(operation.parameters ?? []), keyParameter],
    responses: Object.fromEntries(Object.entries({ ...responses, ...errorResponses(409, 422) }).sort(([a], [b]) => a.localeCompare(b))),
  };
}
