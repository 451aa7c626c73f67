// `npm run -s stack`: positions in dist/main.js (the bundle, built by
// global-setup) mapped back to the TypeScript they came from.
import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { SERVICE_MAIN } from '../../scripts/lib/compiled';

const root = path.resolve(__dirname, '../..');

/** One-based line and column of `text`'s first occurrence in `file`. */
function positionOf(file: string, text: string): { line: number; column: number } {
  const lines = readFileSync(file, 'utf8').split('\n');
  const line = lines.findIndex((content) => content.includes(text));
  if (line < 0) throw new Error(`${text} is not in ${file}`);
  return { line: line + 1, column: lines[line]!.indexOf(text) + 1 };
}

const mapped = (input: string) => execFileSync(process.execPath, [path.join(root, 'scripts', 'stack.mjs')], { input, encoding: 'utf8' });

test('a frame in the bundle is shown at its TypeScript file and line; the rest of the text is left as it was', () => {
  const bundled = positionOf(SERVICE_MAIN, 'function collectStartupGarbage(');
  const source = positionOf(path.join(root, 'src', 'startup-gc.ts'), 'function collectStartupGarbage(');
  // As a deployed tree logs it (another root), inside a JSON log line's escaped stack.
  const line = `{"err":{"stack":"Error: boom\\n    at collectStartupGarbage (/srv/app/dist/main.js:${bundled.line}:${bundled.column})\\n    at node:internal/timers:594:17"}}\n`;
  expect(mapped(line)).toBe(line.replace(`/srv/app/dist/main.js:${bundled.line}:${bundled.column}`, `src/startup-gc.ts:${source.line}:${source.column}`));
});
