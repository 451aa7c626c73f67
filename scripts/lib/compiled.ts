// The compiled service (dist/, `npm run build`), for whatever starts it as a
// process — tests, benchmarks, the scale proofs — so that they run what
// `npm start` runs: `node dist/main.js`, no loader.
import { execFileSync } from 'node:child_process';
import path from 'node:path';

const ROOT = path.resolve(__dirname, '../..');
/** `npm start`'s entry point. */
export const SERVICE_MAIN = path.join(ROOT, 'dist', 'main.js');
/**
 * The node flags the service runs with: `npm start`, the Dockerfile's CMD and
 * docs/operation.md say them too (test/ops/command.test.ts keeps them equal).
 * Node 24's V8 lets each semi-space of the young generation grow to 64 MB
 * (Node 20's: 16), and under load it does: the lookup benchmark's peak RSS
 * was 260 MB on Node 24 against 168 on Node 20, and 187 with this flag, the
 * lookups' throughput within the rounds' spread (BENCHMARKS.md, "Memory").
 * A command-line flag: V8 sizes the young generation when the process
 * starts, and v8.setFlagsFromString afterwards changes nothing.
 */
export const SERVICE_NODE_FLAGS = ['--max-semi-space-size=16'];
/** `npm run admin`'s entry point. */
export const ADMIN_CLI = path.join(ROOT, 'dist', 'cli', 'admin.js');

let built = false;

/** Compiles dist/ when src/ changed since its last build (about a second; ~0.2 s to find it current). */
export function ensureBuilt(): void {
  if (built) return;
  execFileSync(process.execPath, [path.join(ROOT, 'scripts', 'build.mjs'), '--if-stale'], { cwd: ROOT, stdio: ['ignore', 'inherit', 'inherit'] });
  built = true;
}
