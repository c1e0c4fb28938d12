// The links between README.md and docs/*.md: each relative link names a file that exists,
// and each #anchor into a markdown file names one of its headings (GitHub's slugs), so a
// section moved or renamed cannot leave a reader at a dead link.
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { dirname, join, normalize } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';

const ROOT = fileURLToPath(new URL('../..', import.meta.url));
const FILES = [
  'README.md',
  ...readdirSync(join(ROOT, 'docs'))
    .filter((f) => f.endsWith('.md'))
    .map((f) => `docs/${f}`),
];
const read = (file: string) => readFileSync(join(ROOT, file), 'utf8');

/** GitHub's anchor of a heading: lower case, punctuation but `-` and `_` dropped, spaces as `-`. */
const slug = (heading: string) =>
  heading
    .trim()
    .toLowerCase()
    .replace(/[^\p{L}\p{N}_\- ]/gu, '')
    .replace(/ /g, '-');

const anchorsOf = (file: string) => new Set([...read(file).matchAll(/^#+ (.*)$/gm)].map((m) => slug(m[1]!)));

describe('links in README.md and docs/', () => {
  it('finds the documents and their links', () => {
    expect(FILES.length).toBeGreaterThan(5);
    expect(FILES.flatMap((f) => [...read(f).matchAll(/\]\((?!https?:)[^)\s]+\)/g)]).length).toBeGreaterThan(20);
  });

  it.each(FILES)('%s: every relative link reaches a file, and every anchor a heading', (file) => {
    const dead: string[] = [];
    for (const [, target] of read(file).matchAll(/\]\(([^)\s]+)\)/g)) {
      if (/^[a-z]+:/.test(target!)) continue;
      const [path, anchor] = target!.split('#') as [string, string | undefined];
      const reached = path === '' ? file : normalize(join(dirname(file), path));
      if (!existsSync(join(ROOT, reached))) dead.push(`${target}: no such file`);
      else if (anchor !== undefined && reached.endsWith('.md') && !anchorsOf(reached).has(anchor))
        dead.push(`${target}: no such heading`);
    }
    expect(dead).toEqual([]);
  });
});
