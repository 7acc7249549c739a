// A cluster worker's store of counts (engine/ratelimit/primary-store.ts) over a channel on which
// the test plays the primary: it sees each batch of asks and answers the ones it chooses. An ask
// the primary never answers fails at its bound, and the caller's next request asks afresh rather
// than waiting on the lost answer; an answer that comes after its ask failed changes nothing.
// server-cluster.test.ts runs the store in a real cluster, where the primary always answers.
import { EventEmitter } from 'node:events';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import type { CountAnswered, CountsAsked } from '../../engine/ratelimit/primary-counts.js';
import { primaryStore, type PrimaryChannel } from '../../engine/ratelimit/primary-store.js';
import type { LimitStore } from '../../engine/ratelimit/store.js';

const TIMEOUT_MS = 200;
/** What a loaded machine may add to the bound (the store checks every fifth of it). */
const SLACK_MS = 400;
const WINDOW_MS = 60_000;
const MAX = 1000;

/** A channel whose primary answers nothing by itself: the test answers a batch with `answer`. */
function standInPrimary() {
  const events = new EventEmitter();
  const asked: CountsAsked[] = [];
  const channel: PrimaryChannel = {
    connected: true,
    send(message) {
      asked.push(message);
      return true;
    },
    on: (event, listener) => events.on(event, listener),
    off: (event, listener) => events.off(event, listener),
  };
  const answer = (batch: CountsAsked, answers: CountAnswered[]) => events.emit('message', { rateLimitCounts: batch.rateLimitCounts, answers });
  return { channel, asked, answer };
}

/** The store's client in koa-ratelimit's Redis form: one count per call. */
const clientOf = (store: LimitStore) =>
  store.db as unknown as { ratelimiter(key: string, now: number, durationMs: number, max: number): Promise<[number, number, number]> };
const resetSeconds = () => Math.floor(Date.now() / 1000) + 60;
const nextTick = () => new Promise((resolve) => setImmediate(resolve));

/** How a count ended, or 'pending' after `ms`. */
function settled<T>(promise: Promise<T>, ms: number): Promise<{ value: T } | { error: Error } | 'pending'> {
  return Promise.race([
    promise.then(
      (value) => ({ value }),
      (error: Error) => ({ error }),
    ),
    new Promise<'pending'>((resolve) => setTimeout(() => resolve('pending'), ms)),
  ]);
}

test('an ask the primary never answers fails at its bound; the next request asks again and is counted', async () => {
  const primary = standInPrimary();
  const store = primaryStore(() => {}, 100, TIMEOUT_MS, primary.channel);
  const client = clientOf(store);
  try {
    const started = Date.now();
    const lost = await settled(client.ratelimiter('caller-a', started, WINDOW_MS, MAX), TIMEOUT_MS + SLACK_MS);
    const waited = Date.now() - started;
    assert.ok(lost !== 'pending' && 'error' in lost, `the unanswered ask failed: ${JSON.stringify(lost)}`);
    assert.match((lost as { error: Error }).error.message, `no answer within ${TIMEOUT_MS} ms`);
    assert.ok(waited >= TIMEOUT_MS, `not before its bound (${waited} ms)`);
    assert.is(primary.asked.length, 1);
    assert.equal(primary.asked[0].counts, [['caller-a', WINDOW_MS, MAX, 1]]);

    // The caller's next request asks the primary itself, and its answer counts it.
    const next = client.ratelimiter('caller-a', Date.now(), WINDOW_MS, MAX);
    await nextTick();
    assert.is(primary.asked.length, 2, 'a fresh ask, not a wait on the lost one');
    const reset = resetSeconds();
    primary.answer(primary.asked[1], [[1, MAX - 1, reset]]);
    assert.equal(await settled(next, TIMEOUT_MS), { value: [MAX, reset, MAX] });

    // The lost ask's answer, late: dropped, and the caller's window is the one counted above.
    primary.answer(primary.asked[0], [[64, 0, reset + 60]]);
    const after = client.ratelimiter('caller-a', Date.now(), WINDOW_MS, MAX);
    await nextTick();
    assert.is(primary.asked.length, 3, 'no lease came with the late answer: the third request asks');
    primary.answer(primary.asked[2], [[1, MAX - 2, reset]]);
    assert.equal(await settled(after, TIMEOUT_MS), { value: [MAX - 1, reset, MAX] });
  } finally {
    await store.close();
  }
});

test('batches in flight each fail at their own bound: a later one answered in time stands', async () => {
  // A longer bound here: the second batch is answered between the first's end and its own, half
  // a bound apart, which a stalled event loop must not close.
  const bound = 2000;
  const primary = standInPrimary();
  const store = primaryStore(() => {}, 100, bound, primary.channel);
  const client = clientOf(store);
  try {
    const started = Date.now();
    const first = settled(
      client.ratelimiter('caller-b', started, WINDOW_MS, MAX).catch((error: Error) => Promise.reject(Object.assign(error, { after: Date.now() - started }))),
      // The store fails a batch between its bound and 1.2 × it (it checks every fifth of the bound).
      bound * 1.2 + SLACK_MS,
    );
    await new Promise((resolve) => setTimeout(resolve, bound / 2));
    const second = client.ratelimiter('caller-c', Date.now(), WINDOW_MS, MAX);
    await nextTick();
    assert.is(primary.asked.length, 2);
    const outcome = await first;
    assert.ok(outcome !== 'pending' && 'error' in outcome, 'the first batch, unanswered, failed');
    const after = (outcome.error as Error & { after: number }).after;
    assert.ok(after >= bound, `at its bound, not before (${after} ms)`);
    // The second is still within its bound when the first fails: answered now, it is counted.
    const reset = resetSeconds();
    primary.answer(primary.asked[1], [[1, MAX - 1, reset]]);
    assert.equal(await settled(second, TIMEOUT_MS), { value: [MAX, reset, MAX] });
  } finally {
    await store.close();
  }
});

test.run();
