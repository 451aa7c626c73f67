// `npm run build`: src/ compiled to CommonJS JavaScript in dist/, with source
// maps, the generated Prisma client included; every other file under src/
// (the schema artifact src/__generated__/schema.graphql, read at run time by
// GET /schema.graphql) copied beside it. dist/ mirrors src/ one level below
// the repository root, so paths the service resolves from __dirname
// (../../schema, ../../prisma/migrations) reach the same folders from both.
//
// Why swc and not tsc: @swc/core is already how jest runs the sources, so the
// service the tests import and the one `npm start` runs are the same
// transform; it compiles the tree in about a second here where `tsc` (emit
// only, --noCheck) took 12 s, which matters because installs, `npm start` on a
// changed tree and the test runs build. tsconfig.json has isolatedModules, so
// compiling file by file is sound, and `npm run typecheck` (tsc) stays the type
// check. Dynamic import() is kept as Node's (as in jest: PGlite is ESM),
// except in the generated Prisma client, whose import()s of its query compiler
// (CommonJS files, one the wasm as a base64 string of megabytes) become
// require(): through Node's ESM loader they cost a process's first query
// ~60 ms of CPU here (with the 4.5 MB fast build: the module-format detection
// and the CommonJS export lexer reading the whole string).
//
// Then dist/main.js, the service's entry point, is bundled with esbuild: the
// modules it loads at start (~900: its own, graphql, Fastify, Apollo, zod…)
// become one file, whitespace removed, names kept. One script instead of ~900
// saves what Node and V8 keep per module and the source text of each (V8
// holds a script's whole text for as long as its functions live), and with
// the compile cache it starts faster too (BENCHMARKS.md, "Start-up and the
// production shape"). Everything else in
// dist/ stays as swc wrote it: the admin CLI, and the modules the bundle
// leaves out (EXTERNAL). Stack traces name functions as written and point
// into dist/main.js; dist/main.js.map maps them to src/ (docs/operation.md,
// "Reading a stack trace").
//
// `--if-stale`: build only when dist/ is missing or older than a file under
// src/ (or a file was added or removed). Without a compiler (a production
// install) it says so and leaves dist/ as it is.
import { existsSync, mkdirSync, readdirSync, readFileSync, renameSync, rmSync, statSync, writeFileSync, copyFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const SRC = path.join(ROOT, 'src');
const DIST = path.join(ROOT, 'dist');
const PRISMA_CLIENT = path.join('__generated__', 'prisma') + path.sep;
/**
 * Left out of dist/main.js and loaded from node_modules, as without a bundle:
 * packages used only on demand (tracing's SDK, Redis, the embedded database,
 * phone numbers, the explorer's page, Prisma's client and adapter, Fastify's
 * inject()), which would otherwise cost their text in every process, and pg,
 * which @prisma/adapter-pg must share (it checks `instanceof pg.Pool`). None
 * of them holds state the bundle's copies would need to share: the ones that
 * do (graphql, @opentelemetry/api's registry is global anyway) are bundled.
 * The generated Prisma client is reached by an absolute path (src/paths.ts),
 * which a bundler leaves alone.
 */
const EXTERNAL = [
  'pg',
  'pg-native',
  'pg-cloudflare',
  '@prisma/*',
  '@electric-sql/*',
  'ioredis',
  'libphonenumber-js',
  '@graphql-yoga/render-graphiql',
  'light-my-request',
  '@opentelemetry/core',
  '@opentelemetry/exporter-*',
  '@opentelemetry/instrumentation*',
  '@opentelemetry/resources',
  '@opentelemetry/sdk-*',
  '@opentelemetry/semantic-conventions',
];

/** dist/main.js (and its source map, composed with swc's down to src/) rewritten as one bundle. */
async function bundleMain(esbuild, out) {
  const entry = path.join(out, 'main.js');
  await esbuild.build({
    entryPoints: [entry],
    outfile: entry,
    allowOverwrite: true,
    bundle: true,
    platform: 'node',
    format: 'cjs',
    target: 'node20',
    external: EXTERNAL,
    minifyWhitespace: true,
    minifySyntax: true,
    legalComments: 'none',
    sourcemap: 'linked',
    sourcesContent: false,
    logLevel: 'warning',
  });
}

/** Written last: its presence says the build finished; its content lists what it compiled. */
const STAMP = path.join(DIST, '.build.json');

function sourceFiles() {
  return readdirSync(SRC, { recursive: true, withFileTypes: true })
    .filter((entry) => entry.isFile())
    .map((entry) => path.relative(SRC, path.join(entry.parentPath ?? entry.path, entry.name)))
    .sort();
}

/** Why dist/ needs a build, or null when it is current. */
function staleness(files) {
  if (!existsSync(STAMP)) return 'dist/ has not been built';
  let stamp;
  try {
    stamp = JSON.parse(readFileSync(STAMP, 'utf8'));
  } catch {
    return 'dist/ is incomplete';
  }
  if (JSON.stringify(stamp.files) !== JSON.stringify(files)) return 'files were added to or removed from src/';
  const builtAt = statSync(STAMP).mtimeMs;
  const newer = files.find((file) => statSync(path.join(SRC, file)).mtimeMs > builtAt);
  return newer === undefined ? null : `src/${newer} changed`;
}

async function build(files) {
  let swc, esbuild;
  try {
    [swc, esbuild] = await Promise.all([import('@swc/core'), import('esbuild')]);
  } catch {
    return false;
  }
  // Built beside dist/ and swapped in: an interrupted build leaves the last good one.
  const out = `${DIST}.partial-${process.pid}`;
  rmSync(out, { recursive: true, force: true });
  await Promise.all(
    files.map(async (file) => {
      const from = path.join(SRC, file);
      if (!file.endsWith('.ts') || file.endsWith('.d.ts')) {
        if (file.endsWith('.d.ts')) return;
        mkdirSync(path.dirname(path.join(out, file)), { recursive: true });
        copyFileSync(from, path.join(out, file));
        return;
      }
      const target = path.join(out, file.replace(/\.ts$/, '.js'));
      const { code, map } = await swc.transformFile(from, {
        swcrc: false,
        configFile: false,
        sourceMaps: true,
        // Maps name the TypeScript files (../src/…) without carrying their text.
        inlineSourcesContent: false,
        sourceFileName: path.relative(path.dirname(target.replace(out, DIST)), from),
        jsc: { target: 'es2022', parser: { syntax: 'typescript' } },
        module: { type: 'commonjs', ignoreDynamic: !file.startsWith(PRISMA_CLIENT) },
      });
      mkdirSync(path.dirname(target), { recursive: true });
      writeFileSync(target, `${code}\n//# sourceMappingURL=${path.basename(target)}.map\n`);
      writeFileSync(`${target}.map`, map);
    }),
  );
  await bundleMain(esbuild, out);
  writeFileSync(path.join(out, '.build.json'), `${JSON.stringify({ files }, null, 1)}\n`);
  const old = `${DIST}.old-${process.pid}`;
  if (existsSync(DIST)) renameSync(DIST, old);
  renameSync(out, DIST);
  rmSync(old, { recursive: true, force: true });
  return true;
}

const ifStale = process.argv.includes('--if-stale');
if (!existsSync(SRC)) {
  // A deployed tree that carries dist/ alone: nothing to compare it with.
  if (existsSync(STAMP)) process.exit(0);
  console.error('build: neither src/ nor a built dist/ is here');
  process.exit(1);
}
const files = sourceFiles();
if (!files.includes(path.join('__generated__', 'prisma', 'client.ts'))) {
  console.error('build: src/__generated__/prisma is missing: run `npm run prisma:generate` (or `npm install`) first');
  process.exit(1);
}
const reason = staleness(files);
if (ifStale && reason === null) process.exit(0);
const started = performance.now();
if (!(await build(files))) {
  if (ifStale && existsSync(STAMP)) {
    console.error(`build: ${reason}, but this install has no compiler (@swc/core and esbuild, dev dependencies): running the dist/ it has`);
    process.exit(0);
  }
  console.error(
    'build: @swc/core or esbuild is not installed (dev dependencies): build where dev dependencies are, then `npm prune --omit=dev --omit=optional` (docs/operation.md, Deploying)',
  );
  process.exit(1);
}
if (ifStale || process.stdout.isTTY)
  console.error(`build: dist/ compiled from ${files.length} files in ${Math.round(performance.now() - started)} ms${reason ? ` (${reason})` : ''}`);
