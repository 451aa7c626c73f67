// The documentation is split across README.md, docs/ and the figures' files
// (BENCHMARKS, RELIABILITY, SCALING): every relative link among them must
// reach a file, and every #anchor a heading of it, so that moving a section
// cannot leave a reader at a dead end.
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';

const ROOT = path.join(__dirname, '..', '..');
const FILES = [
  ...readdirSync(ROOT).filter((f) => f.endsWith('.md')),
  ...readdirSync(path.join(ROOT, 'docs')).map((f) => `docs/${f}`),
  'examples/README.md',
  'test/README.md',
];

/** GitHub's anchor for a heading: lower case, punctuation dropped, spaces as dashes. */
const slug = (heading: string) =>
  heading
    .trim()
    .toLowerCase()
    .replace(/[^\p{L}\p{N}_\- ]/gu, '')
    .replace(/ /g, '-');

function anchorsOf(file: string): Set<string> {
  const anchors = new Set<string>();
  let fenced = false;
  for (const line of readFileSync(path.join(ROOT, file), 'utf8').split('\n')) {
    if (line.startsWith('```')) fenced = !fenced;
    const heading = /^#{1,6} (.*)$/.exec(line);
    if (!fenced && heading) anchors.add(slug(heading[1] ?? ''));
  }
  return anchors;
}

test.each(FILES)('%s: every relative link reaches a file and a heading', (file) => {
  const broken: string[] = [];
  for (const [, target = ''] of readFileSync(path.join(ROOT, file), 'utf8').matchAll(/\]\(([^)\s]+)\)/g)) {
    if (/^[a-z]+:/.test(target)) continue;
    const [relative, anchor] = target.split('#');
    const linked = relative ? path.normalize(path.join(path.dirname(file), relative)) : file;
    if (!existsSync(path.join(ROOT, linked))) broken.push(`${target}: no such file`);
    else if (anchor && linked.endsWith('.md') && !anchorsOf(linked).has(anchor)) broken.push(`${target}: no such heading`);
  }
  expect(broken).toEqual([]);
});
