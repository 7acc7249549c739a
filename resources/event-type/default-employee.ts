// The one rule that makes event types hand-written: an event type belongs to an employee, and
// a create that names none is the caller's own (the token carries the caller's employee id).
import type { Caller } from '../../engine/caller.js';
import { isPlainObject } from '../../engine/objects.js';


/**
 * The create body with `employeeId` filled from the caller when the client left it out.
 * An explicit value (null included) is kept: the client chose it. Anything that is not an
 * object is passed on untouched so the resource's validator answers it like any other body.
 */
export function withCallerEmployee(body: unknown, caller: Caller): unknown {
  if (!isPlainObject(body) || body.employeeId !== undefined || !caller.employeeId) return body;
  return { ...body, employeeId: caller.employeeId };
}
