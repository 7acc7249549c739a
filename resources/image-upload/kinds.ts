// The image kinds an upload takes, as file-type names them from the bytes. Each is stored with
// its own extension, and served with its own media type.
export interface ImageKind {
  mimeType: string;
  ext: string;
  /** How messages name the kind. */
  label: string;
}

export const IMAGE_KINDS: readonly ImageKind[] = [
  { mimeType: 'image/png', ext: 'png', label: 'PNG' },
  { mimeType: 'image/jpeg', ext: 'jpg', label: 'JPEG' },
  { mimeType: 'image/gif', ext: 'gif', label: 'GIF' },
  { mimeType: 'image/webp', ext: 'webp', label: 'WebP' },
];

/** file-type tells an animated PNG apart as image/apng; it is a PNG file all the same. */
const SAME_AS: Record<string, string> = { 'image/apng': 'image/png' };

export function kindOfMimeType(mimeType: string | undefined): ImageKind | undefined {
  if (!mimeType) return undefined;
  const normal = SAME_AS[mimeType] ?? mimeType;
  return IMAGE_KINDS.find((kind) => kind.mimeType === normal);
}

export const KINDS_IN_WORDS = 'a PNG, JPEG, GIF or WebP image';
