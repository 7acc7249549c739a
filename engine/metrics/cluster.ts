// Metrics in a cluster: the primary serves the metrics port, and at each scrape asks every worker
// that serves for its registry (over the cluster's IPC channel), then adds them up with
// prom-client's AggregatorRegistry (counters and histograms summed, gauges summed unless the
// metric says otherwise). A worker that does not answer in time is left out of that scrape
// rather than failing it. Loaded by the primary only when METRICS_PORT is set, and it never
// loads the app: workers answer from their own registries (answerMetricsRequests).
import cluster, { type Worker } from 'node:cluster';
import type { MetricObjectWithValues, MetricValue, Registry } from 'prom-client';
import type { MetricsSettings } from '../config/config.js';
import type { LogEvent } from '../log/log.js';
import { isServing } from '../process/messages.js';
import { serveMetrics, portOf } from './server.js';

/** How long a scrape waits for the workers' answers. */
const ANSWER_WAIT_MS = 2000;

type Answer = Array<MetricObjectWithValues<MetricValue<string>>>;

/** The primary to a worker: your metrics, please. */
interface MetricsAsked {
  metricsAsked: number;
}

/** A worker's answer: its registry as JSON (or nothing, when it could not collect). */
interface MetricsAnswer {
  metricsAnswer: { id: number; metrics?: Answer };
}

const isMetricsAsked = (message: unknown): message is MetricsAsked => typeof (message as MetricsAsked | undefined)?.metricsAsked === 'number';
const isMetricsAnswer = (message: unknown): message is MetricsAnswer => typeof (message as MetricsAnswer | undefined)?.metricsAnswer?.id === 'number';

/** A worker's side: answers its primary's requests from the app's registry. */
export function answerMetricsRequests(registry: Registry): void {
  process.on('message', (message) => {
    if (!isMetricsAsked(message)) return;
    const reply = (metrics?: Answer) => {
      if (process.connected) process.send!({ metricsAnswer: { id: message.metricsAsked, metrics } } satisfies MetricsAnswer, () => {});
    };
    registry.getMetricsAsJSON().then((metrics) => reply(metrics as Answer), () => reply());
  });
}

/** The primary's side: serves the metrics port with the sum of its serving workers' metrics. */
export async function serveClusterMetrics(settings: MetricsSettings, log: LogEvent) {
  // Imported here: a worker loads this file for answerMetricsRequests, and needs no prom-client for it.
  const { AggregatorRegistry } = await import('prom-client');
  // Workers that have said they serve: one still starting has no registry to answer from yet.
  const serving = new Set<Worker>();
  const waiting = new Map<number, { expected: number; answers: Answer[]; done: () => void }>();
  let lastId = 0;
  cluster.on('message', (worker, message) => {
    if (isServing(message)) serving.add(worker);
    else if (isMetricsAnswer(message)) {
      const scrape = waiting.get(message.metricsAnswer.id);
      if (!scrape) return;
      if (message.metricsAnswer.metrics) scrape.answers.push(message.metricsAnswer.metrics);
      if (--scrape.expected === 0) scrape.done();
    }
  });
  cluster.on('exit', (worker) => serving.delete(worker));

  const collect = async () => {
    const id = ++lastId;
    const workers = [...serving].filter((w) => w.isConnected());
    const answers: Answer[] = [];
    if (workers.length > 0) {
      await new Promise<void>((resolve) => {
        const timer = setTimeout(done, ANSWER_WAIT_MS);
        function done() {
          clearTimeout(timer);
          waiting.delete(id);
          resolve();
        }
        waiting.set(id, { expected: workers.length, answers, done });
        for (const worker of workers) worker.send({ metricsAsked: id } satisfies MetricsAsked, () => {});
      });
    }
    const registry = AggregatorRegistry.aggregate(answers);
    return { contentType: registry.contentType, text: await registry.metrics() };
  };
  const server = await serveMetrics(settings, collect, (err) => log('error', 'metrics could not be collected', { error: String(err) }));
  log('info', 'metrics listening', { port: portOf(server), host: settings.host, pid: process.pid });
  return server;
}
