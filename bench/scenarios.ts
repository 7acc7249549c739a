// The requests the bench measures: four reads and two writes of the employee and time-log API,
// as a client of the organization's owner sends them.

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
}

export function scenarios(organizationId: string, employeeId: string): Scenario[] {
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
      key: 'create-time-log',
      label: 'POST /api/time-log (create)',
      kind: 'write',
      method: 'POST',
      path: '/api/time-log',
      body: { organizationId, employeeId, startedAt: '2026-01-05T09:00:00.000Z', stoppedAt: '2026-01-05T10:30:00.000Z', logType: 'MANUAL', description: 'Bench entry' },
      status: 201,
      single: true,
    },
    { key: 'patch', label: 'PATCH /api/employee/{id}', kind: 'write', method: 'PATCH', path: '/api/employee/{id}', body: { lastName: 'Patched' }, status: 200, single: true },
  ];
}

export const pathFor = (scenario: Scenario, id: string) => scenario.path.replace('{id}', id);
