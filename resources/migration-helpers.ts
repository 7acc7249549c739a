// What this project's migrations build with: the engine's column helpers, bound to our tables.
// (Kept outside migrations/, whose every file is a migration.)
import { atLeastRule, joinTable, recordColumnsFor, secondsBetweenColumn, tenantWideUnique, uniqueWhereNull } from '../engine/db/migrations.js';
import { dropSearchIndex, fulltextIndex, trigramIndex } from '../engine/db/search-indexes.js';
import { createIdempotencyTable, dropIdempotencyTable } from '../engine/idempotency/table.js';
import { createChangeMarks, dropChangeMarks, markChanges, unmarkChanges } from '../engine/db/change-marks.js';

/** id, tenantId, (organizationId,) createdAt, updatedAt and the default-list index. */
export const recordColumns = recordColumnsFor({ tenant: 'tenant', organization: 'organization' });

export { atLeastRule, createChangeMarks, createIdempotencyTable, dropChangeMarks, dropIdempotencyTable, dropSearchIndex, fulltextIndex, joinTable, markChanges, secondsBetweenColumn, tenantWideUnique, trigramIndex, uniqueWhereNull, unmarkChanges };
