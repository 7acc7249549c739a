// README "A first session", as a new user follows it: the curl commands of its two blocks are
// read from README.md itself and sent in order (so the README and this test cannot drift apart).
// Right after registering, with no organization, the shortest create bodies work: the event
// type and the task belong to the whole tenant (organizationId null). An employee or a time log
// needs an organization and answers the README's one-sentence 400; once the tenant has one
// organization, they land in it. An upload works at once too.
import { randomUUID } from 'node:crypto';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { PROJECT_ROOT } from '../../app/paths.js';
import { createTestApp, type TestApp } from '../helpers/app.js';
import { assertError } from '../helpers/error-envelope.js';
import { png } from '../helpers/images.js';

interface Command {
  method: 'GET' | 'POST';
  path: string;
  body?: unknown;
  /** Sends the token of the login before it. */
  signed: boolean;
  /** Its answer's token is $TOKEN from then on. */
  setsToken: boolean;
}

const README = readFileSync(path.join(PROJECT_ROOT, 'README.md'), 'utf8');
const SECTION = README.slice(README.indexOf('A first session'), README.indexOf('\n## ', README.indexOf('A first session')));

/** The section's `sh` blocks, each as its curl commands (lines continued with a backslash joined). */
function blocks(): Command[][] {
  // The first two: the third (employees) splices ids into its bodies, which this test does itself.
  const found = [...SECTION.matchAll(/```sh\n([\s\S]*?)```/g)].slice(0, 2).map((m) => m[1].replace(/\\\n\s*/g, ' ').split('\n').filter((l) => l.includes('curl ')));
  return found.map((lines) =>
    lines.map((line) => {
      const url = /localhost:3000(\/[^\s'"]*)/.exec(line);
      if (!url) throw new Error(`a curl command of the README without a URL: ${line}`);
      const data = /-d '([^']*)'/.exec(line);
      return {
        method: data ? 'POST' : 'GET',
        path: url[1],
        body: data ? JSON.parse(data[1]) : undefined,
        signed: line.includes('Bearer $TOKEN'),
        setsToken: /^TOKEN=\$\(curl /.test(line.trim()),
      };
    }),
  );
}

/** The README's sentence of the 400 that a create needing an organization answers, as one line. */
const readmeSentence = () => /answers 400 `([^`]+)`/.exec(SECTION)![1].replace(/\s+/g, ' ');

let t: TestApp;
let token = '';

test.before(async () => {
  t = await createTestApp();
});
test.after(async () => {
  await t?.close();
});

async function send(command: Command) {
  const req = command.method === 'POST' ? t.http.post(command.path).send(command.body as object) : t.http.get(command.path);
  if (command.signed) req.set('Authorization', `Bearer ${token}`);
  const res = await req;
  if (command.setsToken) token = res.body.token;
  return res;
}

const [atOnce, withOrganization] = blocks();
const auth = () => ({ Authorization: `Bearer ${token}` });

test("the README's first block: register, sign in, then the shortest event type and task bodies, at once", async () => {
  assert.equal(
    atOnce.map((c) => `${c.method} ${c.path}`),
    ['POST /api/auth/register', 'POST /api/auth/login', 'POST /api/event-type', 'POST /api/task', 'GET /api/event-type'],
  );
  // The shortest bodies: an event type with its five fields, a task with a title.
  assert.equal(Object.keys(atOnce[2].body as object).sort(), ['description', 'duration', 'durationUnit', 'isActive', 'title']);
  assert.equal(Object.keys(atOnce[3].body as object), ['title']);

  const registered = await send(atOnce[0]);
  assert.is(registered.status, 201, JSON.stringify(registered.body));
  const tenantId = registered.body.tenantId;
  const signedIn = await send(atOnce[1]);
  assert.is(signedIn.status, 200, JSON.stringify(signedIn.body));
  assert.is((await t.db('organization').where({ tenantId })).length, 0, 'a new tenant has no organization');

  const created = await send(atOnce[2]);
  assert.is(created.status, 201, JSON.stringify(created.body));
  assert.equal({ ...created.body, id: undefined, createdAt: undefined, updatedAt: undefined }, {
    ...(atOnce[2].body as object),
    id: undefined,
    createdAt: undefined,
    updatedAt: undefined,
    tenantId,
    organizationId: null,
    employeeId: null,
  });
  const eventRow = await t.db('event_type').where({ id: created.body.id }).first();
  assert.equal([eventRow.tenantId, eventRow.organizationId, eventRow.title], [tenantId, null, 'Intro call']);

  const made = await send(atOnce[3]);
  assert.is(made.status, 201, JSON.stringify(made.body));
  assert.equal([made.body.title, made.body.organizationId, made.body.tenantId, made.body.status], ['Write the first report', null, tenantId, 'open']);
  assert.is(made.body.creatorId, registered.body.id);
  const taskRow = await t.db('task').where({ id: made.body.id }).first();
  assert.equal([taskRow.tenantId, taskRow.organizationId, taskRow.creatorId], [tenantId, null, registered.body.id]);

  const listed = await send(atOnce[4]);
  assert.is(listed.status, 200, JSON.stringify(listed.body));
  assert.equal([listed.body.total, listed.body.items.map((i: { id: string }) => i.id)], [1, [created.body.id]]);
  assert.equal(listed.body.items[0], created.body);
});

test('an image uploads at once too, as an image of the whole tenant', async () => {
  const res = await t.http.post('/api/image-asset/upload').set(auth()).attach('file', png(4, 3), { filename: 'logo.png', contentType: 'image/png' });
  assert.is(res.status, 201, JSON.stringify(res.body));
  assert.is(res.body.organizationId, null);
  assert.is((await t.db('image_asset').where({ id: res.body.id }).first()).organizationId, null);
});

test("an employee or a time log needs an organization: the README's one-sentence 400, and nothing written", async () => {
  const me = await t.http.get('/api/user/me').set(auth());
  const sentence = readmeSentence();
  const employee = await t.http.post('/api/employee').set(auth()).send({ firstName: 'Ada', lastName: 'Lovelace', userId: me.body.id });
  assertError(employee, 400, sentence);
  assert.equal(employee.body.message, [sentence]);
  const timeLog = await t.http.post('/api/time-log').set(auth()).send({ employeeId: randomUUID(), startedAt: '2026-01-05T09:00:00Z' });
  assert.equal([timeLog.status, timeLog.body.message], [400, [sentence]]);
  const tenantId = me.body.tenantId;
  assert.equal([(await t.db('employee').where({ tenantId })).length, (await t.db('time_log').where({ tenantId })).length], [0, 0]);
});

test("the README's second block: an organization, then an employee's create without organizationId lands in it", async () => {
  assert.equal(withOrganization.map((c) => `${c.method} ${c.path}`), [
    'POST /api/organization',
    'GET /api/organization?take=5&order[name]=ASC',
    'GET /api/organization?where[name][ilike]=analytical%25&where[or][0][currency]=GBP&where[or][1][currency][in]=EUR,USD',
  ]);
  const organization = await send(withOrganization[0]);
  assert.is(organization.status, 201, JSON.stringify(organization.body));
  for (const list of withOrganization.slice(1)) {
    const listed = await send(list);
    assert.is(listed.status, 200, JSON.stringify(listed.body));
    assert.equal(listed.body.items.map((i: { id: string }) => i.id), [organization.body.id]);
  }

  const me = await t.http.get('/api/user/me').set(auth());
  const employee = await t.http.post('/api/employee').set(auth()).send({ firstName: 'Ada', lastName: 'Lovelace', userId: me.body.id });
  assert.is(employee.status, 201, JSON.stringify(employee.body));
  assert.is(employee.body.organizationId, organization.body.id);
  // The records made before stay the tenant's; where[organizationId]=null finds them.
  const tenantWide = await t.http.get('/api/task').query({ 'where[organizationId]': 'null' }).set(auth());
  assert.equal([tenantWide.status, tenantWide.body.total], [200, 1]);
  assert.is(tenantWide.body.items[0].title, 'Write the first report');
});

test.run();
