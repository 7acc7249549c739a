// The columns of a softDelete resource's deletion, and of who changed a changedBy resource's
// records: the engine alone writes them (compile-fields.ts adds them as read-only base fields).
import { forbidden } from '../errors.js';
import { grants, type Caller } from '../caller.js';
import type { CompiledResource } from './compiled.js';

export const DELETED_AT = 'deletedAt';
export const DELETED_BY = 'deletedById';
export const CREATED_BY = 'createdById';
export const UPDATED_BY = 'updatedById';

/**
 * withDeleted shows what only a caller able to delete (and so to recover) may see: the delete
 * permission is asked for, else 403. Nothing is asked when it is not sent, or sent false.
 */
export function checkWithDeleted(resource: CompiledResource, caller: Caller, withDeleted: boolean | undefined) {
  if (withDeleted && !grants(caller, resource.permissions.delete)) throw forbidden();
}
