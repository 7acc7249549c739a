// A zip streamed entry by entry: the next entry is opened (its first query run) only once the
// previous one has been written into the archive, so one entry's rows at a time are in memory
// and a slow client holds back the queries through the archive's backpressure.
import { once } from 'node:events';
import type { Readable } from 'node:stream';
import type archiver from 'archiver';

export interface ZipEntry {
  name: string;
  open(): Readable | Promise<Readable>;
}

/**
 * The archive stream to send. A failing entry destroys the archive with its error, which ends the
 * response unfinished (the client sees a truncated transfer, never a complete-looking zip).
 */
export async function zipStream(entries: ZipEntry[]): Promise<archiver.Archiver> {
  // Loaded with the first zip, not at start: a few MB of every worker's memory for a rare request.
  const { default: archiver } = await import('archiver');
  // Level 6 (zlib's default): CSV shrinks to a fraction; export is rate limited as CPU intensive.
  const archive = archiver('zip', { zlib: { level: 6 } });
  const closed = new AbortController();
  archive.once('close', () => closed.abort());
  let current: Readable | undefined;

  const fill = async () => {
    for (const entry of entries) {
      current = await entry.open();
      current.once('error', (err) => archive.destroy(err));
      const written = once(archive, 'entry', { signal: closed.signal });
      archive.append(current, { name: entry.name, date: new Date() });
      await written;
    }
    await archive.finalize();
  };
  fill().catch((err) => {
    // The archive was destroyed (client gone, or an entry failed): stop the entry being read.
    current?.destroy();
    if (!archive.destroyed) archive.destroy(err);
  });
  return archive;
}
