// The proofs' figures: p50/p99 per phase (steady stretches and fault
// windows), each window's retried attempts by kind, final errors, how long
// errors lasted and how long the fault took to heal; then the checks, PASS or
// FAIL. SCALE_PROOF_OUT=file also writes them as JSON.
import { writeFileSync } from 'node:fs';
import { percentile } from '../lib/percentile';
import { type FaultWindow, inWindow, WINDOW_GRACE_MS } from './faults';
import type { Sample } from './load';

export interface Check {
  name: string;
  ok: boolean;
  detail: string;
}

export const countKinds = (kinds: string[]): Record<string, number> =>
  kinds.reduce<Record<string, number>>((acc, kind) => ({ ...acc, [kind]: (acc[kind] ?? 0) + 1 }), {});

interface Phase {
  name: string;
  from: number;
  to: number;
}

function phasesOf(t0: number, loadEnd: number, windows: FaultWindow[]): Phase[] {
  const phases: Phase[] = [];
  let cursor = t0;
  for (const w of windows) {
    phases.push({ name: 'steady', from: cursor, to: w.start });
    phases.push({ name: w.name, from: w.start, to: w.end + WINDOW_GRACE_MS });
    cursor = w.end + WINDOW_GRACE_MS;
  }
  phases.push({ name: 'steady', from: cursor, to: loadEnd });
  return phases;
}

/** The per-phase table; also the figures for JSON. */
export function phaseTable(samples: Sample[], t0: number, loadEnd: number, windows: FaultWindow[]): { lines: string[]; figures: unknown[] } {
  const lines = ['phase                                   requests   p50 ms   p99 ms   failed'];
  const figures: unknown[] = [];
  for (const phase of phasesOf(t0, loadEnd, windows)) {
    const inPhase = samples.filter((s) => s.at >= phase.from && s.at < phase.to);
    const ms = inPhase.map((s) => s.ms);
    const failed = inPhase.filter((s) => !s.ok).length;
    const [p50, p99] = [percentile(ms, 50), percentile(ms, 99)];
    lines.push(
      `${phase.name.padEnd(40)}${String(inPhase.length).padStart(8)}${String(p50).padStart(9)}${String(p99).padStart(9)}${String(failed).padStart(9)}`,
    );
    figures.push({ phase: phase.name, requests: inPhase.length, p50, p99, failed });
  }
  return { lines, figures };
}

export interface WindowFigures {
  fault: string;
  retriedAttempts: number;
  attemptKinds: Record<string, number>;
  finalErrors: number;
  finalKinds: Record<string, number>;
  errorsLastedMs: number;
  recoveredMs: number;
}

/** Each window: attempts that failed and were retried (by kind), final errors (by kind), how long errors lasted. */
export function windowFigures(samples: Sample[], w: FaultWindow): WindowFigures {
  const attempts = samples.flatMap((s) => s.failed).filter((f) => inWindow(w, f.at));
  const finals = samples.filter((s) => !s.ok && inWindow(w, answeredAt(s)));
  const times = attempts.map((a) => a.at);
  return {
    fault: w.name,
    retriedAttempts: attempts.length,
    attemptKinds: countKinds(attempts.map((a) => a.kind)),
    finalErrors: finals.length,
    finalKinds: countKinds(finals.map((s) => s.kind ?? String(s.status))),
    errorsLastedMs: times.length === 0 ? 0 : Math.max(...times) - Math.min(...times),
    recoveredMs: w.end - w.start,
  };
}

export function windowTable(samples: Sample[], windows: FaultWindow[]): { lines: string[]; figures: WindowFigures[] } {
  const lines = ['fault window                            retried attempts   final errors   errors lasted   recovered in'];
  const figures: WindowFigures[] = [];
  for (const w of windows) {
    const f = windowFigures(samples, w);
    figures.push(f);
    lines.push(`  ${JSON.stringify(f.attemptKinds)}${f.finalErrors > 0 ? `  final: ${JSON.stringify(f.finalKinds)}` : ''}`);
    lines.push(
      `${w.name.padEnd(40)}${String(f.retriedAttempts).padStart(16)}${String(f.finalErrors).padStart(15)}${`${f.errorsLastedMs} ms`.padStart(16)}${`${f.recoveredMs} ms`.padStart(15)}`,
    );
  }
  return { lines, figures };
}

/**
 * When a request's final answer came, which is when it failed: a request
 * begun just before a fault, retrying through it, fails inside its window.
 */
export const answeredAt = (s: Sample): number => s.at + s.ms;

/** Requests that failed outside every window. */
export const failedOutside = (samples: Sample[], windows: FaultWindow[]): Sample[] =>
  samples.filter((s) => !s.ok && !windows.some((w) => inWindow(w, answeredAt(s))));

/** Prints the report, writes SCALE_PROOF_OUT; answers whether every check passed. */
export function printReport(lines: string[], checks: Check[], figures: Record<string, unknown>): boolean {
  for (const check of checks) lines.push(`${check.ok ? 'PASS' : 'FAIL'}  ${check.name}: ${check.detail}`);
  process.stdout.write(`\n${lines.join('\n')}\n\n`);
  if (process.env.SCALE_PROOF_OUT) writeFileSync(process.env.SCALE_PROOF_OUT, `${JSON.stringify({ ...figures, checks }, null, 2)}\n`);
  return checks.every((c) => c.ok);
}
