// The bench's data: one tenant made over HTTP like any client's (register, sign in, create the
// organization), then its people written by a few INSERT … SELECT generate_series statements
// into the tables the service's migrations made: a user and an employee per person (names
// varied, joined over three years), 50 tags with one to three on each employee, two or three
// time logs each. A row in bench_seed marks a schema as seeded for a size, so a later run
// reuses it.
import pg from 'pg';
import { ok } from './lib/http.js';

export const PASSWORD = 'Str0ng!Passw0rd';
const TAGS = 50;
/** Ids the by-id scenarios rotate over. */
const ROTATION = 1000;

export interface Tenant {
  tenantId: string;
  organizationId: string;
  email: string;
}

export interface Seeded extends Tenant {
  employees: number;
  /** How long the seeding took when it was made (it may be from an earlier run). */
  seconds: number;
  employeeIds: string[];
}

export async function connect(databaseUrl: string, schema?: string): Promise<pg.Client> {
  const client = new pg.Client({ connectionString: databaseUrl, ...(schema ? { options: `-c search_path=${schema}` } : {}) });
  await client.connect();
  return client;
}

/** The marker of a schema seeded for `employees`, or undefined (absent, another size, unfinished). */
export async function seededTenant(db: pg.Client, schema: string, employees: number): Promise<(Tenant & { seconds: number }) | undefined> {
  const table = await db.query('select 1 from information_schema.tables where table_schema = $1 and table_name = $2', [schema, 'bench_seed']);
  if (!table.rowCount) return undefined;
  const { rows } = await db.query(`select * from "${schema}".bench_seed where employees = $1`, [employees]);
  return rows[0] && { tenantId: rows[0].tenantId, organizationId: rows[0].organizationId, email: rows[0].email, seconds: rows[0].seconds };
}

export async function dropSchema(db: pg.Client, schema: string) {
  await db.query(`drop schema if exists "${schema}" cascade`);
}

/** The tenant's owner and organization, through the service's own endpoints. */
export async function signUp(base: string, schema: string): Promise<Tenant> {
  const email = `owner-${schema.replace(/_/g, '-')}-${Date.now()}@bench.example.com`;
  const user = await ok(base, 'POST', '/api/auth/register', { user: { firstName: 'Bench', lastName: 'Owner', email }, password: PASSWORD });
  const token = await signIn(base, email);
  const organization = await ok(base, 'POST', '/api/organization', { name: 'Bench Corp', currency: 'EUR' }, token);
  return { tenantId: user.tenantId, organizationId: organization.id, email };
}

export async function signIn(base: string, email: string): Promise<string> {
  return (await ok(base, 'POST', '/api/auth/login', { email, password: PASSWORD })).token;
}

const FIRST = ['Ada', 'Ben', 'Chloe', 'Dmitri', 'Elena', 'Farid', 'Grace', 'Hiro', 'Ines', 'Jonas', 'Kofi', 'Lena', 'Mateo', 'Nadia', 'Omar', 'Priya', 'Quentin', 'Rosa', 'Sven', 'Tariq', 'Uma', 'Victor', 'Wen', 'Ximena', 'Yusuf', 'Zoe', 'Aiko', 'Bruno', 'Carmen', 'Diego', 'Esther', 'Felix', 'Gita', 'Hugo', 'Ivana', 'Jamal', 'Katja', 'Luis', 'Mira', 'Nils'];
const LAST = ['Anders', 'Baker', 'Costa', 'Dubois', 'Eriksen', 'Fischer', 'Garcia', 'Hansen', 'Ivanova', 'Jensen', 'Kowalski', 'Lopez', 'Meyer', 'Nakamura', 'Okafor', 'Petrov', 'Quinn', 'Rossi', 'Schmidt', 'Tanaka', 'Ueda', 'Varga', 'Weber', 'Xu', 'Yilmaz', 'Zimmermann', 'Almeida', 'Brown', 'Chen', 'Diaz', 'Evans', 'Fontaine', 'Gruber', 'Horvat', 'Iqbal', 'Jovanovic', 'Kim', 'Larsen', 'Moreau', 'Novak', 'Olsen', 'Park', 'Reyes', 'Silva', 'Torres', 'Urban', 'Vogel', 'Wagner', 'Young', 'Zhang'];
const sqlArray = (names: string[]) => `array[${names.map((n) => `'${n}'`).join(',')}]`;

/** The first and last name of person `n` (an SQL integer expression), as SQL: the same people wherever they are seeded. */
export const nameColumns = (n: string) => ({
  firstName: `(${sqlArray(FIRST)})[1 + (${n} * 7) % ${FIRST.length}]`,
  lastName: `(${sqlArray(LAST)})[1 + (${n} * 13 + ${n} / ${FIRST.length}) % ${LAST.length}]`,
});

/** Writes the people of the tenant and marks the schema; returns the seconds it took. */
export async function seedPeople(db: pg.Client, schema: string, tenant: Tenant, employees: number): Promise<number> {
  const started = performance.now();
  const { tenantId, organizationId } = tenant;
  const step = async (label: string, sql: string, values: unknown[] = []) => {
    const t0 = performance.now();
    const result = await db.query(sql, values);
    console.log(`    ${label.padEnd(28)} ${String(result.rowCount ?? '').padStart(9)} rows  ${((performance.now() - t0) / 1000).toFixed(1)} s`);
  };
  await db.query('begin');
  try {
    // Triggers off for the load (a superuser's session setting): no foreign-key check per row, and
    // no change mark (engine/db/change-marks.ts) holding a million rows in a transition table;
    // the first count of the fresh schema is then kept against the mark as it stands. Without
    // the privilege the load only takes longer.
    await db.query('savepoint replica');
    await db.query(`set local session_replication_role = replica`).catch(() => db.query('rollback to savepoint replica'));
    const role = await db.query(`select id from role where "tenantId" = $1 and name = 'EMPLOYEE'`, [tenantId]);
    if (!role.rowCount) throw new Error('the tenant has no EMPLOYEE role: did the migrations or the registration change?');
    // One row per person, numbered: the users, employees, links and logs below are derived from it.
    await step('people (temporary)', `create temporary table bench_people on commit drop as
      select n, gen_random_uuid() as "userId", gen_random_uuid() as "employeeId",
             ${nameColumns('n').firstName} as "firstName",
             ${nameColumns('n').lastName} as "lastName",
             now() - interval '1095 days' * random() as "createdAt"
      from generate_series(1, $1::int) as n`, [employees]);
    await step('user', `insert into "user" (id, "tenantId", email, "firstName", "lastName", name, "roleId", "createdAt", "updatedAt")
      select "userId", $1, 'person-' || n || '@${schema.replace(/_/g, '-')}.bench.example.com', "firstName", "lastName", "firstName" || ' ' || "lastName", $2, "createdAt", "createdAt"
      from bench_people`, [tenantId, role.rows[0].id]);
    await step('employee', `insert into employee (id, "tenantId", "organizationId", "firstName", "lastName", "userId", "startedWorkOn", "billRateValue", "billRateCurrency", "payPeriod", "isActive", "createdAt", "updatedAt")
      select "employeeId", $1, $2, "firstName", "lastName", "userId", date_trunc('day', "createdAt"), 20 + n % 80, 'EUR', 'MONTHLY', n % 10 <> 0, "createdAt", "createdAt"
      from bench_people`, [tenantId, organizationId]);
    await step('tag', `insert into tag ("tenantId", "organizationId", name, color, description)
      select $1, $2, 'Tag ' || t, (array['red','green','blue','orange','purple'])[1 + t % 5], 'Seeded tag ' || t
      from generate_series(1, ${TAGS}) as t`, [tenantId, organizationId]);
    await step('tag_employee', `insert into tag_employee ("employeeId", "tagId")
      select p."employeeId", t.id
      from bench_people p cross join generate_series(0, 2) as k
      join (select id, row_number() over (order by name) - 1 as i from tag where "organizationId" = $1) t on t.i = (p.n + k * 17) % ${TAGS}
      where k <= p.n % 3`, [organizationId]);
    await step('time_log', `insert into time_log ("tenantId", "organizationId", "employeeId", "startedAt", "stoppedAt", "logType", source, description, "isBillable", "createdAt", "updatedAt")
      select $1, $2, p."employeeId", s, s + interval '1 minute' * (30 + (p.n * 7 + k * 11) % 450), 'TRACKED', 'WEB_TIMER', 'Work on item ' || (p.n + k), k = 0, s, s
      from bench_people p cross join generate_series(0, 2) as k
      cross join lateral (select date_trunc('hour', p."createdAt") + interval '1 day' * k + interval '9 hours' as s) as start
      where k <= 1 + p.n % 2`, [tenantId, organizationId]);
    const seconds = (performance.now() - started) / 1000;
    await db.query(`create table if not exists bench_seed (employees int primary key, "tenantId" uuid not null, "organizationId" uuid not null, email text not null, seconds real not null, "seededAt" timestamptz not null default now())`);
    await db.query('insert into bench_seed (employees, "tenantId", "organizationId", email, seconds) values ($1, $2, $3, $4, $5)', [employees, tenantId, organizationId, tenant.email, seconds]);
    await db.query('commit');
  } catch (err) {
    await db.query('rollback');
    throw err;
  }
  // What autovacuum would do after such a write: statistics for the planner, and the GIN indexes'
  // pending lists (search) merged into the indexes proper.
  const t0 = performance.now();
  await db.query('vacuum analyze "user", employee, tag, tag_employee, time_log');
  console.log(`    ${'vacuum analyze'.padEnd(28)} ${''.padStart(9)}       ${((performance.now() - t0) / 1000).toFixed(1)} s`);
  return (performance.now() - started) / 1000;
}

/** Employee ids spread over the table, for the scenarios that rotate over ids. */
export async function rotationIds(db: pg.Client, organizationId: string): Promise<string[]> {
  const { rows } = await db.query('select id from employee where "organizationId" = $1 order by id limit $2', [organizationId, ROTATION]);
  return rows.map((r) => r.id);
}
