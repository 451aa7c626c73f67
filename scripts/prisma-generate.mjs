// Generates the Prisma client (src/__generated__/prisma, git-ignored) from
// prisma/schema.prisma. Runs at every development install (postinstall, through
// scripts/postinstall.mjs, before the build compiles it into dist/), in
// `npm run generate`, and so in CI.
//
// `prisma` (the CLI, the only supported way to run the `prisma-client`
// generator) is a dev dependency: the client is generated and compiled where
// the dev dependencies are, and a production tree runs the compiled client on
// @prisma/client's runtime alone (docs/operation.md, Deploying). Hosts that have Prisma's
// engines can still run `prisma migrate deploy` from a development install.
//
// The CLI fetches its schema-engine binary on start, even for `generate`,
// which does not use it; pointing PRISMA_SCHEMA_ENGINE_BINARY at any existing
// file skips that download. (npm 11 runs no install script of @prisma/engines
// unless approved, so nothing else tries to download an engine either.) The
// client itself runs on the WebAssembly query compiler, so no engine binary is
// needed at run time.
import { spawnSync } from 'node:child_process';
import { createRequire } from 'node:module';

const require = createRequire(import.meta.url);
const cli = require.resolve('prisma/build/index.js');
const result = spawnSync(process.execPath, [cli, 'generate', '--schema', 'prisma/schema.prisma'], {
  stdio: ['ignore', 'inherit', 'inherit'],
  env: {
    ...process.env,
    PRISMA_SCHEMA_ENGINE_BINARY: process.env.PRISMA_SCHEMA_ENGINE_BINARY ?? process.execPath,
    PRISMA_HIDE_UPDATE_MESSAGE: '1',
    CHECKPOINT_DISABLE: '1',
  },
});
process.exit(result.status ?? 1);
