// One measured load of one scenario on one server: autocannon in this process, a warm-up whose
// figures are dropped, then the measured run while the RSS of every process of the server is
// sampled.
import { randomUUID } from 'node:crypto';
import autocannon from 'autocannon';
import { cpuSecondsOf, RssSampler } from './lib/processes.js';
import { pathFor, type Scenario } from './scenarios.js';

export interface LoadSettings {
  connections: number;
  durationSeconds: number;
  warmupSeconds: number;
  rssSampleMs: number;
}

export interface LoadFigures {
  requestsPerSecond: number;
  p50Ms: number;
  p99Ms: number;
  requests: number;
  errors: number;
  non2xx: number;
  /** Status codes other than the expected one, with their counts. */
  unexpected: Record<string, number>;
  bytesPerResponse: number;
  /** CPU time of the server's processes per request, in µs (its database's is not counted). */
  cpuUsPerRequest: number;
  /** Per process of the server: RSS when the measured run started and its peak during it. */
  memory: Array<{ pid: number; beforeMB: number; peakMB: number }>;
  peakRssMB: number;
}

function options(url: string, scenario: Scenario, token: string, ids: string[], connections: number, duration: number) {
  let next = 0;
  const headers: Record<string, string> = { authorization: `Bearer ${token}` };
  if (scenario.body !== undefined) headers['content-type'] = 'application/json';
  const rotates = scenario.path.includes('{id}');
  const unique = scenario.uniqueHeader;
  const setupRequest =
    rotates || unique
      ? (request: any) => ({
          ...request,
          ...(rotates ? { path: pathFor(scenario, ids[next++ % ids.length]) } : {}),
          ...(unique ? { headers: { ...request.headers, [unique]: randomUUID() } } : {}),
        })
      : undefined;
  return {
    url,
    connections,
    duration,
    timeout: 30,
    requests: [
      {
        method: scenario.method,
        path: pathFor(scenario, ids[0]),
        headers,
        ...(scenario.body === undefined ? {} : { body: JSON.stringify(scenario.body) }),
        ...(setupRequest ? { setupRequest } : {}),
      },
    ],
  };
}

/** One stretch of load on one server, with the RSS of its processes sampled meanwhile. */
async function slice(url: string, pid: number, scenario: Scenario, token: string, ids: string[], settings: LoadSettings, seconds: number): Promise<LoadFigures & { seconds: number }> {
  const sampler = new RssSampler(pid, settings.rssSampleMs);
  const cpuBefore = cpuSecondsOf(pid);
  let result: Awaited<ReturnType<typeof autocannon>>;
  try {
    result = await autocannon(options(url, scenario, token, ids, settings.connections, seconds));
  } finally {
    sampler.stop();
  }
  const cpuSeconds = cpuSecondsOf(pid) - cpuBefore;
  const unexpected: Record<string, number> = {};
  for (const [code, { count }] of Object.entries(result.statusCodeStats ?? {})) if (Number(code) !== scenario.status) unexpected[code] = count;
  const requests = result.requests.total;
  const memory = sampler.report();
  return {
    seconds: result.duration,
    requestsPerSecond: Math.round(requests / result.duration),
    p50Ms: result.latency.p50,
    p99Ms: result.latency.p99,
    requests,
    errors: result.errors + result.timeouts,
    non2xx: result.non2xx,
    unexpected,
    bytesPerResponse: requests ? Math.round(result.throughput.total / requests) : 0,
    cpuUsPerRequest: requests ? Math.round((cpuSeconds * 1e6) / requests) : 0,
    memory,
    peakRssMB: Math.round(memory.reduce((sum, p) => sum + p.peakMB, 0)),
  };
}

/**
 * Two halves of one server's measurement as one: rates over the whole time, p50 weighted by
 * requests, p99 the higher of the two (the halves' histograms are not merged), each process's
 * highest RSS.
 */
function combine(halves: Array<LoadFigures & { seconds: number }>): LoadFigures {
  const requests = halves.reduce((sum, h) => sum + h.requests, 0);
  const seconds = halves.reduce((sum, h) => sum + h.seconds, 0);
  const unexpected: Record<string, number> = {};
  for (const h of halves) for (const [code, count] of Object.entries(h.unexpected)) unexpected[code] = (unexpected[code] ?? 0) + count;
  const memory = new Map<number, { pid: number; beforeMB: number; peakMB: number }>();
  for (const h of halves) {
    for (const p of h.memory) {
      const known = memory.get(p.pid);
      memory.set(p.pid, known ? { ...known, peakMB: Math.max(known.peakMB, p.peakMB) } : p);
    }
  }
  const perProcess = [...memory.values()];
  return {
    requestsPerSecond: Math.round(requests / seconds),
    p50Ms: requests ? Math.round((halves.reduce((sum, h) => sum + h.p50Ms * h.requests, 0) / requests) * 100) / 100 : 0,
    p99Ms: Math.max(...halves.map((h) => h.p99Ms)),
    requests,
    errors: halves.reduce((sum, h) => sum + h.errors, 0),
    non2xx: halves.reduce((sum, h) => sum + h.non2xx, 0),
    unexpected,
    bytesPerResponse: requests ? Math.round(halves.reduce((sum, h) => sum + h.bytesPerResponse * h.requests, 0) / requests) : 0,
    cpuUsPerRequest: requests ? Math.round(halves.reduce((sum, h) => sum + h.cpuUsPerRequest * h.requests, 0) / requests) : 0,
    memory: perProcess,
    peakRssMB: Math.round(perProcess.reduce((sum, p) => sum + p.peakMB, 0)),
  };
}

export interface Server {
  url: string;
  pid: number;
}

/** What one side of a comparison runs: a scenario on a server. */
export interface Side {
  server: Server;
  scenario: Scenario;
  /** Its own token and rotation of ids (the peer's), where the server is not one of ours. */
  token?: string;
  ids?: string[];
}

/**
 * Sides compared: each is warmed up (figures dropped), then measured in two halves in the order
 * first … last, last … first: a load on the machine that grows or fades during the measurement
 * weighs on all alike. `settle` (see lib/pg-activity.ts) runs before each stretch. The figures
 * come back in the order of `sides`.
 */
export async function measureSides(sides: Side[], token: string, ids: string[], settings: LoadSettings, settle: () => Promise<unknown>): Promise<LoadFigures[]> {
  for (const side of sides) {
    if (settings.warmupSeconds <= 0) continue;
    await settle();
    await autocannon(options(side.server.url, side.scenario, side.token ?? token, side.ids ?? ids, settings.connections, settings.warmupSeconds));
  }
  const half = settings.durationSeconds / 2;
  const halves = new Map<Side, Array<LoadFigures & { seconds: number }>>(sides.map((side) => [side, []]));
  for (const side of [...sides, ...[...sides].reverse()]) {
    await settle();
    halves.get(side)!.push(await slice(side.server.url, side.server.pid, side.scenario, side.token ?? token, side.ids ?? ids, settings, half));
  }
  return sides.map((side) => combine(halves.get(side)!));
}
