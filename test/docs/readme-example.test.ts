// docs/definition-format.md "Adding a resource", followed as written: the example's definition
// (step 1) and migration (step 2) are read from the page itself, so the page and this test cannot
// drift apart, and written into a folder of their own, as an EXTRA_RESOURCES_DIR would hold them.
// The app built with it must agree with its migration (the schema check of step 4) and pass the generic CRUD
// suite (test/helpers/generic-crud.ts), like any resource of the project. A reader who follows
// step 1 literally puts the same definition in resources/: then the project's copy is the one
// tested here (a second copy beside it would be a duplicate name), and every suite covers it.
import { mkdtempSync, mkdirSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { parse } from 'yaml';
import { PROJECT_ROOT, RESOURCES_DIR } from '../../app/paths.js';
import { loadDefinitionDir } from '../../engine/resource/load.js';
import { diffTables } from '../../engine/schema/diff.js';
import { expectedSchema } from '../../engine/schema/expected.js';
import { genericCrudTests } from '../helpers/generic-crud.js';

const PAGE = readFileSync(path.join(PROJECT_ROOT, 'docs', 'definition-format.md'), 'utf8');
const SECTION = PAGE.slice(PAGE.indexOf('## Adding a resource'), PAGE.indexOf('\n## The format'));
const HELPERS = pathToFileURL(path.join(PROJECT_ROOT, 'resources', 'migration-helpers.ts')).href;

/** The section's first code block of a language, without the list item's indentation. */
function block(language: string): string {
  const found = new RegExp('\\n( *)```' + language + '\\n([\\s\\S]*?)\\n\\1```').exec(SECTION);
  if (!found) throw new Error(`docs/definition-format.md "Adding a resource" has no ${language} block`);
  const indent = found[1].length;
  return found[2].split('\n').map((line) => line.slice(Math.min(indent, line.length - line.trimStart().length))).join('\n') + '\n';
}

const definitionText = block('yaml');
// The migration imports the helpers from resources/, as it would from resources/migrations/.
const migrationText = block('ts').replace("'../migration-helpers.js'", `'${HELPERS}'`);
const name: string = parse(definitionText).name;
const inProject = loadDefinitionDir(RESOURCES_DIR).some((source) => source.definition.name === name);

let folder: string | undefined;
if (!inProject) {
  folder = mkdtempSync(path.join(tmpdir(), 'readme-example-'));
  mkdirSync(path.join(folder, 'migrations'));
  writeFileSync(path.join(folder, `${name}.yaml`), definitionText);
  writeFileSync(path.join(folder, 'migrations', `29990101000000_${name}.ts`), migrationText);
}

const suite = genericCrudTests(folder ? { resourceDirs: [RESOURCES_DIR, folder], migrationDirs: [path.join(folder, 'migrations')], only: [name] } : { only: [name] });

test.after(() => {
  if (folder) rmSync(folder, { recursive: true, force: true });
});

test(`README example ${name}: its migration and its definition agree (the schema check)`, async () => {
  const t = suite.app();
  const resource = t.engine.registry.get(name);
  assert.ok(resource, `${name} is a resource of the app`);
  const own = new Set([resource.table, ...[...resource.relations.values()].flatMap((r) => (r.through ? [r.through.table] : []))]);
  const tables = expectedSchema(t.engine.registry, { tenantTable: 'tenant' }).filter((table) => own.has(table.name));
  assert.equal([...own].sort(), tables.map((table) => table.name).sort());
  assert.equal((await diffTables(t.db, tables)).map((d) => d.message), []);
});

test(`README example ${name}: the page's steps and the migration it shows name it, and nothing of the tests does`, () => {
  assert.match(SECTION, `1. **Describe it** in \`resources/${name}.yaml\``);
  assert.match(SECTION, `npm run db:migration -- ${name}`);
  assert.match(migrationText, `await knex.schema.createTable('${name.replace(/-/g, '_')}', (t) => {`);
  // A test definition of the same name would clash with the example once a reader adds it.
  const testDir = fileURLToPath(new URL('..', import.meta.url));
  const own = path.basename(fileURLToPath(import.meta.url));
  const clashes: string[] = [];
  const walk = (dir: string) => {
    for (const entry of readdirSync(dir)) {
      const full = path.join(dir, entry);
      if (statSync(full).isDirectory()) walk(full);
      else if (entry !== own && /\.(ts|yaml)$/.test(entry) && new RegExp(`^\\s*name:\\s*${name}\\s*(#.*)?$`, 'm').test(readFileSync(full, 'utf8'))) clashes.push(path.relative(testDir, full));
    }
  };
  walk(testDir);
  assert.equal(clashes, [], `test definitions named ${name}`);
});

test.run();
