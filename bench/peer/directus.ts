// The peer lane (BENCH_PEER=directus): Directus 11, installed and started outside the repository
// by the peer bench's setup.sh (its README), measured in the same run as the service. This module
// reads where setup.sh left it (DIRECTUS_HOME/bench.json: its URL, static admin token and
// database), seeds that database with as many employees as the size measures, all in one
// organization as ours are (the same names as seed.ts, 1 to 3 of 20 tags each, the indexes a
// tuned deployment adds), and says how Directus is asked each scenario it has a counterpart of.
import { readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import pg from 'pg';
import { ok } from '../lib/http.js';
import { nameColumns } from '../seed.js';
import type { Scenario, DeepPage } from '../scenarios.js';

interface State {
  url: string;
  token: string;
  pg: { host: string; port: number; user: string; database: string };
}

export interface Peer {
  name: string;
  server: { url: string; pid: number };
  token: string;
  /** Employee ids of the rotation, as the service's scenarios rotate theirs. */
  ids: string[];
  /** How the peer is asked `scenario`; undefined: it has no counterpart. */
  scenarioFor(scenario: Scenario, deep: DeepPage): Scenario | undefined;
  /** Takes out what the write scenarios added, so the next size and run start from the seed. */
  tidy(): Promise<void>;
  /**
   * Cancels what the peer still runs on its database after a load stops (its queued requests'
   * statements, a count of a million rows each), so that the next side starts on an idle
   * PostgreSQL; resolves with the statements cancelled.
   */
  quiesce(): Promise<number>;
  close(): Promise<void>;
}

const home = () => process.env.DIRECTUS_HOME || path.join(tmpdir(), 'directus-bench');

function readState(): State {
  const file = path.join(home(), 'bench.json');
  try {
    return JSON.parse(readFileSync(file, 'utf8'));
  } catch (err) {
    throw new Error(`BENCH_PEER=directus: cannot read ${file} (${(err as NodeJS.ErrnoException).code ?? err}); install and start Directus with the peer bench's setup.sh first`);
  }
}

const CREATED = 'Bench created';

/** Replaces the peer's data with `employees` employees of one organization, unless it holds exactly that already. */
async function seed(db: pg.Client, employees: number): Promise<string> {
  const held = await db.query(`select "organizationId", count(*)::int as n from employee group by 1`);
  if (held.rowCount === 1 && held.rows[0].n === employees) return held.rows[0].organizationId;
  const started = performance.now();
  const names = nameColumns('n');
  let organizationId: string;
  await db.query('begin');
  try {
    await db.query(`set local session_replication_role = replica`);
    await db.query('truncate employee_tag, employee, tag, organization restart identity');
    for (const name of ['employee_org_created_idx', 'employee_tag_employee_idx', 'employee_tag_tag_idx']) await db.query(`drop index if exists ${name}`);
    organizationId = (await db.query(`insert into organization (id, name, currency) values (gen_random_uuid(), 'Bench organization', 'EUR') returning id`)).rows[0].id;
    await db.query(`insert into tag (id, name, color) select gen_random_uuid(), 'Tag ' || i, 'blue' from generate_series(1, 20) i`);
    await db.query(
      `insert into employee (id, "firstName", "lastName", "startedWorkOn", "isActive", "organizationId", "userId", "tenantId", "createdAt")
       select gen_random_uuid(), ${names.firstName}, ${names.lastName}, date '2015-01-01' + (n % 3650), n % 10 <> 0, $2, gen_random_uuid(),
              '00000000-0000-4000-8000-000000000001', now() - interval '1095 days' * random()
       from generate_series(1, $1::int) n`,
      [employees, organizationId],
    );
    await db.query(`with tags as (select array_agg(id order by name) as ids from tag), e as (select id, row_number() over () as n from employee)
      insert into employee_tag (employee_id, tag_id) select e.id, tags.ids[1 + (e.n + k * 7) % 20] from e, tags, generate_series(0, 2) k where k <= e.n % 3`);
    await db.query('commit');
  } catch (err) {
    await db.query('rollback');
    throw err;
  }
  await db.query(`create index employee_org_created_idx on employee ("organizationId", "createdAt" desc)`);
  await db.query(`create index employee_tag_employee_idx on employee_tag (employee_id)`);
  await db.query(`create index employee_tag_tag_idx on employee_tag (tag_id)`);
  await db.query('vacuum (analyze) organization, tag, employee, employee_tag');
  console.log(`directus: seeded ${employees.toLocaleString('en')} employees in one organization in ${((performance.now() - started) / 1000).toFixed(1)} s`);
  return organizationId;
}

/** Directus as set up by the peer bench, seeded for `employees`. */
export async function directusPeer(employees: number): Promise<Peer> {
  const state = readState();
  const pid = Number(readFileSync(path.join(home(), 'directus.pid'), 'utf8').trim());
  const db = new pg.Client(state.pg);
  await db.connect();
  const organizationId = await seed(db, employees);
  await db.query(`delete from employee where "lastName" = $1`, [CREATED]);
  // The rotation: employees spread over the table, as the service's are.
  const ids = (await db.query(`select id from employee order by id limit 1000`)).rows.map((r) => r.id as string);
  // Directus answers at all, with this token, before anything is measured.
  await ok(state.url, 'GET', `/items/employee/${ids[0]}`, undefined, state.token);
  const list = (query: string) => `/items/employee?${query}&meta=filter_count`;
  const org = `filter[organizationId][_eq]=${organizationId}`;
  const counterparts: Record<string, (deep: DeepPage) => Pick<Scenario, 'method' | 'path' | 'body' | 'status' | 'single'>> = {
    'get-by-id': () => ({ method: 'GET', path: '/items/employee/{id}', status: 200, single: true }),
    'list-org-created': () => ({ method: 'GET', path: list(`${org}&sort=-createdAt&limit=10`), status: 200, single: false }),
    // Its employees name no user (a uuid only): the organization is the belongs-to relation.
    'list-relations': () => ({ method: 'GET', path: list('fields=*,organizationId.*,tags.tag_id.*&sort=-createdAt&limit=10'), status: 200, single: false }),
    search: () => ({ method: 'GET', path: list('filter[isActive][_eq]=true&sort=lastName&limit=10'), status: 200, single: false }),
    'list-ilike': () => ({ method: 'GET', path: list('filter[lastName][_icontains]=afo&limit=10'), status: 200, single: false }),
    'search-names': () => ({ method: 'GET', path: list('search=Okafor&limit=10'), status: 200, single: false }),
    'list-select': () => ({ method: 'GET', path: list('fields=id,firstName,lastName&sort=-createdAt&limit=10'), status: 200, single: false }),
    'deep-skip': (deep) => ({ method: 'GET', path: `/items/employee?sort=-createdAt&limit=10&offset=${deep.position}`, status: 200, single: false }),
    'create-time-log': () => ({
      method: 'POST',
      path: '/items/employee',
      body: { firstName: 'Bench', lastName: CREATED, startedWorkOn: '2026-01-05', isActive: true, organizationId, userId: '00000000-0000-4000-8000-0000000000aa', tenantId: '00000000-0000-4000-8000-000000000001' },
      status: 200,
      single: true,
    }),
    patch: () => ({ method: 'PATCH', path: '/items/employee/{id}', body: { lastName: 'Patched' }, status: 200, single: true }),
  };
  return {
    name: 'Directus',
    server: { url: state.url, pid },
    token: state.token,
    ids,
    scenarioFor: (scenario, deep) => {
      const counterpart = counterparts[scenario.key];
      return counterpart && { ...scenario, ...counterpart(deep), body: counterpart(deep).body };
    },
    tidy: async () => {
      await db.query(`delete from employee where "lastName" = $1`, [CREATED]);
    },
    quiesce: () => cancelRunning(db, state.pg.database),
    close: () => db.end(),
  };
}

/** How long a peer may keep its database busy after its load: its queue drains within this. */
const QUIESCE_LIMIT_MS = 60_000;

/** Cancels the clients' statements running on `database` (not this connection's, not autovacuum's) until none has run for ~300 ms. */
async function cancelRunning(db: pg.Client, database: string): Promise<number> {
  const started = performance.now();
  let cancelled = 0;
  let quiet = 0;
  while (quiet < 3 && performance.now() - started < QUIESCE_LIMIT_MS) {
    const { rows } = await db.query(
      `select count(*) filter (where pg_cancel_backend(pid))::int as n from pg_stat_activity
       where datname = $1 and pid <> pg_backend_pid() and state = 'active' and backend_type = 'client backend'`,
      [database],
    );
    cancelled += rows[0].n;
    quiet = rows[0].n === 0 ? quiet + 1 : 0;
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  return cancelled;
}
