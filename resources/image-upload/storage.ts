// Where uploaded images live on disk: <uploadDir>/<tenantId>/<recordId>.<ext>. Every part of
// that path is ours (the token's tenant, a generated id, the extension of the sniffed kind), never
// a client's name. A file arrives under a generated name in <uploadDir>/.incoming and is moved
// into place only when its record is written; both folders are on the same disk, so the move is
// a rename.
import { randomUUID } from 'node:crypto';
import { mkdir, open, readdir, rename, rm, stat, type FileHandle } from 'node:fs/promises';
import path from 'node:path';
import { UUID_PATTERN } from '../../engine/resource/fields.js';
import { IMAGE_KINDS, type ImageKind } from './kinds.js';

const INCOMING = '.incoming';

/** A path segment made of an id: anything else would be a bug, never a path to follow. */
function idSegment(id: string): string {
  if (!UUID_PATTERN.test(id)) throw new Error(`not a UUID: ${JSON.stringify(id)}`);
  return id.toLowerCase();
}

export interface StoredFile {
  handle: FileHandle;
  kind: ImageKind;
  size: number;
}

export class ImageStore {
  constructor(private readonly root: string) {}

  /** A fresh name for a file on its way in (the folder is made if needed). */
  async incomingPath(): Promise<string> {
    const dir = path.join(this.root, INCOMING);
    await mkdir(dir, { recursive: true });
    return path.join(dir, `${randomUUID()}.part`);
  }

  filePath(tenantId: string, id: string, kind: ImageKind): string {
    return path.join(this.root, idSegment(tenantId), `${idSegment(id)}.${kind.ext}`);
  }

  async moveIntoPlace(from: string, to: string): Promise<void> {
    await mkdir(path.dirname(to), { recursive: true });
    await rename(from, to);
  }

  /**
   * The record's file, opened (so a delete in between cannot turn the answer into a broken
   * stream), looked for first under the kind its record names. Undefined when there is none.
   */
  async open(tenantId: string, id: string, preferred?: ImageKind): Promise<StoredFile | undefined> {
    const kinds = preferred ? [preferred, ...IMAGE_KINDS.filter((k) => k !== preferred)] : IMAGE_KINDS;
    for (const kind of kinds) {
      let handle: FileHandle;
      try {
        handle = await open(this.filePath(tenantId, id, kind), 'r');
      } catch (err: any) {
        if (err?.code === 'ENOENT') continue;
        throw err;
      }
      try {
        const stats = await handle.stat();
        if (stats.isFile()) return { handle, kind, size: stats.size };
      } catch (err) {
        await handle.close();
        throw err;
      }
      await handle.close();
    }
    return undefined;
  }

  /** Removes the record's file, whichever kind it is; no file is not an error. */
  async removeFiles(tenantId: string, id: string): Promise<void> {
    await Promise.all(IMAGE_KINDS.map((kind) => rm(this.filePath(tenantId, id, kind), { force: true })));
  }

  /**
   * Removes files left on their way in longer ago than `olderThanMs`: a request cleans up after
   * itself, but a process killed mid-upload cannot. Answers how many went.
   */
  async sweepIncoming(olderThanMs: number, now = Date.now()): Promise<number> {
    const dir = path.join(this.root, INCOMING);
    let names: string[];
    try {
      names = await readdir(dir);
    } catch (err: any) {
      if (err?.code === 'ENOENT') return 0;
      throw err;
    }
    let removed = 0;
    for (const name of names.filter((n) => n.endsWith('.part'))) {
      const file = path.join(dir, name);
      const stats = await stat(file).catch(() => undefined);
      if (stats && now - stats.mtimeMs > olderThanMs) {
        await rm(file, { force: true });
        removed += 1;
      }
    }
    return removed;
  }

  /** Removes files of a failed upload; a path not given or already gone is fine. */
  async discard(...paths: Array<string | undefined>): Promise<void> {
    await Promise.all(paths.filter((p): p is string => Boolean(p)).map((p) => rm(p, { force: true })));
  }
}
