// The embedded database's folder belongs to one process at a time: PGlite has no lock of its own,
// and two processes on one folder silently lose writes. The lock is a folder (proper-lockfile:
// its mtime refreshed while we run, removed on exit) holding a note of its owner (pid, host, pid
// namespace), made whole before it is renamed into place, so that no lock is ever without its
// note. A lock whose owner process is gone from this host (a `kill -9`, a crash) is taken over at
// once, with a line in the log; one from another host, or whose owner cannot be read, only once it
// has not been refreshed for LOCK_STALE_MS.
import { randomBytes } from 'node:crypto';
import fs, { mkdirSync, readFileSync, readlinkSync, renameSync, rmSync } from 'node:fs';
import { hostname } from 'node:os';
import path from 'node:path';
import lockfile from 'proper-lockfile';
import { logEvent } from '../log/log.js';

export class DataDirLockedError extends Error {}

export const LOCK_STALE_MS = 10_000;
const LOCK_NAME = 'engine.lock';
const OWNER_NAME = 'owner.json';

interface Owner {
  pid: number;
  host: string;
  /** The pid namespace: a pid means the same process only inside one (containers have their own). */
  pidNamespace: string;
}

function pidNamespace(): string {
  try {
    return readlinkSync('/proc/self/ns/pid');
  } catch {
    return ''; // not Linux: the host name alone tells
  }
}

const self = (): Owner => ({ pid: process.pid, host: hostname(), pidNamespace: pidNamespace() });

/** Folders this process holds: a pid of ours in a lock we do not hold is a previous owner's, reused. */
const held = new Set<string>();

/**
 * The file system proper-lockfile works through: the lock folder is made with its owner note in
 * it, whole (a folder of ours, noted, then renamed into place: a process killed while taking the
 * lock leaves either no lock or a noted one, whose owner is seen to be gone), before
 * proper-lockfile reads its mtime; the note is removed whenever proper-lockfile removes the folder
 * (release, stale lock, exit). A lock already there is EEXIST, as proper-lockfile's mkdir expects.
 */
const noting = {
  ...fs,
  mkdir(dir: string, callback: (err: NodeJS.ErrnoException | null) => void) {
    const made = `${dir}.${randomBytes(6).toString('hex')}.new`;
    const undo = (err: NodeJS.ErrnoException) => fs.rm(made, { recursive: true, force: true }, () => callback(err));
    const taken = () => Object.assign(new Error(`EEXIST: ${dir} exists`), { code: 'EEXIST' });
    // A rename would replace an empty folder: a lock without a note (an older version's) stays a lock.
    if (fs.existsSync(dir)) return callback(taken());
    fs.mkdir(made, (err) => {
      if (err) return callback(err);
      fs.writeFile(path.join(made, OWNER_NAME), JSON.stringify(self()), (writeErr) => {
        if (writeErr) return undo(writeErr);
        fs.rename(made, dir, (renameErr) => {
          if (!renameErr) return callback(null);
          undo(renameErr.code === 'ENOTEMPTY' || renameErr.code === 'EEXIST' ? taken() : renameErr);
        });
      });
    });
  },
  rmdir(dir: string, callback: (err: NodeJS.ErrnoException | null) => void) {
    fs.unlink(path.join(dir, OWNER_NAME), () => fs.rmdir(dir, callback));
  },
  rmdirSync(dir: string) {
    try {
      fs.unlinkSync(path.join(dir, OWNER_NAME));
    } catch {
      // no note
    }
    fs.rmdirSync(dir);
  },
};

function readOwner(lockPath: string): { text: string; owner?: Owner } | undefined {
  let text: string;
  try {
    text = readFileSync(path.join(lockPath, OWNER_NAME), 'utf8');
  } catch {
    return undefined; // being made this instant, or made by an older version of the service
  }
  try {
    const owner = JSON.parse(text);
    return Number.isInteger(owner?.pid) && typeof owner.host === 'string' ? { text, owner } : { text };
  } catch {
    return { text };
  }
}

function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (err: any) {
    return err?.code === 'EPERM'; // someone else's process: alive all the same
  }
}

/** Whether the noted owner was a process of this host (and pid namespace) that has ended. */
function ownerGone(dir: string, noted: Owner | undefined): boolean {
  const me = self();
  if (!noted || noted.host !== me.host || (noted.pidNamespace ?? '') !== me.pidNamespace) return false;
  return noted.pid === me.pid ? !held.has(dir) : !isAlive(noted.pid);
}

/**
 * Moves the lock folder aside (a rename: of several processes taking over at once, one wins) and
 * removes it, if it is still the one whose owner note we read. Answers whether it was.
 */
function removeLock(lockPath: string, seenText: string | undefined): boolean {
  const aside = `${lockPath}.${randomBytes(6).toString('hex')}.stale`;
  try {
    renameSync(lockPath, aside);
  } catch {
    return false; // gone already, or taken over by another process first
  }
  const now = readOwner(aside)?.text;
  if (now !== seenText) {
    // A new owner's lock made between our read and the rename: give it back. Should that fail,
    // its owner finds its lock gone at the next refresh and stops ("data folder lock lost").
    try {
      renameSync(aside, lockPath);
    } catch {
      // see above
    }
    return false;
  }
  rmSync(aside, { recursive: true, force: true });
  return true;
}

/** A lock folder being made (noting.mkdir) whose maker died before renaming it into place: litter. */
const UNFINISHED = new RegExp(`^${LOCK_NAME.replace('.', '\\.')}\\.[0-9a-f]{12}\\.new$`);

function sweepUnfinished(dir: string) {
  for (const name of fs.readdirSync(dir).filter((n) => UNFINISHED.test(n))) {
    if (ownerGone(dir, readOwner(path.join(dir, name))?.owner)) rmSync(path.join(dir, name), { recursive: true, force: true });
  }
}

function lockedMessage(dir: string): string {
  return (
    `The data folder ${dir} is in use by another process of this service. ` +
    `Stop that process, or set DATA_DIR to another folder (or DATABASE_URL to use PostgreSQL). ` +
    `A lock left by a process that is gone from this machine is taken over at once; one left by another machine expires within ${LOCK_STALE_MS / 1000} seconds.`
  );
}

async function acquire(dir: string, lockPath: string): Promise<() => Promise<void>> {
  return lockfile.lock(dir, {
    lockfilePath: lockPath,
    stale: LOCK_STALE_MS,
    retries: 0,
    realpath: false,
    fs: noting,
    onCompromised: (err) => {
      console.error(JSON.stringify({ level: 'fatal', msg: 'data folder lock lost', error: err.message }));
      process.exit(1);
    },
  });
}

/**
 * Takes the data folder's lock (making the folder if needed) and notes this process as its owner.
 * The answer releases it. A folder held by a live process is a DataDirLockedError.
 */
export async function lockDataDir(dir: string): Promise<() => Promise<void>> {
  mkdirSync(dir, { recursive: true });
  const lockPath = path.join(dir, LOCK_NAME);
  sweepUnfinished(dir);
  // The note of a lock left behind, read first: whoever takes it over says whose it was.
  const left = readOwner(lockPath);
  let release: () => Promise<void>;
  let reason = `not refreshed for ${LOCK_STALE_MS / 1000} seconds`;
  try {
    release = await acquire(dir, lockPath);
  } catch (err: any) {
    // Held, and refreshed within LOCK_STALE_MS (proper-lockfile takes over a stale lock itself).
    if (err?.code !== 'ELOCKED') throw err;
    const seen = readOwner(lockPath);
    if (!ownerGone(dir, seen?.owner) || !removeLock(lockPath, seen?.text)) throw new DataDirLockedError(lockedMessage(dir));
    try {
      release = await acquire(dir, lockPath);
    } catch (again: any) {
      if (again?.code === 'ELOCKED') throw new DataDirLockedError(lockedMessage(dir));
      throw again;
    }
    reason = 'its process is gone';
  }
  if (left) logEvent('warn', 'data folder lock taken over', { dataDir: dir, previousPid: left.owner?.pid ?? null, reason, pid: process.pid });
  held.add(dir);
  return async () => {
    held.delete(dir);
    await release();
  };
}
