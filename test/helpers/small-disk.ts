// A small disk of its own for a test (a tmpfs mount), to fill up and free again. Mounting needs
// root on Linux: where it is refused, the tests that need it are skipped, saying why.
import { execFileSync } from 'node:child_process';
import { closeSync, mkdtempSync, openSync, rmSync, statfsSync, unlinkSync, writeSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';

export interface SmallDisk {
  dir: string;
  /** Fills the disk until no more than `leaveBytes` are free (0: until a write fails with ENOSPC). */
  fill(leaveBytes?: number): void;
  /** Removes what fill() wrote: the room is back. */
  free(): void;
  freeBytes(): number;
  unmount(): void;
}

/** A tmpfs of `sizeMiB` mounted on a new folder, or why there cannot be one here. */
export function mountSmallDisk(sizeMiB: number): SmallDisk | { unavailable: string } {
  if (process.platform !== 'linux') return { unavailable: 'needs Linux (a tmpfs mount)' };
  if (process.getuid?.() !== 0) return { unavailable: 'needs root to mount a tmpfs' };
  const dir = mkdtempSync(path.join(tmpdir(), 'small-disk-'));
  try {
    execFileSync('mount', ['-t', 'tmpfs', '-o', `size=${sizeMiB}m`, 'tmpfs', dir], { stdio: 'pipe' });
  } catch (err: any) {
    rmSync(dir, { recursive: true, force: true });
    return { unavailable: `mount -t tmpfs failed: ${String(err?.stderr ?? err?.message ?? err).trim()}` };
  }
  const filler = path.join(dir, 'filler');
  const freeBytes = () => {
    const stats = statfsSync(dir);
    return stats.bavail * stats.bsize;
  };
  return {
    dir,
    freeBytes,
    fill(leaveBytes = 0) {
      const fd = openSync(filler, 'a');
      const chunk = Buffer.alloc(1024 * 1024, 1);
      try {
        for (;;) {
          const room = freeBytes() - leaveBytes;
          if (leaveBytes > 0 && room <= 0) break;
          writeSync(fd, chunk, 0, leaveBytes > 0 ? Math.min(chunk.length, room) : chunk.length);
        }
      } catch (err: any) {
        if (err?.code !== 'ENOSPC') throw err;
        // full
      } finally {
        closeSync(fd);
      }
    },
    free() {
      rmSync(filler, { force: true });
    },
    unmount() {
      try {
        unlinkSync(filler);
      } catch {
        // not there
      }
      execFileSync('umount', ['-l', dir], { stdio: 'pipe' });
      rmSync(dir, { recursive: true, force: true });
    },
  };
}
