// 20261123200000_list_indexes: the indexes that keep a list page O(page) on a huge tenant
// (engine/schema/expected.ts explains each): the default list's index gains id, the tie-break of
// every order (rows sharing a createdAt were fetched and sorted as a group); organization-scoped
// tables get the tenant-wide one too, every table (tenantId, id), and each sort: and dateRange:
// field (tenantId, field, id). The indexes they replace, (tenantId, [organizationId,] createdAt),
// are dropped: each new one starts with the same columns. Organization-scoped tables also get
// statistics of the dependency organizationId → tenantId: without them the planner multiplies the
// two conditions' selectivities, and its estimate of an organization's rows (the total of a list
// with `count: { estimated }`, and the choice of plan) is off by the tenant's share of the table.
import type { Knex } from 'knex';

/** Resource tables → their sort: and dateRange: fields, as the definitions have them now. */
const ORGANIZATION_SCOPED: Record<string, string[]> = {
  candidate_interview: ['title', 'startTime', 'endTime'],
  candidate_source: ['name'],
  candidate: ['status', 'appliedDate', 'hiredDate', 'rating'],
  comment: ['resolved', 'resolvedAt'],
  daily_plan: ['date', 'status', 'workTimePlanned'],
  employee: ['firstName', 'lastName', 'startedWorkOn', 'billRateValue'],
  entity_subscription: ['entity', 'type'],
  event_type: ['title', 'duration', 'durationUnit', 'isActive'],
  image_asset: ['name', 'size'],
  invoice_item: ['quantity', 'price', 'totalValue'],
  invoice: ['invoiceNumber', 'invoiceDate', 'dueDate', 'totalValue', 'status'],
  organization_contact: ['name', 'contactType', 'budget'],
  organization_project: ['name', 'startDate', 'endDate', 'budget'],
  organization_sprint: ['name', 'startDate', 'endDate'],
  organization_team: ['name'],
  screening_task: ['status', 'onHoldUntil'],
  skill: ['name'],
  tag: ['name'],
  task: ['title', 'status', 'priority', 'dueDate', 'startDate', 'number', 'estimate'],
  time_log: ['startedAt', 'stoppedAt', 'duration'],
  time_off_request: ['start', 'end', 'requestDate', 'status'],
  time_slot: ['startedAt', 'duration', 'overall'],
  timesheet: ['startedAt', 'stoppedAt', 'status', 'duration'],
};

const TENANT_SCOPED: Record<string, string[]> = {
  organization: ['name', 'currency'],
  role: [],
  user: ['email', 'firstName', 'lastName'],
};

const tables = () => [
  ...Object.entries(ORGANIZATION_SCOPED).map(([table, sorted]) => ({ table, sorted, organization: true })),
  ...Object.entries(TENANT_SCOPED).map(([table, sorted]) => ({ table, sorted, organization: false })),
];

/** The default list's index as recordColumns made it, before this migration. */
const previous = (organization: boolean) => (organization ? ['tenantId', 'organizationId', 'createdAt'] : ['tenantId', 'createdAt']);

function listIndexes(organization: boolean, sorted: string[]): string[][] {
  return [
    ['tenantId', 'createdAt', 'id'],
    ...(organization ? [['tenantId', 'organizationId', 'createdAt', 'id']] : []),
    ['tenantId', 'id'],
    ...sorted.map((field) => ['tenantId', field, 'id']),
  ];
}

const statistics = (table: string) => `${table}_tenantid_organizationid_stats`;

// By name, as knex names them, and only if (not) there: a database created after recordColumns
// stops making (or starts making) one of these indexes passes through this migration unchanged.
const indexName = (table: string, columns: string[]) => `${table}_${columns.join('_')}_index`.toLowerCase();
const list = (columns: string[]) => columns.map(() => '??').join(', ');
const createIndex = (knex: Knex, table: string, columns: string[]) =>
  knex.raw(`create index if not exists ?? on ?? (${list(columns)})`, [indexName(table, columns), table, ...columns]);
const dropIndex = (knex: Knex, table: string, columns: string[]) => knex.raw('drop index if exists ??', [indexName(table, columns)]);

export async function up(knex: Knex) {
  for (const { table, sorted, organization } of tables()) {
    for (const columns of listIndexes(organization, sorted)) await createIndex(knex, table, columns);
    await dropIndex(knex, table, previous(organization));
    if (organization) await knex.raw('create statistics if not exists ?? (dependencies) on ??, ?? from ??', [statistics(table), 'tenantId', 'organizationId', table]);
  }
}

export async function down(knex: Knex) {
  for (const { table, sorted, organization } of tables()) {
    if (organization) await knex.raw('drop statistics if exists ??', [statistics(table)]);
    await createIndex(knex, table, previous(organization));
    for (const columns of listIndexes(organization, sorted)) await dropIndex(knex, table, columns);
  }
}
