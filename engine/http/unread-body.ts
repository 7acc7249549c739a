// What becomes of a request body that the answer did not wait for: a refusal before the body is
// read (401, 403, 415, 429, a 404) or while it is read (413, a multipart or import failure). This
// is the one place that decides it, for every route.
//
// Left alone, Node either reads such a body to its end after the answer, however large (the
// connection is busy discarding it), or, when a reader stopped half-way, never reads it again: the
// answer says keep-alive, and the next request on the connection (a pooling client's or a load
// balancer's, possibly another user's) waits behind the unread bytes until the connection times out.
//
// Once the answer is known:
// - the whole body has arrived: nothing to do (Node drops whatever nobody read);
// - the rest is small and announced (Content-Length up to DRAIN_BYTES): it is read and dropped
//   after the answer, and the connection stays usable, as Go's server does;
// - anything else (a larger or chunked body): the answer carries `Connection: close` and the
//   connection closes after it. It closes lingering: the server sends its end of the connection
//   at once, then goes on reading and dropping what the client still sends, until the client
//   closes or LINGER_MS have passed. Closing at once with unread bytes would make the kernel reset
//   the connection, and a client still sending its body would lose the answer it had not read yet.
import type { IncomingMessage } from 'node:http';
import type { Socket } from 'node:net';
import type { Context, Next } from 'koa';

/** The largest announced body read to its end after an answer that did not need it. */
export const DRAIN_BYTES = 64 * 1024;
/** How long a closing connection goes on reading what the client still sends, at most. */
export const LINGER_MS = 2000;

export interface UnreadBodyLimits {
  drainBytes: number;
  lingerMs: number;
}

/** The socket closes once its answer is sent (Node calls destroySoon then), lingering as described above. */
function closeLingering(req: IncomingMessage, lingerMs: number) {
  const socket = req.socket as Socket;
  socket.destroySoon = function lingeringClose(this: Socket) {
    if (this.writable) this.end();
    // The HTTP parser goes on reading the rest of the body into the request, which drops it; when
    // the client closes too, Node destroys the socket.
    req.resume();
    const timer = setTimeout(() => this.destroy(), lingerMs);
    timer.unref();
    this.once('close', () => clearTimeout(timer));
  };
}

export function unreadBody(limits: UnreadBodyLimits = { drainBytes: DRAIN_BYTES, lingerMs: LINGER_MS }) {
  return async function unreadBody(ctx: Context, next: Next) {
    await next();
    const req = ctx.req;
    // The usual case, a body read to its end or none at all: one property read.
    if (req.complete) return;
    const length = ctx.request.length;
    if (length !== undefined && length <= limits.drainBytes) {
      // A reader that stopped half-way paused the request; what Node has not dropped yet, it now does.
      req.resume();
      return;
    }
    ctx.set('Connection', 'close');
    closeLingering(req, limits.lingerMs);
  };
}
