// `npm test`: every test/**/*.test.ts through uvu in one process (ESM, top-level await), then a
// closing line "N passed, N failed" that CI reads. Extra arguments filter test files by pattern.
import { spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';

const root = fileURLToPath(new URL('..', import.meta.url));
const pattern = process.argv[2] ?? '\\.test\\.ts$';
const child = spawn(process.execPath, ['--import', 'tsx', 'node_modules/uvu/bin.js', 'test', pattern], {
  cwd: root,
  env: (({ FORCE_COLOR, ...rest }) => ({ ...rest, NO_COLOR: '1', NODE_DISABLE_COLORS: '1' }))(process.env),
  stdio: ['ignore', 'pipe', 'inherit'],
});

let output = '';
child.stdout.on('data', (chunk: Buffer) => {
  output += chunk.toString();
  process.stdout.write(chunk);
});

child.on('close', (code) => {
  const number = (label: string) => Number(new RegExp(`${label}:\\s+(\\d+)`).exec(output)?.[1] ?? NaN);
  const total = number('Total');
  const passed = number('Passed');
  const skipped = number('Skipped') || 0;
  if (Number.isNaN(total) || Number.isNaN(passed)) {
    console.log('0 passed, 1 failed');
    console.error('test run ended without a uvu summary');
    process.exit(code || 1);
  }
  const failed = Math.max(total - passed - skipped, code ? 1 : 0);
  console.log(`\n${passed} passed, ${failed} failed${skipped ? `, ${skipped} skipped` : ''}`);
  process.exit(code === 0 && failed === 0 ? 0 : 1);
});
