// What a bench run shows: the table per size, the targets of the issue checked against the
// figures, and the chart (hand-written SVG: grouped bars, service next to raw server, per size).
import { writeFileSync } from 'node:fs';
import type { ExportFigures } from './export-memory.js';
import type { EmbeddedDurabilityResult } from './embedded-durability.js';
import type { LoadFigures } from './load.js';

export interface ScenarioResult {
  key: string;
  label: string;
  kind: 'read' | 'write';
  /** Measured for comparison only (a deep page by skip): no target applies. */
  reported?: boolean;
  /** A feature's cost: `raw` holds the service answering this scenario (the request without the feature). */
  against?: string;
  service?: LoadFigures;
  raw?: LoadFigures;
  /** Service req/s ÷ raw req/s (÷ the service without the feature, for a feature's cost). */
  ratio?: number;
  /** The best-SQL server (bench/best-sql/) on the same request, and service req/s ÷ its req/s. */
  bestSql?: LoadFigures;
  bestSqlRatio?: number;
  /** Why the best-SQL server was not measured: its answer differed from the service's. */
  bestSqlFailure?: string;
  /** The peer (BENCH_PEER, bench/peer/) on its counterpart of the request, and service req/s ÷ its req/s. */
  peer?: LoadFigures;
  peerRatio?: number;
  sql?: string[];
  failure?: string;
}

interface ProcessMemory {
  pid: number;
  role: string;
  rssMB: number;
}

export interface SizeResult {
  label: string;
  employees: number;
  schema: string;
  seeding: { reused: boolean; seconds: number };
  serviceProcesses: number;
  rawProcesses: number;
  bestSqlProcesses?: number;
  memoryIdle: { service: ProcessMemory[]; raw: ProcessMemory[]; bestSql?: ProcessMemory[] };
  scenarios: ScenarioResult[];
  export?: ExportFigures | { path: string; failure: string };
}

export interface Results {
  date: string;
  machine: Record<string, unknown>;
  settings: Record<string, unknown>;
  sizes: SizeResult[];
  /** Creates per second on the embedded database with and without durable commits (bench/embedded-durability.ts). */
  embeddedDurability?: EmbeddedDurabilityResult;
  seconds: number;
  targets?: Target[];
}

interface Target {
  check: string;
  value: number;
  limit: string;
  met: boolean;
}

const RATIO_TARGET = { read: 0.7, write: 0.6 };
/** A feature (an idempotency key) may cost the request at most 5 % of its throughput. */
const FEATURE_COST_TARGET = 0.95;
const limitOf = (s: ScenarioResult) => (s.against ? FEATURE_COST_TARGET : RATIO_TARGET[s.kind]);
const P99_GROWTH_LIMIT = 1.5;
/** The service answers at least ten times what the peer does, on every scenario both answer. */
const PEER_TARGET = 10;
const EXPORT_GROWTH_LIMIT_MB = 100;

export function targets(results: Results): Target[] {
  const list: Target[] = [];
  for (const size of results.sizes) {
    for (const s of size.scenarios) {
      if (s.reported) continue;
      const limit = limitOf(s);
      list.push({ check: `${size.label} ${s.key}: service/${s.against ? `${s.against} on the service` : 'raw'} req/s`, value: s.ratio ?? 0, limit: `>= ${limit}`, met: (s.ratio ?? 0) >= limit && !failed(s) });
      if (s.against) continue;
      if (s.bestSqlFailure) list.push({ check: `${size.label} ${s.key}: service/best SQL req/s`, value: 0, limit: `>= ${limit} (not measured: ${s.bestSqlFailure.slice(0, 80)})`, met: false });
      else if (s.bestSql) list.push({ check: `${size.label} ${s.key}: service/best SQL req/s`, value: s.bestSqlRatio ?? 0, limit: `>= ${limit}`, met: (s.bestSqlRatio ?? 0) >= limit && !failed(s) && !broken(s.bestSql) });
      if (s.peer) list.push({ check: `${size.label} ${s.key}: service/${results.settings.peer} req/s`, value: s.peerRatio ?? 0, limit: `>= ${PEER_TARGET}`, met: (s.peerRatio ?? 0) >= PEER_TARGET && !failed(s) && !broken(s.peer) });
    }
  }
  const small = results.sizes[0];
  const large = results.sizes[results.sizes.length - 1];
  if (small !== large) {
    for (const s of large.scenarios) {
      if (s.reported) continue;
      const before = small.scenarios.find((x) => x.key === s.key)?.service?.p99Ms;
      const after = s.service?.p99Ms;
      if (!before || after === undefined) continue;
      if (broken(s.service)) {
        list.push({ check: `${s.key}: service p99 ${large.label} / ${small.label}`, value: 0, limit: `<= ${P99_GROWTH_LIMIT} (no request completed at ${large.label})`, met: false });
        continue;
      }
      const growth = Math.round((after / before) * 100) / 100;
      list.push({ check: `${s.key}: service p99 ${large.label} / ${small.label}`, value: growth, limit: `<= ${P99_GROWTH_LIMIT}`, met: growth <= P99_GROWTH_LIMIT });
    }
  }
  for (const size of results.sizes) {
    if (!size.export) continue;
    const check = `${size.label} export RSS growth (MB)`;
    if ('failure' in size.export) list.push({ check, value: 0, limit: `< ${EXPORT_GROWTH_LIMIT_MB} (the download failed)`, met: false });
    else list.push({ check, value: size.export.growthMB, limit: `< ${EXPORT_GROWTH_LIMIT_MB}`, met: size.export.growthMB < EXPORT_GROWTH_LIMIT_MB });
  }
  return list;
}

/** Any refused or failed request, or a run in which no request completed, fails the scenario. */
const broken = (f: LoadFigures | undefined) => !f || f.requests === 0 || f.non2xx > 0 || f.errors > 0;
const failed = (s: ScenarioResult) => Boolean(s.failure) || broken(s.service) || broken(s.raw);

export function printResults(results: Results) {
  results.targets = targets(results);
  for (const size of results.sizes) {
    console.log(`\n${size.label} (${size.employees.toLocaleString('en')} employees; service ${size.serviceProcesses} process(es), raw ${size.rawProcesses}${size.bestSqlProcesses ? `, best SQL ${size.bestSqlProcesses}` : ''}; ${results.settings.connections} connections, ${results.settings.durationSeconds} s per server in two halves; ratios are the service's req/s over the other's)`);
    const peer = results.settings.peer as string | undefined;
    const header = ['scenario', 'service req/s', 'raw req/s', 'ratio', 'best SQL req/s', 'ratio', ...(peer ? [`${peer} req/s`, 'times'] : []), 'p50 ms', 'p99 ms', 'raw p99', 'best p99', 'peak RSS MB', 'bytes/resp', 'CPU µs/req', 'target', 'failures'];
    const peerCells = (s: ScenarioResult) => (!peer ? [] : s.peer ? [String(s.peer.requestsPerSecond), (s.peerRatio ?? 0).toFixed(1)] : ['-', '-']);
    const rows = size.scenarios.map((s) => {
      if (!s.service || !s.raw) return [s.label, '-', '-', '-', '-', '-', ...peerCells(s), '-', '-', '-', '-', '-', '-', '-', 'NOT MET', (s.failure ?? '').split('\n')[0].slice(0, 100)];
      const limit = limitOf(s);
      const problem = (name: string, f: LoadFigures) => (f.requests === 0 ? `${name}: no request completed` : f.non2xx || f.errors ? `${name}: ${f.non2xx} non-2xx ${f.errors} errors` : '');
      const failures = [problem('service', s.service), problem(s.against ? 'without' : 'raw', s.raw), s.bestSql ? problem('best SQL', s.bestSql) : '', s.peer ? problem(peer!, s.peer) : ''].filter(Boolean).join('; ');
      const best = s.bestSql;
      const met = s.ratio! >= limit && (!best || s.bestSqlRatio! >= limit) && !s.bestSqlFailure;
      return [
        s.against ? `${s.label} (raw: the same without it)` : s.label,
        String(s.service.requestsPerSecond),
        String(s.raw.requestsPerSecond),
        s.ratio!.toFixed(2),
        best ? String(best.requestsPerSecond) : s.bestSqlFailure ? 'differs' : '-',
        best ? s.bestSqlRatio!.toFixed(2) : '-',
        ...peerCells(s),
        String(s.service.p50Ms),
        String(s.service.p99Ms),
        String(s.raw.p99Ms),
        best ? String(best.p99Ms) : '-',
        `${s.service.peakRssMB} / ${s.raw.peakRssMB}${best ? ` / ${best.peakRssMB}` : ''}`,
        `${s.service.bytesPerResponse} / ${s.raw.bytesPerResponse}${best ? ` / ${best.bytesPerResponse}` : ''}`,
        `${s.service.cpuUsPerRequest} / ${s.raw.cpuUsPerRequest}${best ? ` / ${best.cpuUsPerRequest}` : ''}`,
        s.reported ? 'reported' : `${met && !failures ? 'met' : 'NOT MET'} (>= ${limit})`,
        failures,
      ];
    });
    const widths = header.map((h, i) => Math.max(h.length, ...rows.map((r) => r[i].length)));
    const line = (cells: string[]) => cells.map((c, i) => (i === 0 ? c.padEnd(widths[i]) : c.padStart(widths[i]))).join('  ');
    console.log(line(header));
    for (const row of rows) console.log(line(row));
  }
  console.log('\ntargets:');
  for (const t of results.targets) console.log(`  ${t.met ? 'met    ' : 'NOT MET'}  ${t.check.padEnd(48)} ${String(t.value).padStart(7)}  (${t.limit})`);
}

const escapeXml = (text: string) => text.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;');

/** Grouped bars per size: service and raw req/s per scenario, the ratio above each pair. */
export function chart(results: Results): string {
  const SERVICE = '#2563eb';
  const RAW = '#9ca3af';
  const BEST = '#4b5563';
  const width = 1280;
  const panelHeight = 300;
  const top = 70;
  const left = 70;
  const plotWidth = width - left - 20;
  const plotHeight = 190;
  const out: string[] = [];
  const height = top + results.sizes.length * panelHeight;
  out.push(`<svg xmlns="http://www.w3.org/2000/svg" width="${width}" height="${height}" viewBox="0 0 ${width} ${height}" font-family="Helvetica, Arial, sans-serif" font-size="12">`);
  out.push(`<rect width="${width}" height="${height}" fill="#ffffff"/>`);
  out.push(`<text x="${left}" y="24" font-size="16" font-weight="bold" fill="#111827">Requests per second: service, raw node:http + pg running the same SQL, and the best SQL</text>`);
  out.push(`<text x="${left}" y="44" fill="#374151">${escapeXml(`${results.machine.cpus} CPUs, Node ${results.machine.node}, PostgreSQL ${String(results.machine.postgres).split(' ')[0]}; ${results.settings.connections} connections, ${results.settings.durationSeconds} s per run; percentages: service / raw (service / best SQL)`)}</text>`);
  out.push(`<rect x="${width - 330}" y="52" width="12" height="12" fill="${SERVICE}"/><text x="${width - 313}" y="62" fill="#111827">service</text>`);
  out.push(`<rect x="${width - 250}" y="52" width="12" height="12" fill="${RAW}"/><text x="${width - 233}" y="62" fill="#111827">raw server</text>`);
  out.push(`<rect x="${width - 150}" y="52" width="12" height="12" fill="${BEST}"/><text x="${width - 133}" y="62" fill="#111827">best SQL</text>`);
  results.sizes.forEach((size, p) => {
    const y0 = top + p * panelHeight + 30;
    const base = y0 + plotHeight;
    const max = Math.max(1, ...size.scenarios.flatMap((s) => [s.service?.requestsPerSecond ?? 0, s.raw?.requestsPerSecond ?? 0, s.bestSql?.requestsPerSecond ?? 0]));
    const step = niceStep(max);
    // Headroom above the tallest bar for its ratio label.
    const scaleMax = Math.ceil((max * 1.12) / step) * step;
    out.push(`<text x="${left}" y="${y0 - 12}" font-size="14" font-weight="bold" fill="#111827">${escapeXml(`${size.employees.toLocaleString('en')} employees`)}<tspan dx="10" font-size="12" font-weight="normal" fill="#374151">${escapeXml(`service ${size.serviceProcesses} process(es), raw server ${size.rawProcesses}`)}</tspan></text>`);
    for (let v = 0; v <= scaleMax; v += step) {
      const y = base - (v / scaleMax) * plotHeight;
      out.push(`<line x1="${left}" x2="${left + plotWidth}" y1="${y}" y2="${y}" stroke="#e5e7eb"/>`);
      out.push(`<text x="${left - 6}" y="${y + 4}" text-anchor="end" fill="#374151">${v.toLocaleString('en')}</text>`);
    }
    const group = plotWidth / size.scenarios.length;
    const bar = Math.min(30, group / 4);
    size.scenarios.forEach((s, i) => {
      const x = left + i * group + group / 2;
      const bars: Array<[number | undefined, string, number]> = [[s.service?.requestsPerSecond, SERVICE, x - 1.5 * bar - 2], [s.raw?.requestsPerSecond, RAW, x - bar / 2], [s.bestSql?.requestsPerSecond, BEST, x + bar / 2 + 2]];
      for (const [value, color, bx] of bars) {
        const h = ((value ?? 0) / scaleMax) * plotHeight;
        out.push(`<rect x="${bx}" y="${base - h}" width="${bar}" height="${h}" fill="${color}"><title>${value ?? 0} req/s</title></rect>`);
      }
      const tallest = Math.max(s.service?.requestsPerSecond ?? 0, s.raw?.requestsPerSecond ?? 0, s.bestSql?.requestsPerSecond ?? 0);
      const label = s.ratio === undefined ? 'not measured' : `${Math.round(s.ratio * 100)} %${s.bestSqlRatio === undefined ? '' : ` (${Math.round(s.bestSqlRatio * 100)} %)`}`;
      const met = s.ratio !== undefined && s.ratio >= limitOf(s) && (s.bestSqlRatio === undefined || s.bestSqlRatio >= limitOf(s));
      const colour = s.reported ? '#6b7280' : met ? '#047857' : '#b91c1c';
      out.push(`<text x="${x}" y="${base - (tallest / scaleMax) * plotHeight - 6}" text-anchor="middle" font-weight="bold" fill="${colour}">${label}</text>`);
      out.push(`<text x="${x}" y="${base + 16}" text-anchor="middle" fill="#111827">${escapeXml(s.key)}</text>`);
      out.push(`<text x="${x}" y="${base + 30}" text-anchor="middle" fill="#6b7280">${s.reported ? `${s.kind} (reported)` : s.against ? `vs ${escapeXml(s.against)} (target ${Math.round(FEATURE_COST_TARGET * 100)} %)` : `${s.kind} (target ${Math.round(RATIO_TARGET[s.kind] * 100)} %)`}</text>`);
    });
    out.push(`<line x1="${left}" x2="${left + plotWidth}" y1="${base}" y2="${base}" stroke="#111827"/>`);
  });
  out.push('</svg>');
  return `${out.join('\n')}\n`;
}

function niceStep(max: number): number {
  const rough = max / 5;
  const power = 10 ** Math.floor(Math.log10(rough));
  return [1, 2, 5, 10].map((m) => m * power).find((s) => s >= rough)!;
}

export function writeChart(file: string, results: Results) {
  writeFileSync(file, chart(results));
}
