// The committed client types (client/schema.d.ts) must be what `npm run client` generates from the
// document now: a change to a definition or route that alters the document, committed without
// regenerating, fails here, and the type check then holds every caller to the new document.
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { generatedSchema, SCHEMA_FILE } from '../../client/generate.js';
import { PROJECT_ROOT } from '../../app/paths.js';

/** Where two texts first part, as "line N: expected … found …", for the failure message. */
function firstDifference(committed: string, current: string): string {
  const a = committed.split('\n');
  const b = current.split('\n');
  const line = a.findIndex((text, i) => text !== b[i]);
  const at = line === -1 ? a.length : line;
  return `line ${at + 1}: committed ${JSON.stringify(a[at] ?? '(end of file)')}, generated now ${JSON.stringify(b[at] ?? '(end of file)')}`;
}

test('client/schema.d.ts is what `npm run client` generates from the document now', async () => {
  const committed = readFileSync(SCHEMA_FILE, 'utf8');
  const current = await generatedSchema();
  if (committed !== current) {
    assert.unreachable(`client/schema.d.ts is out of date with the OpenAPI document: run \`npm run client\` and commit the result (first difference at ${firstDifference(committed, current)})`);
  }
});

test('the type check (npx tsc --noEmit) covers the client and its tests', () => {
  const { include } = JSON.parse(readFileSync(path.join(PROJECT_ROOT, 'tsconfig.json'), 'utf8')) as { include: string[] };
  assert.ok(include.includes('client'), 'tsconfig.json includes client/');
  assert.ok(include.includes('test'), 'tsconfig.json includes test/');
});

test.run();
