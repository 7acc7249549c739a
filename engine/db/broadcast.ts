// Messages to every process serving one database, each confirmed before the sender goes on: what
// lets a process keep an answer in memory (is this session live?) and still drop it the moment
// another process changes what it says. On PostgreSQL each process holds one connection of its own
// that LISTENs on the database's channel; a message is a NOTIFY, and each other process answers on
// the sender's own channel once its subscribers have handled it. Who must answer is read from
// PostgreSQL itself: every listening connection holds one shared advisory lock, and a connection
// that dies releases it. The embedded database is served by one process: its messages stay in it.
//
// A process whose listening connection is down cannot hear the others: `listening` says so, and a
// subscriber must then keep nothing it would have to be told to drop.
import { createHash, randomUUID } from 'node:crypto';
import type { Knex } from 'knex';
import type pg from 'pg';
import { usesTransactionPooler } from './pooler.js';
import { within } from '../time-limit.js';
import type { LogEvent } from '../log/log.js';

export type BroadcastHandler = (message: unknown) => void;

/** What became of a message: how many other processes were listening, and how many confirmed. */
export interface Delivery {
  expected: number;
  confirmed: number;
}

export interface Broadcast {
  /** Whether this process hears every other's messages now (always, for a process serving alone). */
  readonly listening: boolean;
  /** Handles `topic`'s messages, this process's own included. Returns the unsubscribe. */
  subscribe(topic: string, handler: BroadcastHandler): () => void;
  /**
   * Told when `listening` changes (a subscriber drops what it kept while deaf). On listening,
   * `pending` says whether a transaction that published is still open: its message may have been
   * sent before this process listened, and its change is not visible yet.
   */
  onListening(listener: (listening: boolean, pending: boolean) => void): () => void;
  /**
   * Hands `message` to this process's subscribers at once, then to every other process's, and
   * resolves once each has confirmed handling it or the wait (BROADCAST_WAIT_MS) has passed.
   * Given the transaction that makes the change told of, marks it as publishing until it ends.
   */
  publish(topic: string, message: object, trx?: Knex.Transaction): Promise<Delivery>;
  /**
   * For readiness: up, with why not while it does not hear the others (the process is still ready:
   * it keeps nothing then); nothing where it cannot listen at all (behind a transaction pooler), or
   * before it was started.
   */
  check(): { status: 'up'; message?: string } | undefined;
  /** Starts listening, and resolves once it does (or after timeoutMs: start-up does not wait on it longer). */
  ready(timeoutMs: number): Promise<void>;
  close(): Promise<void>;
}

/** The longest a message holds its sender up (counting, sending, confirmations): a process slower than this is logged. */
export const BROADCAST_WAIT_MS = 1000;
/** How often the listening connection is asked whether it still answers (a silent network drop ends no socket). */
const PING_EVERY_MS = 5000;
/** The longest opening the listening connection may take. */
const CONNECT_WAIT_MS = 10_000;
/** Between two attempts to listen again after the connection was lost. */
const RETRY_MS = [200, 1000, 2000, 5000];

type Log = LogEvent;

/** Subscribers of this process, by topic: what both kinds of broadcast deliver to. */
class Subscribers {
  private readonly byTopic = new Map<string, Set<BroadcastHandler>>();
  private readonly stateListeners = new Set<(listening: boolean, pending: boolean) => void>();

  add(topic: string, handler: BroadcastHandler): () => void {
    let set = this.byTopic.get(topic);
    if (!set) this.byTopic.set(topic, (set = new Set()));
    set.add(handler);
    return () => set.delete(handler);
  }

  deliver(topic: string, message: unknown, log: Log) {
    for (const handler of this.byTopic.get(topic) ?? []) {
      try {
        handler(message);
      } catch (err) {
        log('warn', 'broadcast: a subscriber failed', { topic, error: String((err as Error)?.message ?? err) });
      }
    }
  }

  onState(listener: (listening: boolean, pending: boolean) => void): () => void {
    this.stateListeners.add(listener);
    return () => this.stateListeners.delete(listener);
  }

  stateChanged(listening: boolean, pending = false) {
    for (const listener of this.stateListeners) listener(listening, pending);
  }
}

/** A process serving its database alone (the embedded one): every message is its own. */
export function aloneBroadcast(log: Log = () => {}): Broadcast {
  const subscribers = new Subscribers();
  return {
    listening: true,
    subscribe: (topic, handler) => subscribers.add(topic, handler),
    onListening: (listener) => subscribers.onState(listener),
    async publish(topic, message) {
      subscribers.deliver(topic, message, log);
      return { expected: 0, confirmed: 0 };
    },
    // Nothing to report: there is no one else to hear.
    check: () => undefined,
    ready: async () => {},
    close: async () => {},
  };
}

interface Envelope {
  id: string;
  topic: string;
  /** The sender's listening backend (its own echo is skipped: it delivered the message itself). */
  from: number;
  /** Where confirmations go: the sender's own channel. */
  reply: string;
  message: unknown;
}

/** A positive 31-bit number from text (an advisory lock key must be an int4). */
const keyOf = (text: string) => createHash('sha256').update(text).digest().readUInt32BE(0) & 0x7fffffff;

/** Identifies the application's messages among other users of the database (advisory lock class). */
const LOCK_CLASS = keyOf('engine broadcast');

/**
 * The channel of a scope's messages, and the advisory lock (LOCK_CLASS, lockKey) its listening
 * connections hold (operators and tests find them in pg_locks by it).
 */
export function broadcastKeys(scope: string): { channel: string; lockClass: number; lockKey: number; publishingKey: number } {
  return {
    channel: `broadcast_${keyOf(`channel ${scope}`).toString(36)}`,
    lockClass: LOCK_CLASS,
    lockKey: keyOf(`listeners ${scope}`),
    publishingKey: keyOf(`publishing ${scope}`),
  };
}

/** An envelope as a NOTIFY payload carries it; anything else on the channel (anyone may NOTIFY) is ignored. */
function envelopeOf(payload: string | undefined, channel: string): Envelope | undefined {
  let value: unknown;
  try {
    value = JSON.parse(payload ?? '');
  } catch {
    return undefined;
  }
  if (typeof value !== 'object' || value === null) return undefined;
  const { id, topic, from, reply } = value as Partial<Envelope>;
  if (typeof id !== 'string' || typeof topic !== 'string' || typeof from !== 'number' || typeof reply !== 'string') return undefined;
  if (!reply.startsWith(`${channel}_`) || reply.length > 63 || id.length > 64) return undefined;
  return value as Envelope;
}

/** This database, in pg_locks (advisory locks are per database; pg_locks shows the whole server's). */
const THIS_DATABASE = '(select oid from pg_database where datname = current_database())';

/**
 * The database's broadcast over PostgreSQL. `scope` tells deployments sharing a database apart
 * (their schema): each has its own channel and lock. Listening starts at ready() or the first
 * publish, so an app that is never started holds no extra connection.
 */
export function postgresBroadcast(db: Knex, scope: string, log: Log): Broadcast {
  const subscribers = new Subscribers();
  const { channel, lockKey, publishingKey } = broadcastKeys(scope);
  // A transaction pooler hands each transaction any server connection: LISTEN would be lost.
  const pooled = usesTransactionPooler(db);
  let client: pg.Client | undefined;
  /** The backend of the listening connection; kept after it is lost, to end it if it lingers. */
  let pid = 0;
  let listening = false;
  let wasLost = false;
  let started = false;
  let closed = false;
  let failures = 0;
  let downReason = 'Not listening yet';
  let pinger: NodeJS.Timeout | undefined;
  let retry: NodeJS.Timeout | undefined;
  /** Messages sent and not yet confirmed by every process counted: id → one confirmation. */
  const waiting = new Map<string, (pid: number) => void>();

  const setListening = (value: boolean, reason?: string, pending = false) => {
    if (reason) downReason = reason;
    if (listening === value) return;
    listening = value;
    subscribers.stateChanged(value, pending);
    // The first time is what a start does: worth a line only once it had been lost.
    if (!value) log('warn', 'broadcast: not listening', { reason: downReason });
    else if (wasLost) log('info', 'broadcast: listening again');
    if (!value) wasLost = true;
  };

  const dropClient = (reason: string) => {
    const lost = client;
    client = undefined;
    if (pinger) clearInterval(pinger);
    pinger = undefined;
    setListening(false, reason);
    // Ending the connection releases its advisory lock: senders stop waiting for this process.
    lost?.end().catch(() => {});
    if (!closed && !retry) {
      retry = setTimeout(connect, RETRY_MS[Math.min(failures, RETRY_MS.length - 1)]);
      retry.unref();
      failures += 1;
    }
  };

  const onNotification = (note: pg.Notification) => {
    try {
      if (note.channel === channel) {
        const envelope = envelopeOf(note.payload, channel);
        if (!envelope || envelope.from === pid) return;
        subscribers.deliver(envelope.topic, envelope.message, log);
        client?.query('select pg_notify($1, $2)', [envelope.reply, `${envelope.id} ${pid}`]).catch(() => {});
      } else {
        const [id, from] = (note.payload ?? '').split(' ');
        waiting.get(id)?.(Number(from));
      }
    } catch (err) {
      // Whatever arrives, the process goes on (a throw here would be an uncaught exception).
      log('warn', 'broadcast: a message could not be handled', { error: String((err as Error)?.message ?? err) });
    }
  };

  /** Whether a transaction that published is open now (pg_locks: each holds the publishing lock). */
  async function publishing(current: pg.Client): Promise<boolean> {
    const { rows } = await current.query(
      `select 1 from pg_locks where locktype = 'advisory' and database = ${THIS_DATABASE}
        and classid = $1::bigint::oid and objid = $2::bigint::oid and objsubid = 2 limit 1`,
      [LOCK_CLASS, publishingKey],
    );
    return rows.length > 0;
  }

  /** Opens the listening connection: listening first, then the lock, so whoever counts this process has it hearing. */
  async function listen(): Promise<{ current: pg.Client; pending: boolean }> {
    const opening = db.client.acquireRawConnection() as Promise<pg.Client>;
    const current = await within(opening, CONNECT_WAIT_MS, 'the listening connection').catch((err) => {
      opening.then((late) => late.end().catch(() => {}), () => {});
      throw err;
    });
    try {
      current.on('error', () => client === current && dropClient('The listening connection failed'));
      current.on('end', () => client === current && dropClient('The listening connection ended'));
      current.on('notification', onNotification);
      // Never what keeps a process from exiting (a test that forgets to close its app, say).
      (current as unknown as { connection?: { stream?: { unref?(): void } } }).connection?.stream?.unref?.();
      const previous = pid;
      const next = (current as unknown as { processID: number }).processID;
      await within((async () => {
        await current.query(`listen ${channel}`);
        await current.query(`listen ${channel}_${next}`);
        // try: whoever holds the lock exclusively (an operator pausing the channel) is waited out by retrying, never hung on.
        const { rows } = await current.query('select pg_try_advisory_lock_shared($1, $2) as taken', [LOCK_CLASS, lockKey]);
        if (!rows[0].taken) throw new Error('the listeners\' lock is held exclusively');
        // A connection lost silently may linger on the server, holding the lock that makes senders wait for it.
        if (previous && previous !== next) await current.query('select pg_terminate_backend($1)', [previous]).catch(() => {});
      })(), CONNECT_WAIT_MS, 'listening');
      pid = next;
      // Asked once listening: a publisher that sent before has held its lock since before sending.
      return { current, pending: await within(publishing(current), CONNECT_WAIT_MS, 'listening') };
    } catch (err) {
      current.end().catch(() => {});
      throw err;
    }
  }

  async function connect() {
    retry = undefined;
    if (closed) return;
    try {
      const { current, pending } = await listen();
      if (closed) {
        await current.end().catch(() => {});
        return;
      }
      client = current;
      failures = 0;
      pinger = setInterval(ping, PING_EVERY_MS);
      pinger.unref();
      setListening(true, undefined, pending);
    } catch (err) {
      // The reason for the log; readiness says only that it could not (no driver text in an answer).
      log('warn', 'broadcast: could not listen', { error: String((err as Error)?.message ?? err) });
      dropClient('Could not listen to the other processes');
    }
  }

  let pinging = false;
  async function ping() {
    const current = client;
    if (!current || pinging) return;
    pinging = true;
    try {
      await within(current.query('select 1'), PING_EVERY_MS, 'the listening connection');
    } catch {
      if (client === current) dropClient('The listening connection stopped answering');
    } finally {
      pinging = false;
    }
  }

  const start = () => {
    if (started || closed || pooled) return;
    started = true;
    void connect();
  };

  /** The backends of the other processes listening now (this one's aside), in this database. */
  async function othersListening(current: pg.Client): Promise<number[]> {
    const { rows } = await current.query(
      `select distinct pid from pg_locks
        where locktype = 'advisory' and database = ${THIS_DATABASE} and classid = $1::bigint::oid and objid = $2::bigint::oid
          and objsubid = 2 and granted and pid <> pg_backend_pid()`,
      [LOCK_CLASS, lockKey],
    );
    return rows.map((r: { pid: number }) => r.pid);
  }

  /** Sends and waits for the processes counted, all within one BROADCAST_WAIT_MS. */
  async function sendConfirmed(current: pg.Client, topic: string, envelope: Envelope): Promise<Delivery> {
    const deadline = Date.now() + BROADCAST_WAIT_MS;
    const left = () => Math.max(1, deadline - Date.now());
    const confirmed = new Set<number>();
    let counted: Set<number> | undefined;
    let done!: () => void;
    const all = new Promise<void>((resolve) => (done = resolve));
    const settled = () => counted !== undefined && [...counted].every((p) => confirmed.has(p));
    waiting.set(envelope.id, (from) => {
      confirmed.add(from);
      if (settled()) done();
    });
    try {
      // Counted first, sent whatever the count did: a count that failed only means not waiting.
      counted = new Set(await within(othersListening(current), left(), 'counting listeners').catch(() => [] as number[]));
      await within(current.query('select pg_notify($1, $2)', [channel, JSON.stringify(envelope)]), left(), 'the notification');
      if (!settled()) await within(all, left(), 'confirmations').catch(() => {});
    } catch (err) {
      log('warn', 'broadcast: a message could not be sent', { topic, error: String((err as Error)?.message ?? err) });
    } finally {
      waiting.delete(envelope.id);
    }
    const expected = counted?.size ?? 0;
    const confirmedCounted = [...(counted ?? [])].filter((p) => confirmed.has(p)).length;
    if (confirmedCounted < expected) {
      log('warn', 'broadcast: not every process confirmed in time', { topic, expected, confirmed: confirmedCounted, waitedMs: BROADCAST_WAIT_MS });
    }
    return { expected, confirmed: confirmedCounted };
  }

  return {
    get listening() {
      return listening;
    },
    subscribe: (topic, handler) => subscribers.add(topic, handler),
    onListening: (listener) => subscribers.onState(listener),
    async publish(topic, message, trx) {
      start();
      // Held until the transaction ends: a process that starts listening meanwhile knows a change is on its way.
      if (trx) await trx.raw('select pg_advisory_xact_lock_shared(?, ?)', [LOCK_CLASS, publishingKey]);
      // This process's subscribers first, at once, whether or not it listens yet.
      subscribers.deliver(topic, message, log);
      const envelope: Envelope = { id: randomUUID(), topic, from: pid, reply: `${channel}_${pid}`, message };
      const current = client;
      if (current) return sendConfirmed(current, topic, envelope);
      // Deaf here (or behind a pooler), but others may hear (a process reaching the database
      // directly): told through the pool, unconfirmed and not waited for (the caller may hold a
      // pooled connection in a transaction; a second one could be scarce).
      db.raw('select pg_notify(?, ?)', [channel, JSON.stringify({ ...envelope, from: -1 })]).catch(() => {});
      return { expected: 0, confirmed: 0 };
    },
    check: () => {
      if (!started || pooled) return undefined;
      // Ready either way: a process that does not hear the others keeps nothing (it asks the database).
      return listening ? { status: 'up' } : { status: 'up', message: `${downReason}: every request asks the database` };
    },
    async ready(timeoutMs) {
      if (pooled && !started) {
        started = true; // said once
        log('info', 'broadcast: behind a transaction pooler the processes cannot listen to each other: each request asks the database what others could change');
      }
      start();
      if (pooled || listening) return;
      let stop: () => void = () => {};
      await within(new Promise<void>((resolve) => {
        stop = subscribers.onState((now) => now && resolve());
      }), timeoutMs, 'listening').catch(() => {});
      stop();
    },
    async close() {
      closed = true;
      if (retry) clearTimeout(retry);
      if (pinger) clearInterval(pinger);
      const current = client;
      client = undefined;
      listening = false;
      await current?.end().catch(() => {});
    },
  };
}

/** One per embedded database (its knex configuration), shared by every app of the process that serves it. */
const alone = new WeakMap<object, Broadcast>();

/** The broadcast of `db`'s processes: PostgreSQL's, or the embedded database's single process. */
export function databaseBroadcast(db: Knex, scope: string, log: Log): Broadcast {
  if (db.client.config.client === 'pg') return postgresBroadcast(db, scope, log);
  let broadcast = alone.get(db.client.config);
  if (!broadcast) alone.set(db.client.config, (broadcast = aloneBroadcast(log)));
  return broadcast;
}
