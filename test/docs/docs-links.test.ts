// The documentation holds together: every relative link of README.md, docs/*.md and
// bench/README.md names a file that exists and, with a #anchor, a heading of that file; and no
// page sends its reader to a document that is not in the repository (the rule is said instead).
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import path from 'node:path';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { PROJECT_ROOT } from '../../app/paths.js';

const PAGES = ['README.md', 'bench/README.md', ...readdirSync(path.join(PROJECT_ROOT, 'docs')).filter((f) => f.endsWith('.md')).map((f) => `docs/${f}`)];

/** The text outside fenced code blocks and inline code, where a link is a link. */
function prose(markdown: string): string {
  return markdown.replace(/^```[\s\S]*?^```/gm, '').replace(/`[^`\n]*`/g, '');
}

/** GitHub's anchor of a heading: lower case, punctuation dropped, spaces as hyphens; repeats get -1, -2. */
function anchorsOf(markdown: string): Set<string> {
  const seen = new Map<string, number>();
  const anchors = new Set<string>();
  for (const [, text] of prose(markdown).matchAll(/^#{1,6} +(.+?) *#* *$/gm)) {
    const base = text
      .toLowerCase()
      .replace(/[^\p{L}\p{N}\s_-]/gu, '')
      .replace(/\s/g, '-');
    const count = seen.get(base) ?? 0;
    seen.set(base, count + 1);
    anchors.add(count ? `${base}-${count}` : base);
  }
  return anchors;
}

/** Every [text](target) and ![alt](target) of a page's prose. */
function linksOf(markdown: string): string[] {
  return [...prose(markdown).matchAll(/!?\[[^\]]*\]\(([^)\s]+)(?: "[^"]*")?\)/g)].map((m) => m[1]);
}

const read = (page: string) => readFileSync(path.join(PROJECT_ROOT, page), 'utf8');

test('the pages exist, and the README stays an entry page', () => {
  for (const page of PAGES) assert.ok(existsSync(path.join(PROJECT_ROOT, page)), page);
  const lines = read('README.md').split('\n').length;
  assert.ok(lines <= 200, `README.md has ${lines} lines; the reference belongs in docs/`);
});

test('every relative link names a file that exists, and a #anchor one of its headings', () => {
  const broken: string[] = [];
  for (const page of PAGES) {
    for (const link of linksOf(read(page))) {
      if (/^[a-z][a-z0-9+.-]*:/i.test(link)) continue; // https:, mailto: and the like
      const [file, anchor] = link.split('#') as [string, string | undefined];
      const target = file ? path.normalize(path.join(path.dirname(page), decodeURI(file))) : page;
      const full = path.join(PROJECT_ROOT, target);
      if (target.startsWith('..') || !existsSync(full)) {
        broken.push(`${page}: ${link} (no file ${target})`);
        continue;
      }
      if (anchor === undefined) continue;
      if (statSync(full).isDirectory() || !target.endsWith('.md')) broken.push(`${page}: ${link} (an anchor into a file that is not a page)`);
      else if (!anchorsOf(read(target)).has(anchor)) broken.push(`${page}: ${link} (no heading #${anchor} in ${target})`);
    }
  }
  assert.equal(broken, []);
});

test('no page refers to a document outside the repository', () => {
  const found: string[] = [];
  for (const page of PAGES) {
    read(page)
      .split('\n')
      .forEach((line, i) => {
        if (/\b(SPEC|CONTRACT|ARCHITECTURE|RESOURCES|STACK)\b|§/.test(line)) found.push(`${page}:${i + 1}: ${line.trim()}`);
      });
  }
  assert.equal(found, []);
});

test.run();
