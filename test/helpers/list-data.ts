// Bulk rows for the list-parameter suites, written straight to the database: list tests need
// dozens of records with chosen timestamps and links, and going through the API for each would
// test creation (covered elsewhere) and spend request budget instead of testing lists.
import { randomBytes, randomUUID } from 'node:crypto';
import type { TestApp } from './app.js';
import * as assert from 'uvu/assert';

export interface Owner {
  tenantId: string;
  organizationId: string;
}

export interface EmployeeRow {
  id: string;
  userId: string;
  firstName: string;
  lastName: string;
}

const suffix = () => randomBytes(4).toString('hex');

/** Users of the tenant with the EMPLOYEE role (the hash is not a real one: they never log in). */
export async function insertUsers(t: TestApp, owner: Owner, count: number, prefix = 'seed'): Promise<string[]> {
  if (!count) return [];
  const role = await t.db('role').select('id').where({ tenantId: owner.tenantId, name: 'EMPLOYEE' }).first();
  const rows = Array.from({ length: count }, (_, i) => ({
    tenantId: owner.tenantId,
    email: `${prefix}-${i}-${suffix()}@example.com`,
    firstName: prefix,
    lastName: String(i),
    name: `${prefix} ${i}`,
    hash: 'seeded-user-without-password',
    roleId: role.id,
  }));
  const inserted: Array<{ id: string }> = await t.db('user').insert(rows).returning('id');
  return inserted.map((r) => r.id);
}

/** Employees (each with its own user) of the owner's organization; fields default sensibly. */
export async function insertEmployees(t: TestApp, owner: Owner, rows: Array<Record<string, unknown>>): Promise<EmployeeRow[]> {
  const users = await insertUsers(t, owner, rows.length, 'emp');
  const records = rows.map((row, i) => ({
    id: randomUUID(),
    tenantId: owner.tenantId,
    organizationId: owner.organizationId,
    userId: users[i],
    firstName: `First${i}`,
    lastName: `Last${i}`,
    ...row,
  }));
  if (records.length) await t.db('employee').insert(records);
  return records.map(({ id, userId, firstName, lastName }) => ({ id, userId, firstName: String(firstName), lastName: String(lastName) }));
}

export async function insertTags(t: TestApp, owner: Owner, names: string[]): Promise<string[]> {
  if (!names.length) return [];
  const rows = names.map((name) => ({ id: randomUUID(), tenantId: owner.tenantId, organizationId: owner.organizationId, name, color: '#123456' }));
  await t.db('tag').insert(rows);
  return rows.map((r) => r.id);
}

export async function insertSkills(t: TestApp, owner: Owner, names: string[]): Promise<string[]> {
  if (!names.length) return [];
  const rows = names.map((name) => ({ id: randomUUID(), tenantId: owner.tenantId, organizationId: owner.organizationId, name }));
  await t.db('skill').insert(rows);
  return rows.map((r) => r.id);
}

/** Links through a many-to-many join table, e.g. link(t, 'tag_employee', 'employeeId', 'tagId', pairs). */
export async function link(t: TestApp, table: string, from: string, to: string, pairs: Array<[string, string]>) {
  if (pairs.length) await t.db(table).insert(pairs.map(([a, b]) => ({ [from]: a, [to]: b })));
}

/** ISO timestamps one minute apart, oldest first, from a fixed start (so order is known). */
export const minutesFrom = (start: string, count: number) =>
  Array.from({ length: count }, (_, i) => new Date(Date.parse(start) + i * 60_000).toISOString());

/** The ids of a list response, in order. */
export const ids = (body: { items: Array<{ id: string }> }) => body.items.map((item) => item.id);

/** Sorted copy, for comparing sets of ids. */
export const sorted = (values: string[]) => [...values].sort();

/** A 400 in the error envelope with exactly these messages (in this order). */
export function badRequestBody(messages: string[]) {
  return { statusCode: 400, message: messages, error: 'Bad Request' };
}

export const FORBIDDEN_BODY = { statusCode: 403, message: 'Forbidden resource', error: 'Forbidden' };

type Get = (query: string) => PromiseLike<{ status: number; body: any }>;

/** Assertions on a list endpoint, given how to ask it: the ids and total it answers, or its 400. */
export function listAssertions(get: Get) {
  return {
    async expectIds(query: string, expected: string[]) {
      const res = await get(query);
      assert.is(res.status, 200, `${query}: ${JSON.stringify(res.body)}`);
      assert.equal(sorted(ids(res.body)), sorted(expected), query);
      assert.is(res.body.total, expected.length, query);
    },
    async expect400(query: string, messages: string[]) {
      const res = await get(query);
      assert.is(res.status, 400, `${query}: ${JSON.stringify(res.body)}`);
      assert.equal(res.body, badRequestBody(messages), query);
    },
  };
}
