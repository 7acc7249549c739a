// A server child's JSON log lines as they come: its stdout cut into lines (a chunk may end mid
// line), each line that parses as JSON handed on; any other line is not a log line and is skipped.
import type { Readable } from 'node:stream';

export function onJsonLines(stream: Readable, each: (entry: Record<string, any>) => void): void {
  let rest = '';
  stream.on('data', (chunk: Buffer) => {
    const lines = (rest + chunk.toString()).split('\n');
    rest = lines.pop()!;
    for (const line of lines) {
      let entry: Record<string, any>;
      try {
        entry = JSON.parse(line);
      } catch {
        continue; // not a log line
      }
      each(entry);
    }
  });
}
