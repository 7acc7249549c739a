// A customer's answer to an estimate through its share link: ACCEPTED or REJECTED, once. The same
// answer again changes nothing (a PUT may be repeated); another answer after the first, or any
// answer to a void estimate, is a 409. One conditional UPDATE decides, so two answers sent at once
// cannot both land.
import type { Knex } from 'knex';
import { conflict, notFound } from '../../engine/errors.js';
import type { ResourceModelClass } from '../../engine/resource/model.js';

export const DECISIONS = ['ACCEPTED', 'REJECTED'] as const;
export type Decision = (typeof DECISIONS)[number];

/** The invoice status after which an estimate takes no answer. */
const VOID = 'VOID';

const WORDS: Record<Decision, string> = { ACCEPTED: 'accepted', REJECTED: 'rejected' };

export const ALREADY_DECIDED = (was: Decision) => `This estimate was already ${WORDS[was]}; its answer cannot be changed`;
export const VOID_ESTIMATE = 'This estimate is void: it can no longer be accepted or rejected';

/**
 * Records the decision on the estimate `id` of the tenant (through the invoice model, scoped to the
 * link's tenant) and answers its `columns` as they now are, or throws the 409 (a 404 if it was
 * deleted meanwhile).
 */
export async function decideEstimate(
  db: Knex,
  invoices: ResourceModelClass,
  columns: readonly string[],
  found: { tenantId: string; id: string; decision: Decision },
): Promise<Record<string, any>> {
  const { tenantId, id, decision } = found;
  const estimate = () => invoices.scoped({ tenantId }, db).where({ id, isEstimate: true });
  const [decided] = await estimate()
    .whereNull('estimateStatus')
    .whereNot('status', VOID)
    .patch({ estimateStatus: decision, estimateDecidedAt: db.fn.now(), updatedAt: db.fn.now() })
    .returning(columns as string[]);
  if (decided) return decided;
  const now = await estimate()
    .select([...columns, 'estimateStatus'])
    .first();
  if (!now) throw notFound();
  if (now.estimateStatus === decision) return now;
  if (now.estimateStatus) throw conflict(ALREADY_DECIDED(now.estimateStatus));
  throw conflict(VOID_ESTIMATE);
}
