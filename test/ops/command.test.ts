// The command the service runs with is written in four places that cannot
// import it: package.json's start script, the Dockerfile's CMD and the
// deployment docs say what scripts/lib/compiled.ts says.
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { SERVICE_NODE_FLAGS } from '../../scripts/lib/compiled';

const root = path.resolve(__dirname, '../..');
const read = (file: string) => readFileSync(path.join(root, file), 'utf8');
const command = ['node', ...SERVICE_NODE_FLAGS, 'dist/main.js'];

test("npm start runs the service with the service's node flags", () => {
  const pkg = JSON.parse(read('package.json')) as { scripts: Record<string, string> };
  expect(pkg.scripts.start).toBe(command.join(' '));
});

test("the Dockerfile's CMD is the same command", () => {
  const cmd = /^CMD (\[.*\])$/m.exec(read('Dockerfile'))?.[1];
  expect(JSON.parse(cmd ?? 'null')).toEqual(command);
});

test('docs/operation.md tells operators the same command, and never the service without its flags', () => {
  const docs = read('docs/operation.md');
  expect(docs).toContain(command.join(' '));
  expect(docs).not.toMatch(/node dist\/main\.js/);
});
