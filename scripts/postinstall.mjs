// `npm install`'s postinstall. In a development install (dev dependencies
// present): generates the Prisma client (scripts/prisma-generate.mjs), then
// compiles dist/ (scripts/build.mjs), so that `npm install && npm start` is
// all a fresh clone needs. In a production install (`npm ci --omit=dev
// --omit=optional` in a tree that already holds dist/) there is nothing to
// generate or compile, and no tool to do it with: it checks that dist/ is
// there. A production install of an unbuilt tree fails here, naming the way
// to build one (docs/operation.md, Deploying), rather than at the first start.
import { spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { createRequire } from 'node:module';

const require = createRequire(import.meta.url);
const has = (name) => {
  try {
    require.resolve(name);
    return true;
  } catch {
    return false;
  }
};

if (has('prisma/build/index.js') && has('@swc/core') && has('esbuild')) {
  for (const script of ['scripts/prisma-generate.mjs', 'scripts/build.mjs']) {
    const result = spawnSync(process.execPath, [script], { stdio: ['ignore', 'inherit', 'inherit'] });
    if (result.status !== 0) process.exit(result.status ?? 1);
  }
} else if (!existsSync('dist/.build.json')) {
  console.error(
    'postinstall: no dist/ here, and no way to build one: this install left out the dev dependencies ' +
      '(prisma, @swc/core, esbuild). A production install is made from a built tree: `npm install` (builds dist/), then ' +
      '`npm prune --omit=dev --omit=optional` (docs/operation.md, Deploying).',
  );
  process.exit(1);
}
