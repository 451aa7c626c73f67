// node .ci/check-skips.mjs <jest results.json> <server|embedded>
//
// Reads jest's results (`npm test -- --json --outputFile=…`) and fails unless
// the run's skipped tests are exactly the documented ones: none on the
// PostgreSQL server; on the embedded database, the list in
// docs/development.md ("Skipped on the embedded database"), compared by name
// (file › describe blocks › test). A test skipped for want of a program or of
// Redis fails under CI=true already (test/support/requires.ts); this catches
// any other skip (a `test.skip` left in, a new server-only test not listed)
// and a listed test that no longer skips (the list gone stale). It also fails
// a run that ran no test at all.
import { readFileSync } from 'node:fs';
import path from 'node:path';

const [resultsFile, database] = process.argv.slice(2);
if (!resultsFile || !['server', 'embedded'].includes(database ?? '')) {
  process.stderr.write('usage: node .ci/check-skips.mjs <jest results.json> <server|embedded>\n');
  process.exit(2);
}

const root = path.resolve(import.meta.dirname, '..');
const BEGIN = '<!-- skipped-on-embedded: begin -->';
const END = '<!-- skipped-on-embedded: end -->';

/** The documented list: each line `- \`file › … › title\`` between the markers of docs/development.md. */
function documented() {
  const doc = readFileSync(path.join(root, 'docs', 'development.md'), 'utf8');
  const from = doc.indexOf(BEGIN);
  const to = doc.indexOf(END);
  if (from < 0 || to < from) throw new Error(`docs/development.md: no list between ${BEGIN} and ${END}`);
  return doc
    .slice(from + BEGIN.length, to)
    .split('\n')
    .map((line) => /^- `(.+)`\s*$/.exec(line.trim())?.[1])
    .filter((name) => name !== undefined);
}

const results = JSON.parse(readFileSync(resultsFile, 'utf8'));
const skipped = results.testResults
  .flatMap((file) =>
    file.assertionResults
      .filter((t) => t.status !== 'passed' && t.status !== 'failed')
      .map((t) => [path.relative(root, file.name), ...t.ancestorTitles, t.title].join(' › ')),
  )
  .sort();
const expected = database === 'server' ? [] : documented().sort();
const unexpected = skipped.filter((name) => !expected.includes(name));
const ran = expected.filter((name) => !skipped.includes(name));

process.stdout.write(
  `${database} run: ${results.numTotalTests} tests in ${results.numTotalTestSuites} files; ` +
    `${results.numPassedTests} passed, ${results.numFailedTests} failed, ${skipped.length} skipped (documented: ${expected.length})\n`,
);
for (const name of skipped) process.stdout.write(`  skipped: ${name}\n`);
let ok = true;
if (results.numTotalTests === 0 || results.numPassedTests === 0) {
  process.stdout.write('FAIL: the run passed no test\n');
  ok = false;
}
if (unexpected.length > 0) {
  process.stdout.write(`FAIL: skipped, and not in the ${database === 'server' ? 'server run (none may be)' : 'list of docs/development.md'}:\n`);
  for (const name of unexpected) process.stdout.write(`  ${name}\n`);
  ok = false;
}
if (ran.length > 0) {
  process.stdout.write('FAIL: listed in docs/development.md as skipped on the embedded database, but not skipped (or gone): update the list\n');
  for (const name of ran) process.stdout.write(`  ${name}\n`);
  ok = false;
}
process.exit(ok ? 0 : 1);
