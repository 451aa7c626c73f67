// `npm run bench`: see bench/options.ts (USAGE) and bench/harness.ts.
// Exits 0 whenever the benchmark ran, targets met or not; 1 on a harness
// error (the database unreachable, a server that does not start, …); 2 on a
// bad flag.
import { runBench } from './harness';
import { USAGE, parseOptions, type BenchOptions } from './options';
import { killAll } from './processes';
import { judge, render, writeReport } from './report';
import { dropDatabase } from './seed';

async function main(): Promise<number> {
  let options: BenchOptions | 'help';
  try {
    options = parseOptions(process.argv.slice(2));
  } catch (error) {
    process.stderr.write(`${(error as Error).message}\n\n${USAGE}`);
    return 2;
  }
  if (options === 'help') {
    process.stdout.write(USAGE);
    return 0;
  }
  const opts = options;
  const interrupt = (signal: string) => {
    process.stderr.write(`\n${signal}: stopping\n`);
    killAll();
    const done = () => process.exit(130);
    if (opts.dropAtEnd) dropDatabase(opts).then(done, done);
    else done();
  };
  process.once('SIGINT', () => interrupt('SIGINT'));
  process.once('SIGTERM', () => interrupt('SIGTERM'));

  const started = performance.now();
  try {
    const report = await runBench(opts);
    const targets = judge(report);
    process.stdout.write(render(report, targets));
    const file = writeReport(report, targets, opts.out);
    process.stdout.write(`Report: ${file}\nTotal time: ${Math.round((performance.now() - started) / 1000)} s\n`);
    return 0;
  } catch (error) {
    killAll();
    process.stderr.write(`bench failed: ${(error as Error).stack ?? String(error)}\n`);
    if (opts.dropAtEnd) await dropDatabase(opts).catch(() => {});
    return 1;
  }
}

main().then(
  (code) => process.exit(code),
  (error: unknown) => {
    process.stderr.write(`bench failed: ${String(error)}\n`);
    process.exit(1);
  },
);
