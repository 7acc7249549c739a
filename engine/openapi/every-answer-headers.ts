// The headers every /api answer carries whatever the operation (engine/http/security.ts sets
// them before anything else runs, errors included): declared once in components/headers, marked
// with EVERY_ANSWER_EXTENSION, each with the one value the server sends. A response that declares
// one of them itself (the image file's Cache-Control) overrides it for that response.
import { API_ANSWER_HEADERS } from '../http/security.js';
import { EVERY_ANSWER_EXTENSION } from './fragments.js';

const WHY: Record<string, string> = {
  'content-security-policy': 'An answer is never a page: loaded as one, it may run, load and frame nothing.',
  'cross-origin-resource-policy': 'Only pages of the same site may embed an answer (an image file, say).',
  'referrer-policy': 'A page opened from an answer learns nothing of where it came from.',
  'strict-transport-security': 'Browsers keep to HTTPS for this host.',
  'x-content-type-options': 'Browsers take Content-Type as sent, never a sniffed type.',
  'x-frame-options': 'No page may frame an answer.',
  'cache-control': 'Answers are per caller: no cache stores them (the image file route allows a private cache).',
};

/** components/headers entries for every header on every answer, by name. */
export function everyAnswerHeaders(): Record<string, object> {
  return Object.fromEntries(
    API_ANSWER_HEADERS.map(([name, value]) => [
      name,
      {
        description: `${WHY[name.toLowerCase()] ?? 'A security header.'} Sent on every /api answer: \`${value}\`.`,
        schema: { type: 'string', enum: [value] },
        [EVERY_ANSWER_EXTENSION]: true,
      },
    ]),
  );
}
