// `npm run -s stack < file`: copies its input (a stack trace, log lines) to
// stdout with each position in dist/main.js — the bundle (scripts/build.mjs),
// whose lines say nothing to a reader — replaced by the TypeScript file, line
// and column it was compiled from, through dist/main.js.map. For stacks a
// service logged without source maps; a process started with
// NODE_OPTIONS=--enable-source-maps maps its own (at a cost: docs/operation.md,
// "Reading a stack trace").
import { readFileSync } from 'node:fs';
import { SourceMap } from 'node:module';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const DIST = path.join(ROOT, 'dist');
const map = new SourceMap(JSON.parse(readFileSync(path.join(DIST, 'main.js.map'), 'utf8')));

const input = readFileSync(0, 'utf8');
process.stdout.write(
  input.replace(/[^\s("']*dist\/main\.js:(\d+):(\d+)/g, (position, line, column) => {
    // Zero-based in the map, one-based in stack traces.
    const entry = map.findEntry(Number(line) - 1, Number(column) - 1);
    if (!entry?.originalSource) return position;
    const file = entry.originalSource.startsWith('file:') ? fileURLToPath(entry.originalSource) : path.resolve(DIST, entry.originalSource);
    return `${path.relative(ROOT, file)}:${entry.originalLine + 1}:${entry.originalColumn + 1}`;
  }),
);
