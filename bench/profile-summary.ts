// `npm run bench:profile -- <file.cpuprofile> [--top N]`: what a V8 CPU
// profile (from `npm run bench -- --cpu-prof`) says the service spent its time
// on. Prints the top functions by self time, the top by inclusive time (each
// sample counted once per function on its stack), and self time grouped by
// where the code lives (a package of node_modules, the service's own folders,
// Node's internals, the garbage collector, idle).
//
// BENCHMARKS.md quotes these tables: a change for speed is justified by them.
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { parseArgs } from 'node:util';

interface ProfileNode {
  id: number;
  callFrame: { functionName: string; url: string; lineNumber: number; columnNumber: number };
  hitCount?: number;
  children?: number[];
}

export interface Profile {
  nodes: ProfileNode[];
  startTime: number;
  endTime: number;
  samples: number[];
  timeDeltas: number[];
}

const ROOT = path.resolve(__dirname, '..');

/** Where a frame's code lives: "pkg:fastify", "src/rest", "node:internal", "(garbage collector)", … */
export function areaOf(url: string, functionName: string): string {
  if (!url) return functionName.startsWith('(') ? functionName : '(native)';
  const file = url.replace(/^file:\/\//, '');
  const modules = file.lastIndexOf('node_modules/');
  if (modules >= 0) {
    const rest = file.slice(modules + 'node_modules/'.length).split('/');
    return `pkg:${rest[0]!.startsWith('@') ? `${rest[0]}/${rest[1]}` : rest[0]}`;
  }
  if (file.startsWith('node:')) return 'node:internal';
  const relative = path.relative(ROOT, file);
  if (!relative.startsWith('..')) return relative.split(path.sep).slice(0, 2).join('/');
  return file;
}

function label(node: ProfileNode): string {
  const { functionName, url, lineNumber } = node.callFrame;
  const where = url ? `${path.relative(ROOT, url.replace(/^file:\/\//, '')).replace(/^(\.\.\/)+/, '')}:${lineNumber + 1}` : '';
  return `${functionName || '(anonymous)'}${where ? ` ${where}` : ''}`;
}

export interface Summary {
  totalMs: number;
  /** Share of the profile not idle. */
  busyMs: number;
  self: [string, number][];
  inclusive: [string, number][];
  areas: [string, number][];
}

/**
 * `window`: only the samples taken between these two instants (µs of the
 * monotonic clock, as `process.hrtime.bigint() / 1000n` reads it in any
 * process of the machine, and as V8 stamps its samples): a load's window,
 * without the process's start and warm-up.
 */
export function summarise(profile: Profile, window?: { from: number; to: number }): Summary {
  const byId = new Map(profile.nodes.map((n) => [n.id, n]));
  const parent = new Map<number, number>();
  for (const n of profile.nodes) for (const c of n.children ?? []) parent.set(c, n.id);
  const self = new Map<string, number>();
  const inclusive = new Map<string, number>();
  const areas = new Map<string, number>();
  let totalMs = 0;
  let idleMs = 0;
  let at = profile.startTime;
  for (let i = 0; i < profile.samples.length; i++) {
    at += profile.timeDeltas[i] ?? 0;
    if (window && (at < window.from || at > window.to)) continue;
    const ms = (profile.timeDeltas[i] ?? 0) / 1000;
    const node = byId.get(profile.samples[i]!);
    if (!node) continue;
    totalMs += ms;
    if (node.callFrame.functionName === '(idle)') {
      idleMs += ms;
      continue;
    }
    const key = label(node);
    self.set(key, (self.get(key) ?? 0) + ms);
    const area = areaOf(node.callFrame.url, node.callFrame.functionName);
    areas.set(area, (areas.get(area) ?? 0) + ms);
    const seen = new Set<string>();
    for (let id: number | undefined = node.id; id !== undefined; id = parent.get(id)) {
      const k = label(byId.get(id)!);
      if (seen.has(k)) continue; // recursion: once per sample
      seen.add(k);
      inclusive.set(k, (inclusive.get(k) ?? 0) + ms);
    }
  }
  const sorted = (m: Map<string, number>) => [...m].sort((a, b) => b[1] - a[1]);
  return { totalMs, busyMs: totalMs - idleMs, self: sorted(self), inclusive: sorted(inclusive).filter(([k]) => k !== '(root)'), areas: sorted(areas) };
}

export function render(summary: Summary, top: number): string {
  const pct = (ms: number) => `${((ms / summary.busyMs) * 100).toFixed(1).padStart(5)}%`;
  const rows = (entries: [string, number][]) => entries.slice(0, top).map(([k, ms]) => `  ${pct(ms)}  ${ms.toFixed(0).padStart(7)} ms  ${k}`);
  return [
    `Profile: ${(summary.totalMs / 1000).toFixed(1)} s sampled, ${(summary.busyMs / 1000).toFixed(1)} s busy (percentages are of busy time)`,
    '',
    'Self time by area:',
    ...rows(summary.areas),
    '',
    `Top ${top} functions by self time:`,
    ...rows(summary.self),
    '',
    `Top ${top} functions by inclusive time:`,
    ...rows(summary.inclusive),
    '',
  ].join('\n');
}

if (require.main === module) {
  const { values, positionals } = parseArgs({ allowPositionals: true, options: { top: { type: 'string' } } });
  if (positionals.length !== 1) {
    process.stderr.write('Usage: npm run bench:profile -- <file.cpuprofile> [--top N]\n');
    process.exit(2);
  }
  const profile = JSON.parse(readFileSync(positionals[0]!, 'utf8')) as Profile;
  process.stdout.write(render(summarise(profile), Number(values.top ?? 25)));
}
