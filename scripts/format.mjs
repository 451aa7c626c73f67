// `npm run format`: Prettier, then ESLint's fixes, then Prettier again, over
// the whole tree (what .prettierignore and eslint.config.mjs leave in).
// Safe to run any time and twice: the second Prettier pass formats what
// ESLint's fixes rewrote, and settles the rare construct whose layout Prettier
// changes again on its own output. Exits non-zero when a step failed (such as
// ESLint problems it cannot fix, which it lists), after running them all.
import { spawnSync } from 'node:child_process';

const run = (command, ...args) => spawnSync(command, args, { stdio: 'inherit' }).status ?? 1;

const statuses = [run('prettier', '--write', '--log-level=warn', '.'), run('eslint', '--fix', '.'), run('prettier', '--write', '--log-level=warn', '.')];
process.exit(statuses.find((status) => status !== 0) ?? 0);
