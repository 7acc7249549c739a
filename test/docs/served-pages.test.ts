// The reference pages of docs/ served read-only at /docs/{page}.md, the pages the OpenAPI
// document's intro links: each as the file holds it, as text a browser shows inline, without a
// token; any other name (another file of the repository, a path out of the folder, another
// spelling) the 404 envelope. And the intro: short, a line each, every link answering.
import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { DOCS_DIR } from '../../app/paths.js';
import { createTestApp, type TestApp } from '../helpers/app.js';
import { assertError } from '../helpers/error-envelope.js';

let t: TestApp;
test.before(async () => {
  t = await createTestApp();
});
test.after(async () => {
  await t?.close();
});

const PAGES = readdirSync(DOCS_DIR).filter((name) => name.endsWith('.md')).sort();

test('every page of docs/ is served as it is, as UTF-8 text, without a token; HEAD too', async () => {
  assert.ok(PAGES.length >= 10, PAGES.join(', '));
  for (const page of PAGES) {
    const res = await t.http.get(`/docs/${page}`).buffer(true).parse((r, done) => {
      const chunks: Buffer[] = [];
      r.on('data', (c: Buffer) => chunks.push(c));
      r.on('end', () => done(null, Buffer.concat(chunks)));
    });
    assert.is(res.status, 200, page);
    assert.is(res.headers['content-type'], 'text/plain; charset=utf-8', page);
    assert.is(res.headers['x-content-type-options'], 'nosniff');
    assert.ok((res.body as Buffer).equals(readFileSync(path.join(DOCS_DIR, page))), `${page} is served byte for byte`);
  }
  const head = await t.http.head('/docs/api-conventions.md');
  assert.is(head.status, 200);
  assert.is(head.headers['content-type'], 'text/plain; charset=utf-8');
});

test('any other name is the 404 envelope: other files, paths out of the folder, other spellings', async () => {
  const refused = [
    'nope.md',
    'api-conventions',
    'API-CONVENTIONS.md',
    'api-conventions.md.bak',
    '..%2FREADME.md',
    '..%2Fpackage.json',
    '%2e%2e%2fpackage.json',
    '..%5CREADME.md',
    '%2Fetc%2Fpasswd',
    'api-conventions.md%00.txt',
  ];
  for (const name of refused) {
    const res = await t.http.get(`/docs/${name}`);
    assertError(res, 404);
    assert.match(res.body.message, /^Cannot GET \/docs\//, name);
  }
  // The folder itself and what lies below a page are not pages either.
  assertError(await t.http.get('/docs'), 404);
  assertError(await t.http.get('/docs/api-conventions.md/x'), 404);
  // Read-only: another method is a 405 naming the ones it has.
  const post = await t.http.post('/docs/api-conventions.md').send({});
  assertError(post, 405);
  assert.is(post.headers.allow, 'GET, HEAD');
});

test('the intro is short, a line each for the token, lists, errors, rate limits and aliases, and each of its links answers', async () => {
  const description = String((t.openapi as Record<string, any>).info.description);
  assert.ok(description.length <= 1300, `the intro is ${description.length} characters`);
  const bullets = description.split('\n').filter((line) => line.startsWith('- '));
  assert.equal(bullets.map((line) => /^- \*\*([^*.]+)/.exec(line)?.[1]), ['Token', 'Lists', 'Errors', 'Rate limits', 'Aliases']);
  const links = [...description.matchAll(/\]\((\/docs\/[^)]+)\)/g)].map((m) => m[1]);
  assert.equal([...new Set(links)].sort(), ['/docs/api-conventions.md', '/docs/authentication.md', '/docs/query-language.md', '/docs/rate-limits.md']);
  for (const link of links) {
    const res = await t.http.get(link);
    assert.is(res.status, 200, link);
    assert.match(res.text, /^# /, `${link} is a page`);
  }
});

test('what the intro no longer says is said on the pages it links', async () => {
  const page = async (name: string) => (await t.http.get(`/docs/${name}`)).text.replace(/\s+/g, ' ');
  const conventions = await page('api-conventions.md');
  // Tenancy, the 405 and fixed paths, the 503s, body limits, UTF-8, request ids and every-answer headers.
  for (const said of [
    /the token's own tenant id \(in any case\) is accepted and ignored/,
    /`Allow` naming exactly the methods the OpenAPI document gives that path/,
    /`GET \/api\/tags\/search` is a 405 with `Allow: POST`, not a read of the id `search`/,
    /\| 503 \| the database does not answer/,
    /A JSON body nested deeper than `JSON_MAX_DEPTH` \(32\) levels is a 400/,
    /Text is UTF-8 or refused, never stored damaged/,
    /The server's log lines about the request carry it too/,
    /marked `x-every-answer: true`/,
    /`x-aliases`/,
  ]) {
    assert.match(conventions, said);
  }
  const query = await page('query-language.md');
  assert.match(query, /default 10, or the resource's maximum when that is smaller/);
  assert.match(query, /`GET \/api\/\{r\}\/pagination` \(Ever Gauzy's spelling\) is the list itself/);
  assert.match(query, /a number or boolean there may also be the text a query string would carry/);
  assert.match(query, /An operation whose document lists no query parameters \(a create, a replace\) does not read the query string/);
  assert.match(await page('security.md'), /Any other origin gets no CORS header/);
});

test.run();
