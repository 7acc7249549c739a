// Captures what the service runs for each scenario: the service is started with PostgreSQL behind
// the capture proxy, each scenario is warmed up (which also checks its status), then two
// requests with different ids are recorded and turned into the raw server's replay.
import { ok, call } from '../lib/http.js';
import { pathFor, type Scenario } from '../scenarios.js';
import { buildReplay, type ReplayScenario } from './plan.js';
import type { CaptureProxy, CapturedStatement } from './proxy.js';

const WARMUP_REQUESTS = 20;

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

export async function captureScenarios(proxy: CaptureProxy, base: string, scenarios: Scenario[], token: string, ids: string[]): Promise<Capture> {
  const capture: Capture = { replays: [], failures: new Map(), late: new Map() };
  // The service answers at all (a token it accepts) before anything is blamed on a scenario.
  await ok(base, 'GET', '/api/health');
  for (const scenario of scenarios) {
    try {
      for (let i = 0; i < WARMUP_REQUESTS; i++) await send(base, scenario, ids[i % ids.length], token);
      const first = await proxy.record(() => send(base, scenario, ids[1], token));
      const second = await proxy.record(() => send(base, scenario, ids[2], token));
      const rotates = scenario.path.includes('{id}');
      capture.replays.push(
        buildReplay(
          { key: scenario.key, method: scenario.method, path: scenario.path, status: scenario.status, single: scenario.single },
          { id: rotates ? ids[1] : undefined, statements: first.statements },
          { id: rotates ? ids[2] : undefined, statements: second.statements },
        ),
      );
      if (first.late.length) capture.late.set(scenario.key, first.late);
    } catch (err) {
      capture.failures.set(scenario.key, (err as Error).message);
    }
  }
  return capture;
}
