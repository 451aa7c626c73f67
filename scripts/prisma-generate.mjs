// Runs `prisma generate` without letting the Prisma CLI download anything.
//
// The CLI fetches its schema-engine binary on start, even for `generate`,
// which does not use it; pointing PRISMA_SCHEMA_ENGINE_BINARY at any existing
// file skips that download. The client itself runs on the WebAssembly query
// compiler, so no engine binary is needed at run time either.
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
