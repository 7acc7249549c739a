// Captures what the service runs for each scenario: the service is started with PostgreSQL behind
// the capture proxy, each scenario is warmed up (which also checks its status), then two
// requests with different ids are recorded and turned into the raw server's replay.
import { ok, call } from '../lib/http.js';
import { pathFor, type Scenario } from '../scenarios.js';
import { buildReplay, type CapturedRequest, type ReplayScenario } from './plan.js';
import type { CaptureProxy, CapturedStatement } from './proxy.js';

const WARMUP_REQUESTS = 20;
/** Requests recorded at most per scenario, looking for two that ran the same SQL. */
const CAPTURES = 6;

export interface Capture {
  replays: ReplayScenario[];
  /** Scenario key → why it cannot be measured (unexpected status, SQL that cannot be replayed). */
  failures: Map<string, string>;
  /** Statements the service ran after answering (reported, not replayed). */
  late: Map<string, CapturedStatement[]>;
}

async function send(base: string, scenario: Scenario, id: string, token: string) {
  const reply = await call(base, scenario.method, pathFor(scenario, id), scenario.body, token);
  if (reply.status !== scenario.status) throw new Error(`${scenario.method} ${pathFor(scenario, id)} answered ${reply.status} (expected ${scenario.status}): ${reply.text.slice(0, 300)}`);
}

const shape = (request: CapturedRequest) => request.statements.map((s) => s.text).join('\n');

/**
 * Two recorded requests of the scenario that ran the same statements. Some statements run only
 * now and then (a cached check whose entry expired: the session revocation lookup), so a few
 * requests are recorded and the shape seen twice with the fewest statements wins: the
 * request as it runs most of the time.
 */
async function typicalPair(proxy: CaptureProxy, base: string, scenario: Scenario, token: string, ids: string[]): Promise<[CapturedRequest, CapturedRequest, CapturedStatement[]]> {
  const rotates = scenario.path.includes('{id}');
  const seen = new Map<string, CapturedRequest[]>();
  let late: CapturedStatement[] = [];
  for (let i = 1; i <= CAPTURES; i++) {
    const recorded = await proxy.record(() => send(base, scenario, ids[i], token));
    const request = { id: rotates ? ids[i] : undefined, statements: recorded.statements };
    late = late.length ? late : recorded.late;
    const same = seen.get(shape(request)) ?? [];
    same.push(request);
    seen.set(shape(request), same);
    // Two alike already, and the shortest: no need to look further.
    const shortest = Math.min(...[...seen.values()].map((list) => list[0].statements.length));
    if (i >= 3 && same.length >= 2 && request.statements.length === shortest) return [same[0], same[1], late];
  }
  const pairs = [...seen.values()].filter((list) => list.length >= 2).sort((a, b) => a[0].statements.length - b[0].statements.length);
  if (!pairs.length) throw new Error(`${scenario.key}: no two of ${CAPTURES} requests ran the same SQL\n${[...seen.keys()].join('\n---\n')}`);
  return [pairs[0][0], pairs[0][1], late];
}

export async function captureScenarios(proxy: CaptureProxy, base: string, scenarios: Scenario[], token: string, ids: string[]): Promise<Capture> {
  const capture: Capture = { replays: [], failures: new Map(), late: new Map() };
  // The service answers at all (a token it accepts) before anything is blamed on a scenario.
  await ok(base, 'GET', '/api/health');
  // A feature's cost is measured against the service itself: nothing of it is replayed.
  for (const scenario of scenarios.filter((s) => !s.against)) {
    try {
      for (let i = 0; i < WARMUP_REQUESTS; i++) await send(base, scenario, ids[i % ids.length], token);
      const [first, second, late] = await typicalPair(proxy, base, scenario, token, ids);
      capture.replays.push(buildReplay({ key: scenario.key, method: scenario.method, path: scenario.path, status: scenario.status, single: scenario.single }, first, second));
      if (late.length) capture.late.set(scenario.key, late);
    } catch (err) {
      capture.failures.set(scenario.key, (err as Error).message);
    }
  }
  return capture;
}
