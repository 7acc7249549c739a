// The event type routes in the OpenAPI document: the engine's CRUD paths, with what our own
// create handler does differently.
import type { OpenApiPaths } from '../../engine/module.js';
import { resourcePaths } from '../../engine/openapi/resource-paths.js';
import type { CompiledResource } from '../../engine/resource/compiled.js';

const EMPLOYEE_DEFAULT =
  "Without employeeId the event type belongs to the caller's own employee record (none when the caller has none); " +
  'an explicit employeeId, null included, is kept and must name an employee of the tenant.';

export function eventTypeOpenApi(resource: CompiledResource): OpenApiPaths {
  return resourcePaths(resource, {
    create: EMPLOYEE_DEFAULT,
    replace: 'Absent optional fields and tags are reset; employeeId left out keeps its value (send null to clear it).',
  });
}
