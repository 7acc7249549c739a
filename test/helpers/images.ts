// Tiny images of a known size, written byte by byte here so the upload tests depend on no image
// library and no binary fixtures: each is a real, decodable file of its format (one flat colour),
// just large enough for its format's header, plus a BMP for an image kind the upload refuses.
import { deflateSync } from 'node:zlib';

const u16le = (n: number) => Buffer.from([n & 0xff, (n >> 8) & 0xff]);
const u16be = (n: number) => Buffer.from([(n >> 8) & 0xff, n & 0xff]);
const u32le = (n: number) => { const b = Buffer.alloc(4); b.writeUInt32LE(n); return b; };
const u32be = (n: number) => { const b = Buffer.alloc(4); b.writeUInt32BE(n); return b; };

const CRC_TABLE = Array.from({ length: 256 }, (_, n) => {
  let c = n;
  for (let k = 0; k < 8; k++) c = c & 1 ? 0xedb88320 ^ (c >>> 1) : c >>> 1;
  return c >>> 0;
});

function crc32(bytes: Buffer): number {
  let c = 0xffffffff;
  for (const byte of bytes) c = CRC_TABLE[(c ^ byte) & 0xff] ^ (c >>> 8);
  return (c ^ 0xffffffff) >>> 0;
}

function pngChunk(type: string, data: Buffer): Buffer {
  const body = Buffer.concat([Buffer.from(type, 'ascii'), data]);
  return Buffer.concat([u32be(data.length), body, u32be(crc32(body))]);
}

/** An 8-bit RGB PNG filled with one colour; `animated`: an APNG of that one frame. */
export function png(width: number, height: number, rgb: [number, number, number] = [200, 30, 30], animated = false): Buffer {
  const header = Buffer.concat([u32be(width), u32be(height), Buffer.from([8, 2, 0, 0, 0])]);
  // Each scanline: filter type 0, then the pixels.
  const row = Buffer.concat([Buffer.from([0]), ...Array.from({ length: width }, () => Buffer.from(rgb))]);
  const pixels = Buffer.concat(Array.from({ length: height }, () => row));
  return Buffer.concat([
    Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]),
    pngChunk('IHDR', header),
    // acTL (1 frame, played forever) and the frame's fcTL (sequence 0, the whole image, no delay).
    ...(animated ? [pngChunk('acTL', Buffer.concat([u32be(1), u32be(0)])), pngChunk('fcTL', Buffer.concat([u32be(0), u32be(width), u32be(height), u32be(0), u32be(0), u16be(0), u16be(0), Buffer.from([0, 0])]))] : []),
    pngChunk('IDAT', deflateSync(pixels)),
    pngChunk('IEND', Buffer.alloc(0)),
  ]);
}

/**
 * A GIF89a with a two-colour table, every pixel colour 0. The LZW data repeats Clear before each
 * pixel, so the decoder's table never grows and every code stays 3 bits wide.
 */
export function gif(width: number, height: number): Buffer {
  const minCodeSize = 2;
  const clear = 1 << minCodeSize;
  const end = clear + 1;
  const codes = [...Array.from({ length: width * height }, () => [clear, 0]).flat(), end];
  const packed: number[] = [];
  let bits = 0;
  let nbits = 0;
  for (const code of codes) {
    bits |= code << nbits;
    nbits += 3;
    while (nbits >= 8) {
      packed.push(bits & 0xff);
      bits >>= 8;
      nbits -= 8;
    }
  }
  if (nbits) packed.push(bits & 0xff);
  const blocks: Buffer[] = [];
  for (let i = 0; i < packed.length; i += 255) {
    const block = packed.slice(i, i + 255);
    blocks.push(Buffer.from([block.length, ...block]));
  }
  return Buffer.concat([
    Buffer.from('GIF89a', 'ascii'),
    // Logical screen: global colour table of 2 entries, background 0, no aspect ratio.
    u16le(width), u16le(height), Buffer.from([0x80, 0, 0]),
    Buffer.from([0, 0, 0, 255, 255, 255]),
    // One image covering the screen, no local table, not interlaced.
    Buffer.from([0x2c]), u16le(0), u16le(0), u16le(width), u16le(height), Buffer.from([0]),
    Buffer.from([minCodeSize]), ...blocks, Buffer.from([0]),
    Buffer.from([0x3b]),
  ]);
}

function jpegSegment(marker: number, data: Buffer): Buffer {
  return Buffer.concat([Buffer.from([0xff, marker]), u16be(data.length + 2), data]);
}

/**
 * A baseline greyscale JPEG of one flat mid-grey: a single 8×8 block covers up to 8×8 pixels; its
 * DC difference and every AC coefficient are zero. Both Huffman tables hold one symbol (DC
 * category 0, AC end-of-block) coded as the single bit 0, so the scan is two bits, padded with ones.
 */
export function jpeg(width: number, height: number): Buffer {
  if (width > 8 || height > 8) throw new Error('jpeg(): one 8×8 block only');
  const oneSymbol = (tableClass: number, symbol: number) =>
    Buffer.concat([Buffer.from([(tableClass << 4) | 0, 1]), Buffer.alloc(15), Buffer.from([symbol])]);
  return Buffer.concat([
    Buffer.from([0xff, 0xd8]),
    jpegSegment(0xdb, Buffer.concat([Buffer.from([0]), Buffer.alloc(64, 1)])),
    jpegSegment(0xc0, Buffer.concat([Buffer.from([8]), u16be(height), u16be(width), Buffer.from([1, 1, 0x11, 0])])),
    jpegSegment(0xc4, oneSymbol(0, 0)),
    jpegSegment(0xc4, oneSymbol(1, 0)),
    jpegSegment(0xda, Buffer.from([1, 1, 0x00, 0, 63, 0])),
    Buffer.from([0x3f]),
    Buffer.from([0xff, 0xd9]),
  ]);
}

/** Bits written least significant first, as WebP lossless reads them. */
class BitWriter {
  private bytes: number[] = [];
  private current = 0;
  private used = 0;
  write(value: number, count: number) {
    for (let i = 0; i < count; i++) {
      this.current |= ((value >> i) & 1) << this.used;
      if (++this.used === 8) {
        this.bytes.push(this.current);
        this.current = 0;
        this.used = 0;
      }
    }
  }
  done(): Buffer {
    return Buffer.from(this.used ? [...this.bytes, this.current] : this.bytes);
  }
}

/**
 * A lossless WebP (VP8L) of one opaque colour: no transforms, no colour cache, and five prefix
 * codes of one symbol each (green, red, blue, alpha, distance), so every pixel takes zero bits.
 */
export function webp(width: number, height: number, [r, g, b]: [number, number, number] = [30, 120, 200]): Buffer {
  const bits = new BitWriter();
  bits.write(width - 1, 14);
  bits.write(height - 1, 14);
  bits.write(0, 1); // alpha is not used
  bits.write(0, 3); // version 0
  bits.write(0, 1); // no transform
  bits.write(0, 1); // no colour cache
  bits.write(0, 1); // no meta prefix codes
  for (const symbol of [g, r, b, 255, 0]) {
    bits.write(1, 1); // simple code
    bits.write(0, 1); // one symbol
    bits.write(1, 1); // written in 8 bits
    bits.write(symbol, 8);
  }
  const payload = Buffer.concat([Buffer.from([0x2f]), bits.done()]);
  const chunk = Buffer.concat([Buffer.from('VP8L', 'ascii'), u32le(payload.length), payload, payload.length % 2 ? Buffer.from([0]) : Buffer.alloc(0)]);
  return Buffer.concat([Buffer.from('RIFF', 'ascii'), u32le(4 + chunk.length), Buffer.from('WEBP', 'ascii'), chunk]);
}

/** A 24-bit BMP: a real image, of a kind the upload does not take. */
export function bmp(width: number, height: number): Buffer {
  const rowBytes = Math.ceil((width * 3) / 4) * 4;
  const pixels = Buffer.alloc(rowBytes * height, 0x80);
  const info = Buffer.concat([u32le(40), u32le(width), u32le(height), u16le(1), u16le(24), u32le(0), u32le(pixels.length), u32le(2835), u32le(2835), u32le(0), u32le(0)]);
  const size = 14 + info.length + pixels.length;
  return Buffer.concat([Buffer.from('BM', 'ascii'), u32le(size), u32le(0), u32le(14 + info.length), info, pixels]);
}
