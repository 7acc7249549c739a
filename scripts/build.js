// `npm run build` (and `npm install`, through `prepare`): compiles the service's TypeScript into
// dist/ with tsc (tsconfig.build.json), copies the other files its code reads next to itself, and
// writes dist/build-stamp.json last, which the launcher of `npm start` checks against the sources.
// dist/ is emptied first, so that nothing of a removed source (a migration, say) is left in it.
// `--if-possible` (prepare): without TypeScript installed (`npm ci --omit=dev`), say so and stop
// without failing the install; dist/ must then come from a build made where it is installed.
import { spawnSync } from 'node:child_process';
import { copyFileSync, mkdirSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import path from 'node:path';
import { assets, buildInputs, DIST, ROOT, STAMP } from './dist.js';

let tsc;
try {
  tsc = createRequire(import.meta.url).resolve('typescript/bin/tsc');
} catch {
  const why = 'TypeScript is not installed (the devDependencies were left out), so dist/ was not built: build it with `npm ci && npm run build` and bring dist/ along.';
  console.error(why);
  process.exit(process.argv.includes('--if-possible') ? 0 : 1);
}

const began = Date.now();
const inputs = buildInputs();
// A source dated in the future (copied from a machine whose clock is ahead) would otherwise make
// every build look stale at once.
const startedAt = Math.max(Date.now(), ...inputs.map((name) => statSync(path.join(ROOT, name)).mtimeMs));
rmSync(DIST, { recursive: true, force: true });
const compiled = spawnSync(process.execPath, [tsc, '-p', path.join(ROOT, 'tsconfig.build.json')], { cwd: ROOT, stdio: 'inherit' });
if (compiled.status !== 0) {
  console.error('build: tsc failed, dist/ is incomplete (npm start refuses it).');
  process.exit(compiled.status ?? 1);
}
for (const name of assets(inputs)) {
  mkdirSync(path.dirname(path.join(DIST, name)), { recursive: true });
  copyFileSync(path.join(ROOT, name), path.join(DIST, name));
}
writeFileSync(STAMP, `${JSON.stringify({ startedAt, inputs }, null, 2)}\n`);
console.log(`build: dist/ compiled from ${inputs.length} files in ${((Date.now() - began) / 1000).toFixed(1)} s`);
