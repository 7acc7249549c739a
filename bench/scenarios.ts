// The requests the bench measures: reads and two writes of the employee and time-log API, as a
// client of the organization's owner sends them. The query-language reads (operators, search,
// selection, a deep page by cursor and by skip) work on the seeded names and rates (seed.ts).

export interface Scenario {
  key: string;
  label: string;
  kind: 'read' | 'write';
  method: 'GET' | 'POST' | 'PATCH';
  /** With `{id}` where an employee id of the rotation goes. */
  path: string;
  body?: unknown;
  status: number;
  /** One object in the answer rather than a list. */
  single: boolean;
  /** Measured for comparison only: no target applies (the deep page by skip, beside the one by cursor). */
  reported?: boolean;
  /** A header sent with a new random value on every request (Idempotency-Key: each create its own key). */
  uniqueHeader?: string;
  /**
   * The cost of a feature: measured against the service answering this other scenario (the same
   * request without the feature), not against the raw server; target FEATURE_COST_TARGET.
   */
  against?: string;
}

/** A page deep in the default list: its position, and the cursor the service gave for it. */
export interface DeepPage {
  position: number;
  cursor: string;
}

/** The default list's page after `position`, by cursor and by skip (count=none: the page alone). */
export const deepCursorPath = (cursor: string) => `/api/employee?take=10&count=none&cursor=${cursor}`;
export const deepSkipPath = (position: number, take = 10) => `/api/employee?take=${take}&count=none&skip=${position}`;

export function scenarios(organizationId: string, employeeId: string, deep: DeepPage = { position: 0, cursor: '' }): Scenario[] {
  const createTimeLog: Scenario = {
    key: 'create-time-log',
    label: 'POST /api/time-log (create)',
    kind: 'write',
    method: 'POST',
    path: '/api/time-log',
    body: { organizationId, employeeId, startedAt: '2026-01-05T09:00:00.000Z', stoppedAt: '2026-01-05T10:30:00.000Z', logType: 'MANUAL', description: 'Bench entry' },
    status: 201,
    single: true,
  };
  return [
    { key: 'get-by-id', label: 'GET /api/employee/{id}', kind: 'read', method: 'GET', path: '/api/employee/{id}', status: 200, single: true },
    {
      key: 'list-org-created',
      label: 'GET list where org, order createdAt, take 10',
      kind: 'read',
      method: 'GET',
      path: `/api/employee?where[organizationId]=${organizationId}&order[createdAt]=DESC&take=10`,
      status: 200,
      single: false,
    },
    { key: 'list-relations', label: 'GET list relations user+tags', kind: 'read', method: 'GET', path: '/api/employee?relations[]=user&relations[]=tags', status: 200, single: false },
    {
      key: 'search',
      label: 'POST /api/employee/search',
      kind: 'read',
      method: 'POST',
      path: '/api/employee/search',
      body: { where: { isActive: true }, order: { lastName: 'ASC' }, take: 10 },
      status: 200,
      single: false,
    },
    {
      key: 'list-range-in',
      label: 'GET list billRateValue between, payPeriod in',
      kind: 'read',
      method: 'GET',
      path: '/api/employee?where[billRateValue][between]=40,60&where[payPeriod][in]=WEEKLY,MONTHLY&take=10',
      status: 200,
      single: false,
    },
    { key: 'list-ilike', label: 'GET list lastName ilike %afo%', kind: 'read', method: 'GET', path: '/api/employee?where[lastName][ilike]=%25afo%25&take=10', status: 200, single: false },
    { key: 'search-names', label: 'GET list search=Okafor (names)', kind: 'read', method: 'GET', path: '/api/employee?search=Okafor&take=10', status: 200, single: false },
    { key: 'list-select', label: 'GET list select[] firstName, lastName', kind: 'read', method: 'GET', path: '/api/employee?select[]=firstName&select[]=lastName&take=10', status: 200, single: false },
    { key: 'deep-cursor', label: 'GET list deep page by cursor', kind: 'read', method: 'GET', path: deepCursorPath(deep.cursor), status: 200, single: false },
    { key: 'deep-skip', label: 'GET list deep page by skip (reported)', kind: 'read', method: 'GET', path: deepSkipPath(deep.position), status: 200, single: false, reported: true },
    createTimeLog,
    // The same create with a new Idempotency-Key each time, against the create without one.
    { ...createTimeLog, key: 'create-idempotent', label: 'POST /api/time-log with Idempotency-Key', uniqueHeader: 'Idempotency-Key', against: createTimeLog.key },
    { key: 'patch', label: 'PATCH /api/employee/{id}', kind: 'write', method: 'PATCH', path: '/api/employee/{id}', body: { lastName: 'Patched' }, status: 200, single: true },
  ];
}

export const pathFor = (scenario: Scenario, id: string) => scenario.path.replace('{id}', id);
