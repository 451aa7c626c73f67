// `npm run codegen:check`: regenerates everything (`npm run generate`) and
// fails when that changed a checked-in file or added one, naming the files.
//
// Checked: the GraphQL codegen output (src/__generated__/graphql.ts,
// resolvers-types.ts, resolvers.ts) and the resolver files the server preset
// writes into (src/graphql: a stub for a root field without a resolver, a
// field resolver stub where a mapper and its GraphQL type differ). The Prisma
// client (src/__generated__/prisma) is git-ignored: it is only regenerated, so
// that the GraphQL codegen, which reads the Prisma models, sees the current ones.
//
// And the examples' generated code: examples/frontend's typed documents and
// persisted-documents manifest, examples/relay's artifacts (relay-compiler:
// a document relay-compiler refuses fails `generate`, so CI compiles the Relay
// app's documents against the current schema), and rest-client's types.
//
// It compares with the last commit, so run it on a clean tree (CI does).
import { spawnSync } from 'node:child_process';

const PATHS = [
  'src/__generated__',
  'src/graphql',
  'examples/frontend/src/__generated__',
  'examples/relay/src/__generated__',
  'examples/rest-client/src/__generated__',
];

const generate = spawnSync('npm', ['run', '-s', 'generate'], { stdio: 'inherit' });
if (generate.status !== 0) {
  console.error('codegen:check: `npm run generate` failed');
  process.exit(generate.status ?? 1);
}

const status = spawnSync('git', ['status', '--porcelain', '--untracked-files=all', '--', ...PATHS], { encoding: 'utf8' });
if (status.status !== 0) {
  console.error(status.stderr);
  process.exit(1);
}
const lines = status.stdout.split('\n').filter(Boolean);
if (lines.length === 0) process.exit(0);

console.error('codegen:check: generated code is stale, or a resolver is missing. `npm run generate` changed:');
for (const line of lines) {
  const file = line.slice(3);
  const note = line.startsWith('??')
    ? file.startsWith('src/graphql/resolvers/')
      ? 'new resolver stub: a schema field has no resolver; implement it'
      : 'new file'
    : file.startsWith('src/graphql/resolvers/')
      ? 'changed: codegen added resolver stubs (see their comments)'
      : 'changed';
  console.error(`  ${file}: ${note}`);
}
console.error('Run `npm run generate`, implement any stubs (`npm run typecheck` points at them), and commit.');
process.exit(1);
