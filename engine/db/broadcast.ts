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
  /** Told when `listening` changes (a subscriber drops what it kept while deaf). */
  onListening(listener: (listening: boolean) => void): () => void;
  /**
   * Hands `message` to this process's subscribers at once, then to every other process's, and
   * resolves once each has confirmed handling it or the wait (BROADCAST_WAIT_MS) has passed.
   */
  publish(topic: string, message: object): Promise<Delivery>;
  /**
   * For readiness: up while listening (or alone), down with why otherwise; nothing where the
   * processes cannot listen at all (behind a transaction pooler) or nothing has asked to yet.
   */
  check(): { status: 'up' } | { status: 'down'; message: string } | undefined;
  /** Resolves once listening (or after timeoutMs: start-up does not wait on it longer). */
  ready(timeoutMs: number): Promise<void>;
  close(): Promise<void>;
}

/** The longest a sender waits for the others' confirmations: a process slower than this is logged. */
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
  private readonly stateListeners = new Set<(listening: boolean) => void>();

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

  onState(listener: (listening: boolean) => void): () => void {
    this.stateListeners.add(listener);
    return () => this.stateListeners.delete(listener);
  }

  stateChanged(listening: boolean) {
    for (const listener of this.stateListeners) listener(listening);
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
export function broadcastKeys(scope: string): { channel: string; lockClass: number; lockKey: number } {
  return { channel: `broadcast_${keyOf(`channel ${scope}`).toString(36)}`, lockClass: LOCK_CLASS, lockKey: keyOf(`listeners ${scope}`) };
}

/**
 * The database's broadcast over PostgreSQL. `scope` tells deployments sharing a database apart
 * (their schema): each has its own channel and lock. Listening starts at the first subscribe or
 * publish, so a process that never needs it holds no extra connection.
 */
export function postgresBroadcast(db: Knex, scope: string, log: Log): Broadcast {
  const subscribers = new Subscribers();
  const { channel, lockKey } = broadcastKeys(scope);
  // A transaction pooler hands each transaction any server connection: LISTEN would be lost.
  const pooled = usesTransactionPooler(db);
  let client: pg.Client | undefined;
  let pid = 0;
  let listening = false;
  let wasLost = false;
  let started = false;
  let closed = false;
  let failures = 0;
  let downReason = pooled ? 'A transaction pooler stands before the database: processes cannot listen to each other' : 'Not listening yet';
  let pinger: NodeJS.Timeout | undefined;
  let retry: NodeJS.Timeout | undefined;
  const waiting = new Map<string, (pid: number) => void>();

  const setListening = (value: boolean, reason?: string) => {
    if (reason) downReason = reason;
    if (listening === value) return;
    listening = value;
    subscribers.stateChanged(value);
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
    if (!closed) {
      retry = setTimeout(connect, RETRY_MS[Math.min(failures, RETRY_MS.length - 1)]);
      retry.unref();
      failures += 1;
    }
  };

  const onNotification = (note: pg.Notification) => {
    if (note.channel === channel) {
      let envelope: Envelope;
      try {
        envelope = JSON.parse(note.payload ?? '');
      } catch {
        return;
      }
      if (envelope.from === pid) return;
      subscribers.deliver(envelope.topic, envelope.message, log);
      client?.query('select pg_notify($1, $2)', [envelope.reply, `${envelope.id} ${pid}`]).catch(() => {});
    } else {
      const [id, from] = (note.payload ?? '').split(' ');
      waiting.get(id)?.(Number(from));
    }
  };

  async function connect() {
    retry = undefined;
    if (closed) return;
    let next: pg.Client | undefined;
    try {
      const opening = db.client.acquireRawConnection() as Promise<pg.Client>;
      // A database that takes the connection and never answers must not leave this waiting for good.
      next = await within(opening, CONNECT_WAIT_MS, 'the listening connection').catch((err) => {
        opening.then((late) => late.end().catch(() => {}), () => {});
        throw err;
      });
      const current = next;
      current.on('error', () => client === current && dropClient('The listening connection failed'));
      current.on('end', () => client === current && dropClient('The listening connection ended'));
      current.on('notification', onNotification);
      // Never what keeps a process from exiting (a test that forgets to close its app, say).
      (current as unknown as { connection?: { stream?: { unref?(): void } } }).connection?.stream?.unref?.();
      pid = (current as unknown as { processID: number }).processID;
      // Listening before taking the lock: whoever counts this process has it hearing already.
      await current.query(`listen ${channel}`);
      await current.query(`listen ${channel}_${pid}`);
      await current.query('select pg_advisory_lock_shared($1, $2)', [LOCK_CLASS, lockKey]);
      if (closed) {
        await current.end().catch(() => {});
        return;
      }
      client = current;
      failures = 0;
      pinger = setInterval(ping, PING_EVERY_MS);
      pinger.unref();
      setListening(true);
    } catch (err) {
      next?.end().catch(() => {});
      // The reason for the log; readiness says only that it could not (no driver text in an answer).
      log('warn', 'broadcast: could not listen', { error: String((err as Error)?.message ?? err) });
      dropClient('Could not listen to the other processes');
    }
  }

  async function ping() {
    const current = client;
    if (!current) return;
    try {
      await within(current.query('select 1'), PING_EVERY_MS, 'the listening connection');
    } catch {
      if (client === current) dropClient('The listening connection stopped answering');
    }
  }

  const start = () => {
    if (started || pooled || closed) return;
    started = true;
    void connect();
  };

  /** The other processes listening now (this one's lock aside). */
  async function othersListening(current: pg.Client): Promise<number> {
    const { rows } = await current.query(
      `select count(distinct pid)::int as n from pg_locks
        where locktype = 'advisory' and classid = $1::bigint::oid and objid = $2::bigint::oid and objsubid = 2 and granted and pid <> pg_backend_pid()`,
      [LOCK_CLASS, lockKey],
    );
    return rows[0].n;
  }

  return {
    get listening() {
      return listening;
    },
    subscribe(topic, handler) {
      start();
      return subscribers.add(topic, handler);
    },
    onListening: (listener) => subscribers.onState(listener),
    async publish(topic, message) {
      start();
      subscribers.deliver(topic, message, log);
      const current = client;
      const id = randomUUID();
      const envelope: Envelope = { id, topic, from: pid, reply: `${channel}_${pid}`, message };
      if (!current) {
        // Deaf here, but the others may hear: told through the pool, unconfirmed.
        await db.raw('select pg_notify(?, ?)', [channel, JSON.stringify({ ...envelope, from: -1 })]).catch(() => {});
        return { expected: 0, confirmed: 0 };
      }
      const confirmedBy = new Set<number>();
      let expected = 0;
      let done!: () => void;
      const all = new Promise<void>((resolve) => (done = resolve));
      waiting.set(id, (from) => {
        confirmedBy.add(from);
        if (confirmedBy.size >= expected) done();
      });
      try {
        expected = await within(othersListening(current), BROADCAST_WAIT_MS, 'counting listeners');
        await within(current.query('select pg_notify($1, $2)', [channel, JSON.stringify(envelope)]), BROADCAST_WAIT_MS, 'the notification');
        if (confirmedBy.size < expected) await within(all, BROADCAST_WAIT_MS, 'confirmations').catch(() => {});
      } catch (err) {
        log('warn', 'broadcast: a message could not be sent', { topic, error: String((err as Error)?.message ?? err) });
      } finally {
        waiting.delete(id);
      }
      if (confirmedBy.size < expected) {
        log('warn', 'broadcast: not every process confirmed in time', { topic, expected, confirmed: confirmedBy.size, waitedMs: BROADCAST_WAIT_MS });
      }
      return { expected, confirmed: Math.min(confirmedBy.size, expected) };
    },
    check: () => (!started ? undefined : listening ? { status: 'up' } : { status: 'down', message: downReason }),
    async ready(timeoutMs) {
      if (!started || listening) return;
      await within(new Promise<void>((resolve) => {
        const stop = subscribers.onState((now) => now && (stop(), resolve()));
      }), timeoutMs, 'listening').catch(() => {});
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
