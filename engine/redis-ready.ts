// Waiting for a Redis connection at start-up, for the stores that keep shared state there (rate
// limits, idempotency keys): resolved once it is ready, or after `timeoutMs` (the store then works
// as it does during an outage), never rejected.
import type { Redis } from 'ioredis';

export function redisReady(redis: Redis, timeoutMs: number, onTimeout?: () => void): Promise<void> {
  if (redis.status === 'ready') return Promise.resolve();
  return new Promise<void>((resolve) => {
    const done = () => {
      clearTimeout(timer);
      redis.off('ready', done);
      resolve();
    };
    const timer = setTimeout(() => {
      onTimeout?.();
      done();
    }, timeoutMs);
    redis.once('ready', done);
  });
}
