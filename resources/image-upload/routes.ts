// The image routes beside the generated image-asset CRUD: upload (a multipart file becomes a
// record and a stored file), the stored file itself, and a delete that removes the file with its
// record. Declared before the generated routes, so this DELETE answers in place of theirs.
import { randomUUID } from 'node:crypto';
import type { Context } from 'koa';
import { callerOf } from '../../engine/http/context.js';
import { logEvent } from '../../engine/log/log.js';
import { badRequest, HttpError } from '../../engine/errors.js';
import { readMultipart } from '../../engine/http/multipart.js';
import type { Engine } from '../../engine/module.js';
import { writeContext } from '../../engine/resource/routes.js';
import { checkId, type ResourceService } from '../../engine/resource/service.js';
import { prepareWrite } from '../../engine/resource/write-body.js';
import { tagWritten } from '../../engine/http/conditional.js';
import { run } from '../../engine/resource/sql/runner.js';
import { insertStatement } from '../../engine/resource/sql/write.js';
import { keepVersion, versionOf } from '../../engine/resource/versions.js';
import { documentedOnce, type OperationDoc, type Route } from '../../engine/route.js';
import { fileDocs, uploadDocs } from './docs.js';
import { kindOfMimeType } from './kinds.js';
import { downloadName, nameFromFilename } from './names.js';
import { receiveImage, type ReceivedImage } from './receive.js';
import { ImageStore } from './storage.js';
import { CACHE_SECONDS, FILE_FIELD, NAME_FIELD } from './wire.js';

export const noStoredFile = () => new HttpError(404, 'This image asset has no stored file');

const STALE_INCOMING_MS = 60 * 60 * 1000;

/** These routes take no query parameters; one sent is a 400 rather than silently ignored. */
function refuseQuery(ctx: Context, route: string) {
  const names = [...new Set(new URLSearchParams(ctx.querystring).keys())];
  if (names.length) throw badRequest(names.map((name) => `${name} is not a supported parameter of ${route}; it takes none`));
}

export function imageRoutes(engine: Engine, service: ResourceService): Route[] {
  const { config, db } = engine;
  const resource = service.resource;
  const store = new ImageStore(config.uploadDir);
  // Uploads cut off by a crash left their part files behind; an hour is longer than any upload.
  store.sweepIncoming(STALE_INCOMING_MS).catch((err) => logEvent('warn', 'Could not sweep unfinished uploads', { error: String(err?.code ?? err) }));
  const nameMaxLength = resource.fields.get(NAME_FIELD)?.definition.maxLength ?? 255;
  const [canonical] = resource.paths;

  // Each handler runs after its declaration's permission check (callerOf, not authorize).
  async function upload(ctx: Context) {
    const caller = callerOf(ctx);
    refuseQuery(ctx, `POST /api/${canonical}/upload`);
    // The organization (header, caller's, or the tenant's only one) is settled before the body is
    // read: a request that cannot be stored is not streamed to disk first.
    const { row: defaults } = await prepareWrite(db, resource, caller, 'create', {}, writeContext(ctx, resource));
    const id = randomUUID();
    let incoming: string | undefined;
    let stored: string | undefined;
    let done = false;
    try {
      const { fields, file } = await readMultipart(
        ctx,
        { fileField: FILE_FIELD, textFields: [NAME_FIELD], maxFileBytes: config.uploadMaxBytes },
        async (part): Promise<ReceivedImage & { filename: string }> => {
          incoming = await store.incomingPath();
          return { ...(await receiveImage(part, incoming, config.uploadMaxBytes)), filename: part.filename };
        },
      );
      const given = fields[NAME_FIELD];
      const body = {
        // A blank name field is how a form sends "no name": the file's own name then.
        name: given !== undefined && given.trim() !== '' ? given : nameFromFilename(file.filename, nameMaxLength),
        width: file.width,
        height: file.height,
        size: file.size,
        mimeType: file.kind.mimeType,
      };
      // The organization settled above (null: the tenant's, when it has none to choose).
      const prepared = await prepareWrite(db, resource, caller, 'create', body, { organizationId: defaults.organizationId as string | null });
      // url is read-only for clients: it is written here, in the same insert, so no reader ever
      // sees the record without it; the file moves into place before the insert commits.
      const record = await db.transaction(async (trx) => {
        const [row] = await run(
          trx,
          insertStatement(resource, { ...prepared.row, id, url: `${config.apiBaseUrl}/api/${canonical}/${id}/file`, storageProvider: 'LOCAL', tenantId: caller.tenantId }, caller.userId),
        );
        stored = store.filePath(caller.tenantId, id, file.kind);
        await store.moveIntoPlace(incoming!, stored);
        incoming = undefined;
        return keepVersion(row);
      });
      done = true;
      ctx.status = 201;
      // Tagged as every create's answer is: the version its own insert returned.
      tagWritten(ctx, versionOf(record)!, false, record);
      ctx.body = record;
    } finally {
      // Any failure, the commit's included: neither the half-received file nor the moved one stays.
      if (!done) await store.discard(incoming, stored);
    }
  }

  async function serveFile(ctx: Context) {
    const caller = callerOf(ctx);
    refuseQuery(ctx, `GET /api/${canonical}/{id}/file`);
    const record = await service.read(caller, ctx.params.id);
    // Only an upload sets url: a record created without a file has none to look for.
    const id = String(record.id);
    const file = record.url ? await store.open(caller.tenantId, id, kindOfMimeType(String(record.mimeType))) : undefined;
    if (!file) throw noStoredFile();
    if (ctx.method === 'HEAD') {
      await file.handle.close();
      ctx.status = 200;
    } else {
      ctx.body = file.handle.createReadStream();
    }
    ctx.attachment(downloadName(record.name, id, file.kind), { type: 'inline' });
    // The type of the bytes on disk (the record's mimeType when it was uploaded), set after
    // attachment(), which guesses one from the name.
    ctx.type = file.kind.mimeType;
    ctx.length = file.size;
    ctx.set('X-Content-Type-Options', 'nosniff');
    ctx.set('Cache-Control', `private, max-age=${CACHE_SECONDS}`);
  }

  async function remove(ctx: Context) {
    const caller = callerOf(ctx);
    const id = checkId(ctx.params.id);
    await service.remove(caller, id);
    // The record is gone: the answer is a 204 whatever the disk says; a file it failed to remove
    // is logged for an operator rather than turned into an error the client cannot act on.
    await store.removeFiles(caller.tenantId, id).catch((err) =>
      logEvent('error', 'Image file not removed with its record', { tenantId: caller.tenantId, id, error: String(err?.code ?? err) }),
    );
    ctx.status = 204;
  }

  const { create, read, delete: del } = resource.permissions;
  const fileOps = fileDocs(resource);
  return resource.paths.flatMap((path): Route[] => {
    // An alias's routes are documented as the first path's (the document lists them in x-aliases).
    const documented = (docs: OperationDoc, sub: string) => documentedOnce(`/api/${path}${sub}`, `/api/${canonical}${sub}`, () => docs);
    return [
      // The upload reads its own (multipart) body: the JSON parser leaves it alone.
      { method: 'POST', path: `/api/${path}/upload`, permission: create, body: 'own', handler: upload, ...documented(uploadDocs(resource, config.uploadMaxBytes), '/upload') },
      { method: 'GET', path: `/api/${path}/:id/file`, permission: read, handler: serveFile, ...documented(fileOps.get, '/:id/file') },
      // The router answers a HEAD with the GET route registered first (serveFile leaves the body
      // out); this declaration gives the HEAD its documentation.
      { method: 'HEAD', path: `/api/${path}/:id/file`, permission: read, handler: serveFile, ...documented(fileOps.head, '/:id/file') },
      // Documented by the generated DELETE it answers in place of: the same permission and answers.
      { method: 'DELETE', path: `/api/${path}/:id`, permission: del, handler: remove, docs: false },
    ];
  });
}
