// What the build (scripts/build.js) compiles and copies into dist/, and whether dist/ is current:
// shared by the build, the launcher of `npm start` (scripts/start.js) and the tests. Plain
// JavaScript, because it runs before anything is compiled, without tsx.
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

export const ROOT = fileURLToPath(new URL('..', import.meta.url));
export const DIST = path.join(ROOT, 'dist');
/** What `npm start` runs. */
export const ENTRY = path.join(DIST, 'app', 'start.js');
/** Written last by a build: when it started and what it was built from. */
export const STAMP = path.join(DIST, 'build-stamp.json');
/** The folders of the service's code (tsconfig.build.json compiles the same). */
const SOURCE_DIRS = ['app', 'engine', 'auth', 'resources'];

/** Editors' swap and backup files are never sources. */
const ignored = (name) => name.startsWith('.') || name.endsWith('~');

/**
 * The files a build is made from, relative to the project, with `/` as the separator: the
 * TypeScript sources, package.json, and the other files the compiled code reads next to itself
 * (JSON schemas, a module's YAML), which the build copies. Not the definitions directly in
 * resources/ nor config/: the compiled service reads those from the repository, so editing them
 * needs no build.
 */
export function buildInputs() {
  const found = [];
  const walk = (relative) => {
    for (const entry of readdirSync(path.join(ROOT, relative), { withFileTypes: true })) {
      if (ignored(entry.name)) continue;
      const name = `${relative}/${entry.name}`;
      if (entry.isDirectory()) walk(name);
      else if (name.endsWith('.ts') || !/^resources\/[^/]+$/.test(name)) found.push(name);
    }
  };
  for (const dir of SOURCE_DIRS) if (existsSync(path.join(ROOT, dir))) walk(dir);
  // Compiled in too: the app reads its version from it (tsc writes dist/package.json).
  found.push('package.json');
  return found.sort();
}

/**
 * The project's migrations. One that a build did not compile (written since, by `npm run
 * db:migration`) needs no build: the compiled service applies it from its source (app/paths.ts,
 * MIGRATIONS_DIRS), so it is no reason to refuse dist/. One the build compiled that changed since,
 * or was removed, is: dist/ would apply the old one.
 */
const isMigration = (name) => /^resources\/migrations\/[^/]+\.ts$/.test(name);

/** The inputs that are copied as they are rather than compiled. */
export const assets = (inputs) => inputs.filter((name) => !name.endsWith('.ts') && name !== 'package.json');

/**
 * Why dist/ cannot be run as it is (one sentence that says what to do), or undefined when it is
 * current: it exists, and no source was changed, added or removed since the build began.
 */
export function distProblem() {
  const build = 'run `npm run build`';
  let stamp;
  try {
    stamp = JSON.parse(readFileSync(STAMP, 'utf8'));
  } catch {
    return existsSync(DIST) ? `dist/ holds no complete build: ${build}.` : `dist/ is missing (the sources are not compiled yet): ${build}.`;
  }
  if (!existsSync(ENTRY)) return `dist/app/start.js is missing: ${build}.`;
  const built = new Set(stamp.inputs);
  // A migration written since the build (npm run db:migration) is applied from its source.
  const inputs = buildInputs().filter((name) => built.has(name) || !isMigration(name));
  const added = inputs.find((name) => !built.has(name));
  const removed = stamp.inputs.find((name) => !inputs.includes(name));
  const changed = inputs.find((name) => statSync(path.join(ROOT, name)).mtimeMs > stamp.startedAt);
  const what = added ? `${added} was added` : removed ? `${removed} was removed` : changed ? `${changed} changed` : undefined;
  return what ? `dist/ is older than the sources (${what} since the last build): ${build}.` : undefined;
}
