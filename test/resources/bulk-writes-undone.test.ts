// A bulk write the database undoes (a deadlock's victim, 40P01, or a serialization failure, 40001)
// runs once more as a whole; undone again, it is the 503 to send again, with nothing written
// (test/helpers/undo-trigger.ts undoes the statements writing tags).
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { CONCURRENT_WRITE } from '../../engine/db/errors.js';
import { newTenant, type Session } from '../helpers/accounts.js';
import { createTestApp, type TestApp } from '../helpers/app.js';
import { assertError } from '../helpers/error-envelope.js';
import { undoTrigger, type UndoTrigger } from '../helpers/undo-trigger.js';

let t: TestApp;
let admin: Session;
let undo: UndoTrigger;
let seq = 0;
const unique = (prefix: string) => `${prefix}-${++seq}-${Date.now().toString(36)}`;

test.before(async () => {
  t = await createTestApp();
  admin = await newTenant(t);
  undo = await undoTrigger(t.db, 'tag');
});

test.after(async () => {
  await undo.drop();
  await t.close();
});

const namesIn = async (names: string[]) => (await t.db('tag').where({ tenantId: admin.tenantId }).whereIn('name', names).orderBy('name').pluck('name')) as string[];
const bulk = (method: 'post' | 'patch' | 'delete', body: unknown) => t.http[method]('/api/tags/bulk').set(admin.auth).send(body as object);

async function newTags(count: number): Promise<Array<{ id: string; name: string }>> {
  await undo.stop();
  const res = await bulk('post', Array.from({ length: count }, () => ({ name: unique('tag'), color: '#123456' })));
  assert.is(res.status, 201, JSON.stringify(res.body));
  return res.body.items;
}

for (const code of ['40P01', '40001'] as const) {
  test(`POST bulk undone once (${code}): run again as a whole, every item written once`, async () => {
    const names = [unique('a'), unique('b'), unique('c')];
    await undo.undoNext(1, code);
    const res = await bulk('post', names.map((name) => ({ name, color: '#123456' })));
    assert.is(res.status, 201, JSON.stringify(res.body));
    assert.equal(res.body.items.map((i: any) => i.name), names);
    assert.is(await undo.statementsSeen(), 2, 'the undone attempt and the one that wrote');
    assert.equal(await namesIn(names), [...names].sort(), 'each item once, none of the undone attempt');
  });

  test(`POST bulk undone twice (${code}): 503 to send again, nothing written; sent again, written`, async () => {
    const names = [unique('a'), unique('b')];
    await undo.undoNext(2, code);
    const body = names.map((name) => ({ name, color: '#123456' }));
    assertError(await bulk('post', body), 503, CONCURRENT_WRITE);
    assert.is(await undo.statementsSeen(), 2, 'tried twice, not more');
    assert.equal(await namesIn(names), [], 'nothing written');
    const again = await bulk('post', body);
    assert.is(again.status, 201, JSON.stringify(again.body));
    assert.equal(await namesIn(names), [...names].sort());
  });
}

test('PATCH bulk undone once: every change made; undone twice: 503 and nothing changed', async () => {
  const tags = await newTags(2);
  const renamed = tags.map(() => unique('renamed'));
  await undo.undoNext(1);
  const res = await bulk('patch', tags.map((tag, i) => ({ id: tag.id, name: renamed[i] })));
  assert.is(res.status, 200, JSON.stringify(res.body));
  assert.equal(res.body.items.map((i: any) => i.name), renamed);
  assert.equal(await namesIn(renamed), [...renamed].sort());

  const unchanged = tags.map(() => unique('unchanged'));
  await undo.undoNext(2);
  assertError(await bulk('patch', tags.map((tag, i) => ({ id: tag.id, name: unchanged[i] }))), 503, CONCURRENT_WRITE);
  assert.equal(await namesIn(unchanged), []);
  assert.equal(await namesIn(renamed), [...renamed].sort(), 'the earlier names stand');
});

test('DELETE bulk undone once: every id deleted; undone twice: 503 at once and nothing deleted', async () => {
  const gone = await newTags(2);
  await undo.undoNext(1, '40001');
  const res = await bulk('delete', { ids: gone.map((tag) => tag.id) });
  assert.is(res.status, 204, JSON.stringify(res.body));
  assert.equal(await namesIn(gone.map((tag) => tag.name)), []);

  const kept = await newTags(2);
  await undo.undoNext(2, '40001');
  assertError(await bulk('delete', { ids: kept.map((tag) => tag.id) }), 503, CONCURRENT_WRITE);
  assert.is(await undo.statementsSeen(), 2, 'no item-by-item hunt after the second undo');
  assert.equal(await namesIn(kept.map((tag) => tag.name)), kept.map((tag) => tag.name).sort());
});

test.run();
