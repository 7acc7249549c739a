// GET /swg-json (the document built at start-up) and Swagger UI at /swg, entirely from local
// files: koa2-swagger-ui renders the page, and swagger-ui-dist's files are served by our own
// route under /swg/assets, so opening the docs never contacts a CDN (or anything but this host).
//
// The document's JSON is some 3.2 MB: it is written on the first request for it, not at start
// (most processes never serve it), and kept gzipped (about 215 KB), which is also how a
// client that accepts gzip (every browser) gets it; another gets it unzipped (kept once asked).
import { readFile } from 'node:fs/promises';
import { promisify } from 'node:util';
import { gunzip, gzip } from 'node:zlib';
import { createRequire } from 'node:module';
import path from 'node:path';
import type { Context } from 'koa';
import type { Route } from '../route.js';

export const DOCS_PATH = '/swg';
export const DOCUMENT_PATH = '/swg-json';
const ASSETS_PATH = `${DOCS_PATH}/assets`;

const require = createRequire(import.meta.url);
const distDir = path.dirname(require.resolve('swagger-ui-dist/package.json'));
const distVersion: string = require('swagger-ui-dist/package.json').version;

/** The only files served from swagger-ui-dist: what the page asks for, by the name it uses. */
const ASSETS: Record<string, { file: string; type: string }> = {
  'swagger-ui-bundle.js': { file: 'swagger-ui-bundle.js', type: 'application/javascript; charset=utf-8' },
  'swagger-ui-standalone-preset.js': { file: 'swagger-ui-standalone-preset.js', type: 'application/javascript; charset=utf-8' },
  // koa2-swagger-ui's page links swagger-ui.min.css, which the dist package does not have.
  'swagger-ui.min.css': { file: 'swagger-ui.css', type: 'text/css; charset=utf-8' },
  'swagger-ui.css': { file: 'swagger-ui.css', type: 'text/css; charset=utf-8' },
  'favicon-32x32.png': { file: 'favicon-32x32.png', type: 'image/png' },
  'favicon-16x16.png': { file: 'favicon-16x16.png', type: 'image/png' },
};

/**
 * Only this host: even a remote URL that slipped into the page would not be fetched. Swagger UI
 * itself needs the page's inline script, inline styles and data: images.
 */
const CONTENT_SECURITY_POLICY = [
  "default-src 'self'",
  "script-src 'self' 'unsafe-inline'",
  "style-src 'self' 'unsafe-inline'",
  "img-src 'self' data:",
  "font-src 'self' data:",
  "connect-src 'self'",
  "frame-ancestors 'none'",
].join('; ');

const REMOTE_LINK = /<link\b[^>]*\bhref="(?:https?:)?\/\/[^"]*"[^>]*>\s*/gi;
const REMOTE_REFERENCE = /\b(?:src|href)="(?:https?:)?\/\//i;

/**
 * The page, rendered by koa2-swagger-ui without the web-font link its template hard-codes. Loaded
 * and rendered on the first visit, not at start: its template engine is several MB of each
 * worker's memory, and most processes never show the page.
 */
async function renderPage(): Promise<string> {
  const { koaSwagger } = await import('koa2-swagger-ui');
  const render = koaSwagger({
    title: 'Workforce Management API',
    routePrefix: DOCS_PATH,
    swaggerVersion: distVersion,
    swaggerCdnUrl: ASSETS_PATH,
    favicon: `${ASSETS_PATH}/${distVersion}/favicon-32x32.png`,
    hideTopbar: true,
    swaggerOptions: {
      url: DOCUMENT_PATH,
      // The default validator badge would send the document to a remote validator.
      validatorUrl: null,
      // The resource groups (tags), collapsed: the page opens on an index of the groups, and a
      // group opens on a click. 'list' opens on one scroll of every operation; its first one
      // shows no sooner (about 2 s either way, most of it Swagger UI's script and reading the
      // document: test/openapi/swagger-ui.test.ts bounds it).
      docExpansion: 'none',
      // A box that narrows the page to the groups and paths holding what is typed.
      filter: true,
      persistAuthorization: true,
    },
  });
  const page: { path: string; type?: string; body?: unknown } = { path: DOCS_PATH };
  void render(page as unknown as Context, async () => {});
  if (typeof page.body !== 'string') throw new Error('koa2-swagger-ui did not render the Swagger UI page');
  const html = page.body.replace(REMOTE_LINK, '');
  if (REMOTE_REFERENCE.test(html)) throw new Error('the Swagger UI page still references a remote asset');
  return html;
}

async function serveAsset(ctx: Context, cache: Map<string, Buffer>) {
  const asset = ASSETS[ctx.params.file];
  if (ctx.params.version !== distVersion || !asset) return; // falls through to the envelope's 404
  let content = cache.get(asset.file);
  if (!content) {
    content = await readFile(path.join(distDir, asset.file));
    cache.set(asset.file, content);
  }
  ctx.type = asset.type;
  // The version is in the path, so a cached copy never goes stale.
  ctx.set('Cache-Control', 'public, max-age=31536000, immutable');
  ctx.body = content;
}

const zipped = promisify(gzip);
const unzipped = promisify(gunzip);

/** `make`'s answer, made on the first call and kept; a failure is not kept: the next call makes it again. */
function keptOnceMade<T>(make: () => Promise<T>): () => Promise<T> {
  let kept: Promise<T> | undefined;
  return () =>
    (kept ??= make().catch((err) => {
      kept = undefined;
      throw err;
    }));
}

/** The document, the page that shows it and the page's assets: public, and outside the document. */
export function docsRoutes(document: Record<string, unknown>): Route[] {
  const page = keptOnceMade(renderPage);
  // Serialised once, on first use: the document never changes while the process runs. The plain
  // bytes are kept too once a client without gzip asked (not unzipped per request).
  const jsonZipped = keptOnceMade(async () => zipped(JSON.stringify(document)));
  const jsonPlain = keptOnceMade(async () => unzipped(await jsonZipped()));
  const cache = new Map<string, Buffer>();
  const served = (path: string, handler: Route['handler']): Route => ({ method: 'GET', path, access: 'public', handler, docs: false });
  const showPage: Route['handler'] = async (ctx) => {
    const html = await page();
    ctx.type = 'text/html; charset=utf-8';
    ctx.set('Content-Security-Policy', CONTENT_SECURITY_POLICY);
    ctx.body = html;
  };
  return [
    served(DOCUMENT_PATH, async (ctx) => {
      ctx.vary('Accept-Encoding');
      if (ctx.acceptsEncodings('gzip', 'identity') === 'gzip') {
        ctx.body = await jsonZipped();
        ctx.set('Content-Encoding', 'gzip');
      } else ctx.body = await jsonPlain();
      ctx.type = 'application/json; charset=utf-8';
    }),
    served(DOCS_PATH, showPage),
    served(`${DOCS_PATH}/`, showPage),
    served(`${ASSETS_PATH}/:version/:file`, (ctx) => serveAsset(ctx, cache)),
  ];
}
