// Figures the reliability tests measure (requests fuzzed by outcome, faults
// injected and recovery times, …), written where RELIABILITY.md's numbers come
// from: artifacts/reliability/<section>.<database>.json, one file per section
// and database kind, rewritten by each run.
import { mkdirSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { usingServer } from './service';

/** The longer, soak-like variants (more runs, more rounds): set by .ci/run. */
export const LONG = process.env.RELIABILITY_LONG === '1';

/**
 * RELIABILITY_FIGURES_DIR: another folder, for a run whose figures must not
 * replace the main ones (.ci/run's Node 20 smoke after the Node 24 suite).
 */
const DIR = process.env.RELIABILITY_FIGURES_DIR ? resolve(process.env.RELIABILITY_FIGURES_DIR) : join(__dirname, '..', '..', 'artifacts', 'reliability');

export function recordFigures(section: string, figures: Record<string, unknown>): void {
  mkdirSync(DIR, { recursive: true });
  const database = usingServer() ? 'postgresql' : 'embedded';
  const body = { section, database, long: LONG, node: process.version, recordedAt: new Date().toISOString(), ...figures };
  writeFileSync(join(DIR, `${section}.${database}.json`), `${JSON.stringify(body, null, 2)}\n`);
}
