// `node --import tsx bench/profile-top.ts <file.cpuprofile> [N] [--from=S]`: where a V8 CPU profile
// (BENCH_CPU_PROF) spends its time: self time by package or folder, the N functions with the most
// self time, and the N with the most total time (their own and that of everything they call),
// each with its share of the busy (not idle) time and its source. --from=S leaves out the first
// S seconds of the process's life, so that start-up (module loading, schema compiling) does not
// weigh on the figures of the measured load.
import { readFileSync } from 'node:fs';

interface Node {
  id: number;
  callFrame: { functionName: string; url: string; lineNumber: number };
  hitCount: number;
  children?: number[];
}

const args = process.argv.slice(2);
const from = Number(args.find((a) => a.startsWith('--from='))?.slice('--from='.length) ?? 0);
const [file, count = '25'] = args.filter((a) => !a.startsWith('--'));
if (!file) {
  console.error('usage: node --import tsx bench/profile-top.ts <file.cpuprofile> [N]');
  process.exit(2);
}
const profile: { nodes: Node[]; samples?: number[]; timeDeltas?: number[] } = JSON.parse(readFileSync(file, 'utf8'));
const byId = new Map(profile.nodes.map((n) => [n.id, n]));
if (from > 0 && profile.samples && profile.timeDeltas) {
  // Counts again from the samples taken after `from` seconds (time deltas are in microseconds).
  for (const node of profile.nodes) node.hitCount = 0;
  let at = 0;
  profile.samples.forEach((id, i) => {
    at += profile.timeDeltas![i];
    if (at >= from * 1e6) byId.get(id)!.hitCount += 1;
  });
}
const label = (n: Node) => {
  const { functionName, url, lineNumber } = n.callFrame;
  const where = url.replace(/^file:\/\//, '').replace(/^.*node_modules\//, '~/').replace(process.cwd() + '/', '');
  return `${functionName || '(anonymous)'} ${where}${where ? `:${lineNumber + 1}` : ''}`;
};

/** Where a function lives, coarsely: its npm package, the project's folder, or Node's own code. */
const area = (n: Node) => {
  const url = n.callFrame.url.replace(/^file:\/\//, '');
  if (!url) return n.callFrame.functionName.startsWith('(') ? n.callFrame.functionName : '(native)';
  const pkg = /node_modules\/((?:@[^/]+\/)?[^/]+)/.exec(url);
  if (pkg) return pkg[1];
  if (url.startsWith('node:')) return url.split('/').slice(0, 2).join('/').replace(/\.js$/, '');
  return url.replace(process.cwd() + '/', '').split('/').slice(0, 2).join('/');
};
const byArea = new Map<string, number>();
const self = new Map<string, number>();
const total = new Map<string, number>();
let all = 0;
// Depth-first with the labels on the path, so that a recursive function counts once per sample.
const walk = (id: number, path: Set<string>) => {
  const node = byId.get(id)!;
  const name = label(node);
  all += node.hitCount;
  self.set(name, (self.get(name) ?? 0) + node.hitCount);
  byArea.set(area(node), (byArea.get(area(node)) ?? 0) + node.hitCount);
  const inner = new Set(path).add(name);
  let below = node.hitCount;
  for (const child of node.children ?? []) below += walk(child, inner);
  if (!path.has(name)) total.set(name, (total.get(name) ?? 0) + below);
  return below;
};
walk(profile.nodes[0].id, new Set());

const print = (title: string, figures: Map<string, number>) => {
  console.log(`\n${title}`);
  for (const [name, hits] of [...figures].sort((a, b) => b[1] - a[1]).slice(0, Number(count))) {
    console.log(`${((hits / all) * 100).toFixed(1).padStart(5)} %  ${name}`);
  }
};
const idle = self.get('(idle) ') ?? 0;
console.log(`${all} samples, ${((idle / all) * 100).toFixed(1)} % idle; shares below are of the busy time`);
for (const figures of [self, byArea, total]) ['(idle) ', '(idle)', '(root) '].forEach((name) => figures.delete(name));
all -= idle;
print('self time by package or folder', byArea);
print('self time', self);
print('total time', total);
