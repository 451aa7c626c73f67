// The import rules of .dependency-cruiser.cjs (run by `npm run lint`) catch
// what they exist for: a small tree laid out as src/ is, once clean and once
// with a cycle or a layer crossed, checked with the project's own config.
import { execFileSync } from 'node:child_process';
import { mkdtempSync, mkdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';

const root = path.resolve(__dirname, '../..');
const depcruise = path.join(root, 'node_modules/.bin/depcruise');

jest.setTimeout(60_000);

/** Runs the project's rules over a tree of files (path → source); the violations' rule names, sorted. */
function violations(files: Record<string, string>): string[] {
  const dir = mkdtempSync(path.join(tmpdir(), 'imports-'));
  try {
    for (const [file, text] of Object.entries(files)) {
      mkdirSync(path.dirname(path.join(dir, file)), { recursive: true });
      writeFileSync(path.join(dir, file), text);
    }
    writeFileSync(path.join(dir, 'tsconfig.json'), JSON.stringify({ compilerOptions: { module: 'preserve', moduleResolution: 'bundler' }, include: ['src'] }));
    let out: string;
    try {
      out = execFileSync(depcruise, ['src', '--config', path.join(root, '.dependency-cruiser.cjs'), '--output-type', 'json'], { cwd: dir, encoding: 'utf8' });
    } catch (error) {
      // depcruise exits non-zero when there are violations; its JSON is on stdout all the same.
      out = (error as { stdout: string }).stdout;
    }
    const result = JSON.parse(out) as { summary: { violations: { rule: { name: string } }[] } };
    return [...new Set(result.summary.violations.map((v) => v.rule.name))].sort();
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

const clean = {
  'src/errors.ts': 'export class AppError extends Error {}\n',
  'src/db/index.ts': "import { AppError } from '../errors';\nexport const db = AppError;\n",
  'src/services/users.ts': "import { db } from '../db';\nexport const users = db;\n",
  'src/config.ts': "import { users } from './services/users';\nexport const config = users;\n",
  'src/app.ts': "import { config } from './config';\nexport const app = config;\n",
};

test('the layout the rules describe passes', () => {
  expect(violations(clean)).toEqual([]);
});

test('an import cycle fails, even one that closes through a type import', () => {
  expect(
    violations({ ...clean, 'src/db/index.ts': "import type { users } from '../services/users';\nexport const db = 1;\nexport type U = typeof users;\n" }),
  ).toEqual(expect.arrayContaining(['no-circular']));
});

test('storage or a service importing the configuration or a surface fails', () => {
  expect(
    violations({ ...clean, 'src/services/users.ts': "import { db } from '../db';\nimport { config } from '../config';\nexport const users = [db, config];\n" }),
  ).toEqual(expect.arrayContaining(['storage-and-rules-stay-inside']));
  expect(
    violations({ ...clean, 'src/http/caching.ts': 'export const x = 1;\n', 'src/db/index.ts': "import { x } from '../http/caching';\nexport const db = x;\n" }),
  ).toEqual(['storage-and-rules-stay-inside']);
});

test('src/ itself keeps the rules', () => {
  const out = execFileSync(depcruise, ['src', '--config', '.dependency-cruiser.cjs', '--output-type', 'err'], { cwd: root, encoding: 'utf8' });
  expect(out).toContain('no dependency violations found');
});
