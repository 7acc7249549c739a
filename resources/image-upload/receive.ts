// One uploaded file, from the request to a file on disk: counted while it streams (never held in
// memory whole), its kind recognised from its first bytes as soon as they have arrived (so a file
// of another kind is refused without reading the rest), and its width and height read from its
// header.
import { open, readFile, type FileHandle } from 'node:fs/promises';
import { badRequest, HttpError } from '../../engine/errors.js';
import { tooLarge, type IncomingFile } from '../../engine/http/multipart.js';
import { kindOfMimeType, KINDS_IN_WORDS, type ImageKind } from './kinds.js';

/** What file-type reads at most to tell a kind (its own sample size for streams). */
const SNIFF_BYTES = 4100;
/**
 * The start of the file kept for image-size: as much as image-size's own file reader takes. A
 * JPEG may carry more metadata than that before its size (ICC profiles, XMP): then the whole
 * file, at most the upload limit, is read back from disk once.
 */
const HEAD_BYTES = 512 * 1024;

export interface ReceivedImage {
  kind: ImageKind;
  width: number;
  height: number;
  /** Bytes. */
  size: number;
}

/** image-size's names for the kinds we take. */
const IMAGE_SIZE_TYPES: Record<string, string> = { 'image/png': 'png', 'image/jpeg': 'jpg', 'image/gif': 'gif', 'image/webp': 'webp' };

// file-type and image-size are loaded with the first upload, not at start (several MB of each
// worker's memory for a rare request).
const readers = async () => ({ ...(await import('file-type')), ...(await import('image-size')) });

async function sniff(head: Buffer): Promise<ImageKind> {
  const { fileTypeFromBuffer } = await readers();
  const found = await fileTypeFromBuffer(head);
  const kind = kindOfMimeType(found?.mime);
  if (kind) return kind;
  const what = found ? `the file is ${found.mime}` : 'the file is not an image of a known kind';
  throw new HttpError(415, `Unsupported media type: ${what}; send ${KINDS_IN_WORDS}`);
}

/** Width and height from the header; a file that sniffed as an image but has no readable header is a 400. */
async function dimensions(head: Buffer, kind: ImageKind): Promise<{ width: number; height: number }> {
  const { imageSize } = await readers();
  const unreadable = () => badRequest(`file could not be read as a ${kind.label} image (truncated or corrupt): its width and height are unknown`);
  let size: ReturnType<typeof imageSize>;
  try {
    // A copy with a buffer of its own: image-size reads through a DataView over the whole
    // underlying ArrayBuffer, so on a pooled Buffer a cut-short header would be completed with
    // whatever bytes follow it in the pool. On an exact-size buffer it throws instead.
    size = imageSize(new Uint8Array(head));
  } catch {
    throw unreadable();
  }
  const { width, height, type } = size;
  if (type !== IMAGE_SIZE_TYPES[kind.mimeType] || !(Number.isInteger(width) && width > 0 && Number.isInteger(height) && height > 0)) {
    throw unreadable();
  }
  return { width, height };
}

async function writeAll(handle: FileHandle, chunk: Buffer) {
  for (let offset = 0; offset < chunk.length; ) offset += (await handle.write(chunk, offset)).bytesWritten;
}

/**
 * Streams the file into `target` (created here, never overwritten) and answers what it is. Throws
 * a 415 for another kind, a 413 past `maxBytes`, a 400 for an empty or unreadable image; the
 * caller removes `target` whatever happens.
 */
export async function receiveImage(file: IncomingFile, target: string, maxBytes: number): Promise<ReceivedImage> {
  const handle = await open(target, 'wx');
  try {
    const head: Buffer[] = [];
    let headBytes = 0;
    let size = 0;
    let kind: ImageKind | undefined;
    for await (const chunk of file.stream as AsyncIterable<Buffer>) {
      size += chunk.length;
      if (headBytes < HEAD_BYTES) {
        const part = chunk.subarray(0, HEAD_BYTES - headBytes);
        head.push(part);
        headBytes += part.length;
      }
      // The kind before the size: a large file of another kind is a 415 whichever chunk size the
      // runtime delivers (Node 24 hands over bigger chunks than Node 20).
      if (!kind && headBytes >= SNIFF_BYTES) kind = await sniff(Buffer.concat(head));
      // The multipart reader stops at the limit too; counting here keeps this true on its own.
      if (size > maxBytes) throw tooLarge(maxBytes);
      await writeAll(handle, chunk);
    }
    // busboy ends a file cut at its limit normally, marking it truncated.
    if ((file.stream as { truncated?: boolean }).truncated) throw tooLarge(maxBytes);
    if (size === 0) throw badRequest('file should not be empty');
    const start = Buffer.concat(head);
    kind ??= await sniff(start);
    if (size <= headBytes) return { kind, size, ...(await dimensions(start, kind)) };
    try {
      return { kind, size, ...(await dimensions(start, kind)) };
    } catch {
      return { kind, size, ...(await dimensions(await readFile(target), kind)) };
    }
  } finally {
    await handle.close();
  }
}
