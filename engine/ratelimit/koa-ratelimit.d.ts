// The part of koa-ratelimit 6 this project uses (the package ships no types; @types/koa-ratelimit
// describes version 5 and pulls the types of an old ioredis).
declare module 'koa-ratelimit' {
  import type { Context, Middleware } from 'koa';
  import type { Redis } from 'ioredis';

  interface RatelimitOptions {
    driver: 'memory' | 'redis';
    /** A Map for the memory driver, an ioredis client for the redis driver. */
    db: Map<unknown, unknown> | Redis;
    /** Window length in milliseconds. */
    duration: number;
    max: number;
    id: (ctx: Context) => string | false;
    namespace?: string;
    headers?: { remaining: string; reset: string; total: string };
    disableHeader?: boolean;
    errorMessage?: string;
    throw?: boolean;
    status?: number;
    onLimited?: (ctx: Context) => void;
  }

  export default function ratelimit(options: RatelimitOptions): Middleware;
}
