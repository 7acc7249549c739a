// The test databases on PostgreSQL (docs/testing.md, test/helpers/postgres-copies.ts): a test app
// works in a copy of a database migrated once per test process, in the schema `suite`, and the
// copy is gone once the app is closed; a role that may not create databases gets a new, migrated
// schema of DATABASE_URL's database instead, also gone after, and no database is made for it.
// PostgreSQL only (the embedded database has its own image).
import { spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { fileURLToPath } from 'node:url';
import pg from 'pg';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { createTestApp, usingPostgres } from '../helpers/app.js';
import { admin } from '../helpers/postgres-copies.js';

const URL_OF_TESTS = process.env.DATABASE_URL;
const postgresTest = usingPostgres() ? test : test.skip;
const PROBE = fileURLToPath(new URL('../fixtures/test-databases/probe.ts', import.meta.url));
const TSX = import.meta.resolve('tsx');

const query = <Row>(sql: string) => admin<Row>(URL_OF_TESTS!, sql);

const databaseExists = async (name: string) => (await query(`select 1 from pg_database where datname = ${pg.escapeLiteral(name)}`)).length > 0;
const schemaExists = async (name: string) => (await query(`select 1 from pg_namespace where nspname = ${pg.escapeLiteral(name)}`)).length > 0;

/** The probe's one JSON line: where its test app worked. */
function probe(databaseUrl: string): Promise<{ database: string; schema: string; migrated: boolean }> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, ['--import', TSX, PROBE], { env: { ...process.env, DATABASE_URL: databaseUrl }, stdio: ['ignore', 'pipe', 'pipe'] });
    let out = '';
    let err = '';
    child.stdout.on('data', (chunk: Buffer) => (out += chunk.toString()));
    child.stderr.on('data', (chunk: Buffer) => (err += chunk.toString()));
    child.once('exit', (code) => {
      const line = out.trim().split('\n').pop() ?? '';
      if (code !== 0 || !line.startsWith('{')) reject(new Error(`probe exited with ${code}\n${out}\n${err}`));
      else resolve(JSON.parse(line));
    });
  });
}

postgresTest('a test app works in a copy of the migrated template, in the schema suite; the copy is dropped with the app', async () => {
  const t = await createTestApp();
  const [where] = (await t.db.raw(`select current_database() as database, current_schema() as schema`)).rows;
  assert.match(where.database, /^test_copy_\d+_[0-9a-f]{10}$/);
  assert.is(where.schema, 'suite');
  assert.is((await t.http.get('/api/health')).status, 200);
  assert.ok(await databaseExists(where.database));
  await t.close();
  assert.not.ok(await databaseExists(where.database), 'the copy is dropped on close');
});

postgresTest('a role without CREATEDB: a new migrated schema of the same database, dropped after; no database is made', async () => {
  const role = `test_nocreatedb_${randomBytes(4).toString('hex')}`;
  const [{ database }] = await query<{ database: string }>('select current_database() as database');
  const [{ superuser }] = await query<{ superuser: boolean }>(`select rolsuper as superuser from pg_roles where rolname = current_user`);
  // Making the role takes a superuser, as CI's PostgreSQL user is; another setup says so and skips.
  if (!superuser) return console.log('test-databases: the role of DATABASE_URL is not a superuser; the fallback test did not run');
  await query(`create role ${role} login nocreatedb`);
  try {
    await query(`grant create on database ${pg.escapeIdentifier(database)} to ${role}`);
    const roleUrl = new URL(URL_OF_TESTS!);
    roleUrl.username = role;
    roleUrl.password = '';
    const where = await probe(roleUrl.toString());
    assert.is(where.database, database, 'the database of DATABASE_URL');
    assert.match(where.schema, /^test_[0-9a-f]{12}$/);
    assert.ok(where.migrated, 'the schema was migrated');
    assert.not.ok(await schemaExists(where.schema), 'the schema is dropped with the app');
    const made = await query(`select datname from pg_database where datdba = (select oid from pg_roles where rolname = ${pg.escapeLiteral(role)})`);
    assert.equal(made, []);
  } finally {
    await query(`revoke create on database ${pg.escapeIdentifier(database)} from ${role}`);
    await query(`drop owned by ${role}`);
    await query(`drop role ${role}`);
  }
});

test.run();
