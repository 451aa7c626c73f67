// The compiled service (dist/, `npm run build`), for whatever starts it as a
// process — tests, benchmarks, the scale proofs — so that they run what
// `npm start` runs: `node dist/main.js`, no loader.
import { execFileSync } from 'node:child_process';
import path from 'node:path';

const ROOT = path.resolve(__dirname, '../..');
/** `npm start`'s entry point. */
export const SERVICE_MAIN = path.join(ROOT, 'dist', 'main.js');
/** `npm run admin`'s entry point. */
export const ADMIN_CLI = path.join(ROOT, 'dist', 'cli', 'admin.js');

let built = false;

/** Compiles dist/ when src/ changed since its last build (about a second; ~0.2 s to find it current). */
export function ensureBuilt(): void {
  if (built) return;
  execFileSync(process.execPath, [path.join(ROOT, 'scripts', 'build.mjs'), '--if-stale'], { cwd: ROOT, stdio: ['ignore', 'inherit', 'inherit'] });
  built = true;
}
