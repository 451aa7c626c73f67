// The benchmark harness on tiny data (`npm run bench -- --smoke`), so that it
// cannot rot: it seeds a database of its own on the TEST_DATABASE_URL server,
// starts the service and the baseline, runs every scenario for a second and
// writes its JSON report, which must hold every figure. The figures
// themselves mean nothing at this size and are not judged here.
import { spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { needServer, requires } from '../support/requires';

const serverUrl = process.env.TEST_DATABASE_URL;
const ROOT = path.resolve(__dirname, '..', '..');

const SCENARIOS = [
  'rest_user_lookup',
  'graphql_user_lookup',
  'registered_users_compact',
  'registered_users_full',
  'delete_me_1',
  'delete_me_100',
  'delete_me_1000',
  'delete_everyone_1',
  'delete_everyone_100',
  'delete_everyone_1000',
  'sweeper_rest_lookup',
  'graphql_history_first',
  'graphql_history_deep',
  'rest_history_first',
  'rest_history_deep_skip',
  'rest_user_lookup_sockets_open',
  'graphql_user_lookup_sockets_open',
];

/** Scenarios run on an instance whose background work (the sweeper) never lets the statement count settle. */
const UNCOUNTED = new Set(['sweeper_rest_lookup']);

// The benchmark harness needs a PostgreSQL server: skipped, saying so, on the embedded database.
requires(needServer).describe('npm run bench -- --smoke', () => {
  let dir: string;
  let report: any;
  let output = '';

  beforeAll(async () => {
    dir = mkdtempSync(path.join(os.tmpdir(), 'bench-smoke-'));
    const out = path.join(dir, 'report.json');
    const code = await new Promise<number | null>((resolve, reject) => {
      const child = spawn(process.execPath, ['--import', 'tsx', 'bench/run.ts', '--smoke', '--out', out], {
        cwd: ROOT,
        // The harness creates (and drops) a database of its own on the test server.
        env: { ...process.env, DATABASE_URL: serverUrl, CI: process.env.CI ?? 'true' },
        stdio: ['ignore', 'pipe', 'pipe'],
      });
      child.stdout.on('data', (chunk: Buffer) => (output += chunk.toString()));
      child.stderr.on('data', (chunk: Buffer) => (output += chunk.toString()));
      child.on('error', reject);
      child.on('exit', resolve);
    });
    if (code !== 0) throw new Error(`bench --smoke exited with ${code}:\n${output.slice(-4000)}`);
    report = JSON.parse(readFileSync(out, 'utf8'));
  }, 240_000);

  afterAll(() => {
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  const numeric = (value: unknown) => typeof value === 'number' && Number.isFinite(value);

  it('reports every scenario with req/s, p50, p99, statements per request and ratios for service and baseline', () => {
    expect(report.smoke).toBe(true);
    expect(report.scenarios.map((s: { name: string }) => s.name)).toEqual(SCENARIOS);
    for (const scenario of report.scenarios) {
      for (const side of ['service', 'baseline']) {
        const figures = scenario[side];
        for (const key of ['reqPerSec', 'p50', 'p99', ...(UNCOUNTED.has(scenario.name) ? [] : ['statementsPerRequest'])]) {
          if (!numeric(figures[key])) throw new Error(`${scenario.name} ${side}.${key} is ${figures[key]}`);
        }
        expect(figures.requests).toBeGreaterThan(0);
        expect(figures.non2xx).toBe(0);
      }
      for (const key of ['reqPerSec', 'p50', 'p99']) {
        if (!numeric(scenario.ratios[key])) throw new Error(`${scenario.name} ratios.${key} is ${scenario.ratios[key]}`);
      }
      expect(numeric(scenario.service.peakRssMb)).toBe(true);
    }
  });

  it("measures the lookups beside the baseline and the GraphQL peers, with CPU per request and the goals' ratios", () => {
    const lookups = report.lookups;
    expect(lookups.targets.map((t: { name: string }) => t.name)).toEqual(['rest', 'graphql', 'baseline', 'mercurius', 'apollo_lookup', 'apollo_floor']);
    for (const target of lookups.targets) {
      expect(target.figures.requests).toBeGreaterThan(0);
      expect(target.figures.non2xx + target.figures.errors + (target.figures.badBodies ?? 0)).toBe(0);
      if (!numeric(target.figures.cpuMsPerRequest)) throw new Error(`${target.name} cpuMsPerRequest is ${target.figures.cpuMsPerRequest}`);
      expect(numeric(target.toBaseline.median)).toBe(true);
    }
    expect(numeric(lookups.graphqlToMercurius.median)).toBe(true);
    expect(numeric(lookups.apolloLookupToMercurius.median)).toBe(true);
    expect(numeric(lookups.graphqlToApolloLookup.median)).toBe(true);
    expect(numeric(lookups.graphqlCpuToRest.median)).toBe(true);
    expect(report.targets.map((t: { target: string }) => t.target)).toContain('GraphQL user lookup: req/s ≥ 0.85 of Mercurius (same lookup, same run)');
    expect(output).toMatch(/Mercurius/);
    expect(output).toMatch(/Apollo Server alone, the same lookup \/ Mercurius/);
  });

  it('deletes fresh ids in every delete scenario', () => {
    for (const scenario of report.scenarios.filter((s: { name: string }) => s.name.startsWith('delete_'))) {
      for (const side of ['service', 'baseline']) {
        expect(scenario[side].idsSent).toBeGreaterThan(0);
        expect(scenario[side].idsDeleted).toBe(scenario[side].idsSent);
      }
    }
  });

  it('measures the lookups while the sweeper removes a backlog of expired sessions', () => {
    const sweeper = report.scenarios.find((s: { name: string }) => s.name === 'sweeper_rest_lookup');
    expect(sweeper.sweep.backlog).toBeGreaterThan(0);
    expect(sweeper.sweep.runs.length).toBe(report.settings.rounds);
    for (const run of sweeper.sweep.runs) expect(run.removed).toBeGreaterThan(0);
  });

  it('reads history pages on both surfaces beside the bare keyset query, and delivers live events to every open socket', () => {
    const history = report.history;
    expect(history.messages).toBe(report.seeding.historyMessages);
    for (const check of history.checks) {
      if (!check.passed) throw new Error(`history ${check.name}: ${check.detail}`);
    }
    for (const target of history.targets) {
      expect(target.figures.requests).toBeGreaterThan(0);
      expect(target.figures.non2xx + target.figures.errors + (target.figures.badBodies ?? 0)).toBe(0);
    }
    expect(numeric(history.deepToFirst.graphql.p50.median)).toBe(true);
    const live = report.live;
    expect(live.sockets).toBe(report.settings.liveSockets);
    expect(live.refused + live.closedEarly).toBe(0);
    expect(numeric(live.memory.perSocketKb)).toBe(true);
    expect(live.runs.length).toBe(report.settings.rounds);
    for (const run of live.runs) {
      expect(run.delivered).toBe(run.expected);
      expect(run.unexpected).toBe(0);
      expect(numeric(run.p99)).toBe(true);
    }
    expect(numeric(live.lookups.rest.median)).toBe(true);
    expect(report.targets.map((t: { target: string }) => t.target)).toEqual(
      expect.arrayContaining([expect.stringMatching(/^Live: delivery p99/), expect.stringMatching(/^History .*GraphQL: the middle page/)]),
    );
  });

  it('answers the big address book correctly (more contacts than PostgreSQL has bind parameters)', () => {
    expect(report.seeding.bigContacts).toBeGreaterThan(65_535);
    expect(report.correctness.length).toBeGreaterThanOrEqual(2);
    for (const check of report.correctness) {
      if (!check.passed) throw new Error(`${check.name}: ${check.detail}`);
    }
  });

  it('finds the baseline answering what the service answers', () => {
    expect(report.parity.checked).toBeGreaterThan(0);
    expect(report.parity.mismatches).toEqual([]);
  });

  it('reports the soak, the seeding time, the machine and every target', () => {
    expect(numeric(report.soak.rssAtReferenceMb)).toBe(true);
    expect(numeric(report.soak.rssAtEndMb)).toBe(true);
    expect(numeric(report.soak.growthPct)).toBe(true);
    expect(numeric(report.seeding.seconds.users)).toBe(true);
    expect(report.machine.cpus.length).toBeGreaterThan(0);
    expect(report.machine.node).toBe(process.version);
    expect(report.targets.length).toBeGreaterThanOrEqual(10);
    for (const target of report.targets) expect([true, false, null]).toContain(target.met);
    expect(output).toMatch(/rest_user_lookup/);
  });
});
