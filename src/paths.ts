// The files the service reads at run time, in one place. Resolved from this
// module, which sits directly under src/ (tests, `npm run dev`) or dist/ (the
// compiled tree) — and whose code, in dist/main.js, is bundled into a file of
// that same folder (scripts/build.mjs): one level below the repository root
// in all three, so the same relative paths hold. A module deeper in the tree
// resolving from its own __dirname would not survive the bundling.
import path from 'node:path';

/** The repository (or deployed tree) root. */
const ROOT = path.resolve(__dirname, '..');

/** The service's package.json: its version (build_info, `admin --version`). */
export const PACKAGE_JSON = path.join(ROOT, 'package.json');
/** The SDL files, one per domain (schema/). */
export const SCHEMA_DIR = path.join(ROOT, 'schema');
/** Prisma's migrations, applied in order by src/db/migrate.ts. */
export const MIGRATIONS_DIR = path.join(ROOT, 'prisma', 'migrations');
/** The whole schema as SDL (codegen's schema-ast output), served by GET /schema.graphql. */
export const SCHEMA_ARTIFACT = path.join(__dirname, '__generated__', 'schema.graphql');
/**
 * The generated Prisma client's module, loaded on first use (src/db/index.ts).
 * Kept out of dist/main.js's bundle: it is megabytes that a service answering
 * only reads never runs.
 */
export const PRISMA_CLIENT_MODULE = path.join(__dirname, '__generated__', 'prisma', 'client');
