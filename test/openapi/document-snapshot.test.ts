// The OpenAPI document, byte for byte: GET /swg-json, written with JSON.stringify(doc, null, 2),
// must equal test/fixtures/openapi.snapshot.json. A refactoring that means to change no behaviour
// must leave the document as it was; a change to it is then a visible diff of the fixture, made
// on purpose. On a mismatch the test names the first JSON pointers that differ, not the whole diff.
//
// When the change is intended, rewrite the fixture and commit it with the change:
//   UPDATE_SNAPSHOT=1 npm test -- document-snapshot
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { createTestApp, type TestApp } from '../helpers/app.js';
import { jsonDifferences } from '../helpers/json-differences.js';

const SNAPSHOT = fileURLToPath(new URL('../fixtures/openapi.snapshot.json', import.meta.url));
const SHOWN = 'test/fixtures/openapi.snapshot.json';
/** Enough pointers to see where a change went, few enough to read. */
const MAX_POINTERS = 10;

let t: TestApp;
test.before(async () => {
  t = await createTestApp();
});
test.after(async () => {
  await t.close();
});

test('GET /swg-json is, byte for byte, the document of the snapshot', async () => {
  const res = await t.http.get('/swg-json');
  assert.is(res.status, 200);
  const served = `${JSON.stringify(res.body, null, 2)}\n`;
  if (process.env.UPDATE_SNAPSHOT === '1') {
    writeFileSync(SNAPSHOT, served);
    console.log(`\n  ${SHOWN} rewritten (${served.length} bytes)`);
    return;
  }
  assert.ok(existsSync(SNAPSHOT), `${SHOWN} is missing: UPDATE_SNAPSHOT=1 npm test -- document-snapshot writes it`);
  const expected = readFileSync(SNAPSHOT, 'utf8');
  if (served === expected) return;
  const found = jsonDifferences(JSON.parse(expected), res.body, MAX_POINTERS);
  const listed = found.map((d) => `    ${d.pointer || '(the root)'}: ${d.what}`).join('\n');
  assert.unreachable(
    `the OpenAPI document differs from ${SHOWN} at (first ${MAX_POINTERS} at most):\n${listed || '    (no pointer: the text differs only in layout)'}\n` +
      '  If the change is intended: UPDATE_SNAPSHOT=1 npm test -- document-snapshot, and commit the fixture.',
  );
});

test('a changed document is reported by the JSON pointers of its changes, the first ones only', async () => {
  const res = await t.http.get('/swg-json');
  const changed = structuredClone(res.body);
  const [firstPath] = Object.keys(changed.paths);
  changed.info.version = '0.0.0-changed';
  delete changed.paths[firstPath];
  changed.paths['/api/added'] = {};
  const escaped = firstPath.replace(/~/g, '~0').replace(/\//g, '~1');
  assert.equal(
    jsonDifferences(res.body, changed, MAX_POINTERS).map((d) => d.pointer),
    ['/info/version', `/paths/${escaped}`, '/paths/~1api~1added'],
  );
  // Same members, another order: the bytes differ, so the pointer of the reordered object is named.
  const reordered = { ...res.body, info: Object.fromEntries(Object.entries(res.body.info).reverse()) };
  assert.equal(jsonDifferences(res.body, reordered, MAX_POINTERS).map((d) => d.pointer), ['/info']);
  // Many changes: only the first few.
  const everyPath = structuredClone(res.body);
  for (const key of Object.keys(everyPath.paths)) everyPath.paths[key] = null;
  assert.is(jsonDifferences(res.body, everyPath, 3).length, 3);
});

test.run();
