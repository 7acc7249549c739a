// What the password and account routes' documentation shares; each route's operation stands next
// to its handler (reset-routes.ts, change-route.ts, account-routes.ts).
import { okSchema } from '../answers.js';
import { jsonResponse } from '../../engine/openapi/fragments.js';
import { toOpenApiSchema } from '../../engine/openapi/schema-conversion.js';
import { newPasswordSchema } from '../password.js';

export { PASSWORD_RULES_IN_WORDS as PASSWORD_RULES } from '../password.js';

export const ok = jsonResponse('Done', okSchema);

/** A body schema with the new-password rules (checked by the route after validation) on the named properties. */
export function withPasswordRules(schema: Record<string, any>, names: string[]): Record<string, any> {
  const converted = toOpenApiSchema(schema) as Record<string, any>;
  for (const name of names) converted.properties[name] = { ...newPasswordSchema, ...(name === 'confirmPassword' ? { description: 'Equal to the new password' } : {}) };
  return converted;
}
