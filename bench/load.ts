// One measured load of one scenario on one server: autocannon in this process, a warm-up whose
// figures are dropped, then the measured run while the RSS of every process of the server is
// sampled.
import autocannon from 'autocannon';
import { RssSampler } from './lib/processes.js';
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
  /** Per process of the server: RSS when the measured run started and its peak during it. */
  memory: Array<{ pid: number; beforeMB: number; peakMB: number }>;
  peakRssMB: number;
}

function options(url: string, scenario: Scenario, token: string, ids: string[], connections: number, duration: number) {
  let next = 0;
  const headers: Record<string, string> = { authorization: `Bearer ${token}` };
  if (scenario.body !== undefined) headers['content-type'] = 'application/json';
  const rotates = scenario.path.includes('{id}');
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
        ...(rotates ? { setupRequest: (request: any) => ({ ...request, path: pathFor(scenario, ids[next++ % ids.length]) }) } : {}),
      },
    ],
  };
}

/** `settle` waits for the database to finish what earlier runs left behind (see lib/pg-activity.ts). */
export async function measure(url: string, pid: number, scenario: Scenario, token: string, ids: string[], settings: LoadSettings, settle: () => Promise<unknown>): Promise<LoadFigures> {
  await settle();
  if (settings.warmupSeconds > 0) {
    await autocannon(options(url, scenario, token, ids, settings.connections, settings.warmupSeconds));
    await settle();
  }
  const sampler = new RssSampler(pid, settings.rssSampleMs);
  let result: Awaited<ReturnType<typeof autocannon>>;
  try {
    result = await autocannon(options(url, scenario, token, ids, settings.connections, settings.durationSeconds));
  } finally {
    sampler.stop();
  }
  const unexpected: Record<string, number> = {};
  for (const [code, { count }] of Object.entries(result.statusCodeStats ?? {})) if (Number(code) !== scenario.status) unexpected[code] = count;
  const requests = result.requests.total;
  const memory = sampler.report();
  return {
    requestsPerSecond: Math.round(requests / result.duration),
    p50Ms: result.latency.p50,
    p99Ms: result.latency.p99,
    requests,
    errors: result.errors + result.timeouts,
    non2xx: result.non2xx,
    unexpected,
    bytesPerResponse: requests ? Math.round(result.throughput.total / requests) : 0,
    memory,
    peakRssMB: Math.round(memory.reduce((sum, p) => sum + p.peakMB, 0)),
  };
}
