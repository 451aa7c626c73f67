// Generates the Prisma client (src/__generated__/prisma, git-ignored) from
// prisma/schema.prisma. Runs at every install (postinstall, also with
// `npm install --omit=dev`), in `npm run generate`, and so in CI.
//
// Why `prisma` is a dependency, not a dev dependency: the service runs from
// source (tsx), so a production install must produce the client itself, and
// the Prisma CLI is the only supported way to run the `prisma-client`
// generator. The other ways weighed: committing the client (the ~17,000 lines
// the repository no longer carries); calling the generator through Prisma's
// internal packages (@prisma/internals, @prisma/client-generator-ts: ~70 MB
// instead of ~225 MB, but an undocumented API that may change in any release);
// a build step shipping an artefact (the service has none: it runs its
// TypeScript through tsx). The price: a production install is ~445 MB of
// node_modules instead of ~220 MB (the CLI brings `prisma dev` and Studio).
// In return, hosts that do have Prisma's engines can run `prisma migrate deploy`.
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
