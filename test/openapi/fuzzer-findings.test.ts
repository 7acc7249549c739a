// What an independent schema-driven fuzzer found where the document and the server disagreed
// (issue 42), each pinned by the request that showed it: the answer the server gives, and the
// document agreeing with it (an answer fits its declared schema; a value the server refuses is
// one the document refuses too, and one it takes is one the document takes).
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { newTenant, type Session } from '../helpers/accounts.js';
import { createTestApp, type TestApp } from '../helpers/app.js';
import { OpenApiChecker, supertestAnswer } from '../helpers/openapi-checker.js';

let t: TestApp;
let doc: Record<string, any>;
let checker: OpenApiChecker;
let admin: Session & { organizationId: string };
let taskId: string;

test.before(async () => {
  t = await createTestApp();
  doc = t.openapi as Record<string, any>;
  checker = new OpenApiChecker(doc);
  admin = await newTenant(t, 'Findings');
  const task = await t.http.post('/api/task').set(admin.auth).send({ title: 'Pinned' });
  assert.is(task.status, 201, JSON.stringify(task.body));
  taskId = task.body.id;
});
test.after(async () => {
  await t?.close();
});

test('1. a relation narrowed by select[] is declared narrowed: id and what was asked, nothing else required', async () => {
  for (const path of [`/api/task/${taskId}`, '/api/task']) {
    const url = `${path}?select[]=creator.createdAt&relations[]=creator.role`;
    const res = await t.http.get(url).set(admin.auth);
    assert.is(res.status, 200, JSON.stringify(res.body));
    const record = path === '/api/task' ? res.body.items.find((item: any) => item.id === taskId) : res.body;
    assert.equal(Object.keys(record.creator).sort(), ['createdAt', 'id', 'role']);
    assert.is(record.creator.id, admin.userId);
    assert.equal(checker.checkResponse(supertestAnswer('GET', url, res)), []);
  }
  // Every relation of every Selected schema refers to its target's Selected schema, whichever level.
  for (const [name, schema] of Object.entries<any>(doc.components.schemas)) {
    if (!name.endsWith('Selected')) continue;
    for (const [property, value] of Object.entries<any>(schema.properties)) {
      const refs = JSON.stringify(value).match(/"#\/components\/schemas\/[A-Za-z]+"/g) ?? [];
      for (const ref of refs) assert.ok(ref.endsWith('Selected"'), `${name}.${property} refers to ${ref}, a whole record`);
    }
  }
});

test.run();
