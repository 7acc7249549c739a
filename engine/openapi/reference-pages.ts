// The application's reference pages (a folder of Markdown, the project's docs/) served read-only
// at GET /docs/{page}.md, so that the links of the document's intro work from Swagger UI. Served
// as text/plain (a browser shows it inline); only the files the folder held at start, looked up
// by their exact name, so no request can name a path. Outside /api and outside the document,
// like /swg and /swg-json.
import { readdirSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import path from 'node:path';
import type { Route } from '../route.js';

export const REFERENCE_PATH = '/docs';

/** `/docs/rate-limits.md` for the page `rate-limits`. */
export const referencePageUrl = (page: string) => `${REFERENCE_PATH}/${page}.md`;

/** A page's file name: a plain name, no folder, no dot file. */
const PAGE_FILE = /^[A-Za-z0-9][A-Za-z0-9_-]*\.md$/;

/** The pages of a folder (each *.md directly in it) by file name, with their paths; none without a folder. */
export function referencePages(dir: string | undefined): ReadonlyMap<string, string> {
  if (!dir) return new Map();
  const files = readdirSync(dir, { withFileTypes: true }).filter((entry) => entry.isFile() && PAGE_FILE.test(entry.name));
  return new Map(files.map((entry) => [entry.name, path.join(dir, entry.name)]));
}

/** A page the intro links that the folder lacks is a start-up error: the link would be a 404. */
export function checkLinkedPages(linked: Iterable<string>, pages: ReadonlyMap<string, string>, dir: string | undefined) {
  for (const page of linked) {
    if (!pages.has(`${page}.md`)) throw new Error(`The OpenAPI document links ${referencePageUrl(page)}, but ${dir ?? 'no reference folder (docsDir)'} holds no ${page}.md`);
  }
}

/** GET /docs/:page: a page by its file name, else (any other name) the envelope's 404. */
export function referenceRoutes(pages: ReadonlyMap<string, string>): Route[] {
  if (!pages.size) return [];
  const handler: Route['handler'] = async (ctx) => {
    const file = pages.get(ctx.params.page);
    if (!file) return; // falls through to the envelope's 404
    let text: Buffer;
    try {
      text = await readFile(file);
    } catch (err) {
      // Removed or replaced by a folder since start: gone, as for a name never served.
      if (['ENOENT', 'EISDIR'].includes((err as NodeJS.ErrnoException).code ?? '')) return;
      throw err;
    }
    ctx.type = 'text/plain; charset=utf-8';
    ctx.body = text;
  };
  return [{ method: 'GET', path: `${REFERENCE_PATH}/:page`, access: 'public', handler, docs: false }];
}
