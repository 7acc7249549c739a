// Share link tokens: 32 random bytes (256 bits) in base64url, shown once to whoever creates the
// link; only their SHA-256 is stored. A token that guessing cannot reach needs no slow hash, and
// the hash stays an exact-match key: a link is found by one indexed lookup of the hash, so no
// comparison of a stored secret with the presented one runs in the service (nothing to time).
import { createHash, randomBytes } from 'node:crypto';

const TOKEN_BYTES = 32;

/** What newShareToken makes: 43 base64url characters. Anything else is no token of ours. */
const TOKEN_SHAPE = /^[A-Za-z0-9_-]{43}$/;

export const newShareToken = () => randomBytes(TOKEN_BYTES).toString('base64url');

export const hashShareToken = (token: string) => createHash('sha256').update(token).digest('hex');

export const isShareTokenShape = (value: string) => TOKEN_SHAPE.test(value);
