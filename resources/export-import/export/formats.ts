// Keyset batches → text chunks of a CSV file or a JSON array, a few rows per chunk, so a download
// holds at most one batch of rows in memory whatever the row count. The chunk generators are
// pulled by a Readable (backpressure: a slow client stops the queries, not only the writes).
import { Readable } from 'node:stream';
import { stringify } from 'csv-stringify/sync';
import { csvCell } from './cells.js';
import type { Row } from './rows.js';

export type ExportFormat = 'csv' | 'json';
export const EXPORT_FORMATS: readonly ExportFormat[] = ['csv', 'json'];

export const CONTENT_TYPES: Record<ExportFormat, string> = {
  csv: 'text/csv; charset=utf-8',
  json: 'application/json; charset=utf-8',
};

/**
 * RFC 4180: fields holding a comma, a double quote or a line break are quoted (quotes doubled),
 * every record ends with CRLF, the last one included. UTF-8 without a byte order mark.
 */
const CSV_OPTIONS = { record_delimiter: '\r\n', eof: true } as const;

/**
 * Rows per chunk of text. A batch is cut into chunks of this many rows so that each chunk stays
 * well under V8's large-object size (about 128 KB): a string above it is made in the old
 * generation, which a long download then fills with chunks already sent until a full collection.
 */
const ROWS_PER_CHUNK = 100;

/**
 * Each batch as text chunks, made at once, its rows let go before the first chunk is sent. While
 * a client takes the chunks only their text is held, not a batch of row objects several times its
 * size: objects that outlive two young collections (a slow client, a busy machine) are moved to
 * the old generation, which a long download would otherwise fill until a full collection.
 */
async function* textChunks(batches: AsyncIterable<Row[]>, toText: (rows: Row[]) => string): AsyncGenerator<string> {
  for await (const batch of batches) {
    const texts: string[] = [];
    for (let start = 0; start < batch.length; start += ROWS_PER_CHUNK) texts.push(toText(batch.slice(start, start + ROWS_PER_CHUNK)));
    // The batch is this generator's to drop (keysetBatches keeps no row of it).
    batch.length = 0;
    yield* texts;
  }
}

/** The header row (the resource's visible columns) with the first chunk, then the rows, a few at a time. */
export async function* csvChunks(columns: string[], batches: AsyncIterable<Row[]>): AsyncGenerator<string> {
  const header = stringify([columns.map(csvCell)], CSV_OPTIONS);
  let first = true;
  const rowsText = (rows: Row[]) => stringify(rows.map((row) => columns.map((column) => csvCell(row[column]))), CSV_OPTIONS);
  for await (const text of textChunks(batches, rowsText)) {
    yield first ? header + text : text;
    first = false;
  }
  if (first) yield header;
}

/** One JSON array; each record serialised as the API answers it (JSON.stringify: dates ISO 8601). */
export async function* jsonChunks(batches: AsyncIterable<Row[]>): AsyncGenerator<string> {
  let opening = '[';
  for await (const text of textChunks(batches, (rows) => rows.map((row) => JSON.stringify(row)).join(','))) {
    yield opening + text;
    opening = ',';
  }
  yield opening === '[' ? '[]' : ']';
}

/**
 * The generator with its first chunk already fetched: a database that fails at once is still
 * answered with an error envelope (503), since no byte of the download has been sent yet.
 */
export async function primed<T>(source: AsyncGenerator<T>): Promise<AsyncGenerator<T>> {
  const first = await source.next();
  return (async function* () {
    try {
      if (first.done) return;
      yield first.value;
      yield* source;
    } finally {
      // A client that goes away mid-download ends the queries too.
      await source.return(undefined);
    }
  })();
}

/** Bytes, pulled one chunk at a time when the reader wants more. */
export const byteStream = (chunks: AsyncIterable<string>): Readable => Readable.from(chunks, { objectMode: false });
