// The processes of a server (a node:cluster primary and its workers, or one process) and their
// resident memory, read from /proc: Linux only, like the machine the figures are made on.
import { readFileSync, readlinkSync, realpathSync } from 'node:fs';

const MB = 1024 * 1024;

const NODE = realpathSync(process.execPath);

const isNode = (pid: number) => {
  try {
    return readlinkSync(`/proc/${pid}/exe`) === NODE;
  } catch {
    return false;
  }
};

/**
 * `pid` and its descendants that run Node, parent first: the server's own processes, not the
 * helpers a tool may start beside it (tsx's esbuild service).
 */
export function processTree(pid: number): number[] {
  let children: number[] = [];
  try {
    children = readFileSync(`/proc/${pid}/task/${pid}/children`, 'utf8').trim().split(/\s+/).filter(Boolean).map(Number);
  } catch {
    return [];
  }
  return [pid, ...children.filter(isNode).flatMap(processTree)];
}

/** Resident memory in bytes; 0 once the process is gone. */
export function rssOf(pid: number): number {
  try {
    return Number(/VmRSS:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'))![1]) * 1024;
  } catch {
    return 0;
  }
}

export const toMB = (bytes: number) => Math.round((bytes / MB) * 10) / 10;

/** Clock ticks a second in /proc/<pid>/stat (USER_HZ: 100 on every Linux build in use). */
const TICKS_PER_SECOND = 100;

/**
 * CPU time (user and system) that the processes of a tree have used so far, in seconds, read from
 * /proc. Taken before and after a load, it gives the server's CPU cost per request: a figure that
 * a machine busy with something else changes far less than it changes a rate.
 */
export function cpuSecondsOf(root: number): number {
  let ticks = 0;
  for (const pid of processTree(root)) {
    try {
      // The fields after the command (in parentheses, and it may hold spaces and parentheses itself,
      // so from the last one): utime and stime are fields 14 and 15.
      const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
      const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
      ticks += Number(fields[11]) + Number(fields[12]);
    } catch {
      // gone meanwhile
    }
  }
  return ticks / TICKS_PER_SECOND;
}

/**
 * CPU time (user and system) that a process has used so far together with the children it has
 * waited for (cutime and cstime: a child that has ended and been reaped), in seconds, from /proc.
 */
export function cpuSecondsWithEndedChildren(pid: number): number {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    return (Number(fields[11]) + Number(fields[12]) + Number(fields[13]) + Number(fields[14])) / TICKS_PER_SECOND;
  } catch {
    return NaN; // gone
  }
}

/** Samples the RSS of every process of a tree on a timer and keeps each one's first and peak value. */
export class RssSampler {
  readonly first = new Map<number, number>();
  readonly peak = new Map<number, number>();
  private readonly timer: NodeJS.Timeout;

  constructor(private readonly root: number, everyMs: number) {
    this.sample();
    this.timer = setInterval(() => this.sample(), everyMs);
  }

  private sample() {
    for (const pid of processTree(this.root)) {
      const rss = rssOf(pid);
      if (!rss) continue;
      if (!this.first.has(pid)) this.first.set(pid, rss);
      this.peak.set(pid, Math.max(rss, this.peak.get(pid) ?? 0));
    }
  }

  stop() {
    this.sample();
    clearInterval(this.timer);
  }

  /** Per process: pid, RSS at the first sample and at the peak, in MB. */
  report(): Array<{ pid: number; beforeMB: number; peakMB: number }> {
    return [...this.peak].map(([pid, peak]) => ({ pid, beforeMB: toMB(this.first.get(pid)!), peakMB: toMB(peak) }));
  }
}
