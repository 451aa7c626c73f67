// What deploy/ holds is checked, not just written: the Kubernetes manifests
// against Kubernetes' schemas (kubernetes-models, which carries them: nothing
// is downloaded), the Prometheus rules by promtool (Debian's prometheus), and
// every metric the rules and the Grafana dashboard name is exported by a
// running service (with Redis, a read replica and rate limits, so that every
// family it can export is there).
import { execFileSync, spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { parseAllDocuments, parse as parseYaml } from 'yaml';
import { connectRedis, type SharedRedis } from '../../src/scale/redis';
import { ReadReplicas } from '../../src/scale/replicas';
import { startService, type TestService } from '../support/service';
import { needOnPath, requires } from '../support/requires';

const DEPLOY = path.resolve(__dirname, '../../deploy');
const KUBERNETES = path.join(DEPLOY, 'kubernetes');
const RULES = path.join(DEPLOY, 'prometheus', 'rules.yml');
const DASHBOARD = path.join(DEPLOY, 'grafana', 'dashboards', 'chat-user-service.json');

interface Manifest {
  file: string;
  doc: { apiVersion: string; kind: string; metadata?: { name?: string } };
}

function manifests(): Manifest[] {
  return readdirSync(KUBERNETES)
    .filter((file) => file.endsWith('.yaml') && file !== 'kustomization.yaml')
    .flatMap((file) => parseAllDocuments(readFileSync(path.join(KUBERNETES, file), 'utf8')).map((doc) => ({ file, doc: doc.toJS() as Manifest['doc'] })));
}

/** kubernetes-models' class for an apiVersion and kind: `apps/v1` Deployment → kubernetes-models/apps/v1/Deployment. */
function validate(doc: Manifest['doc']): void {
  const module = `kubernetes-models/${doc.apiVersion}/${doc.kind}`;
  const Model = (require(module) as Record<string, new (data: unknown) => { validate(): void }>)[doc.kind]!;
  new Model(doc).validate();
}

describe('Kubernetes manifests', () => {
  test('every manifest validates against Kubernetes schemas', () => {
    const all = manifests();
    expect(all.map((m) => `${m.doc.kind} ${m.doc.metadata?.name}`).sort()).toEqual([
      'ConfigMap chat-user-service',
      'Deployment chat-user-service',
      'Job chat-user-service-migrate',
      'PodDisruptionBudget chat-user-service',
      'Secret chat-user-service',
      'Service chat-user-service',
    ]);
    const errors = all.flatMap(({ file, doc }) => {
      try {
        validate(doc);
        return [];
      } catch (error) {
        return [`${file}: ${(error as Error).message}`];
      }
    });
    expect(errors).toEqual([]);
  });

  test('the validation refuses what Kubernetes would (so that a pass means something)', () => {
    const deployment = manifests().find((m) => m.doc.kind === 'Deployment')!.doc as any;
    const broken = structuredClone(deployment);
    broken.spec.template.spec.containers[0].ports[0].containerPort = 'http';
    expect(() => validate(broken)).toThrow(/containerPort must be integer/);
    const noSelector = structuredClone(deployment);
    delete noSelector.spec.selector;
    expect(() => validate(noSelector)).toThrow(/selector/);
  });

  test('the kustomization lists every manifest but the example Secret; the Deployment drains within its grace period', () => {
    const kustomization = parseYaml(readFileSync(path.join(KUBERNETES, 'kustomization.yaml'), 'utf8')) as { resources: string[] };
    const files = readdirSync(KUBERNETES).filter((file) => file.endsWith('.yaml') && !['kustomization.yaml', 'secret.example.yaml'].includes(file));
    expect([...kustomization.resources].sort()).toEqual(files.sort());
    const config = manifests().find((m) => m.doc.kind === 'ConfigMap')!.doc as unknown as { data: Record<string, string> };
    const deployment = manifests().find((m) => m.doc.kind === 'Deployment')!.doc as any;
    const pod = deployment.spec.template.spec;
    // The delay and the drain's bound fit in the grace period, with room for the exit.
    expect(Number(config.data.SHUTDOWN_DELAY_MS) + Number(config.data.SHUTDOWN_TIMEOUT_MS)).toBeLessThan(pod.terminationGracePeriodSeconds * 1000 - 5_000);
    expect(pod.containers[0].readinessProbe.httpGet.path).toBe('/readyz');
    expect(pod.containers[0].livenessProbe.httpGet.path).toBe('/healthz');
    const job = manifests().find((m) => m.doc.kind === 'Job')!.doc as any;
    expect(job.spec.template.spec.containers[0].command).toEqual(['node', 'dist/cli/admin.js', 'migrate']);
  });
});

requires(needOnPath('promtool', 'apt-get install prometheus')).test('promtool accepts the rules', () => {
  expect(execFileSync('promtool', ['check', 'rules', RULES], { encoding: 'utf8' })).toMatch(/SUCCESS: \d+ rules found/);
});

// ---------------------------------------------------------------------------
// The metrics the rules and the dashboard name

const PROMQL_WORDS = new Set([
  'sum',
  'min',
  'max',
  'avg',
  'count',
  'by',
  'without',
  'on',
  'ignoring',
  'group_left',
  'group_right',
  'and',
  'or',
  'unless',
  'bool',
  'offset',
  'rate',
  'irate',
  'increase',
  'delta',
  'histogram_quantile',
  'vector',
  'time',
  'abs',
  'clamp_min',
  'clamp_max',
  'topk',
  'bottomk',
  'le',
  'inf',
]);

/** The metric names an expression reads: identifiers that are not functions, keywords, label names in by()/on(), or recorded series. */
function metricNames(expr: string): string[] {
  const stripped = expr
    .replace(/"(?:[^"\\]|\\.)*"|'(?:[^'\\]|\\.)*'/g, '""')
    .replace(/\{[^}]*\}/g, '')
    .replace(/\[[^\]]*\]/g, '')
    .replace(/\b(by|without|on|ignoring|group_left|group_right)\s*\([^)]*\)/g, '');
  const names = stripped.match(/[A-Za-z_:][A-Za-z0-9_:]*(?![A-Za-z0-9_:])(?!\s*\()/g) ?? [];
  return [...new Set(names.filter((name) => !PROMQL_WORDS.has(name) && !/^\d/.test(name)))];
}

const REDIS_URL = process.env.TEST_REDIS_URL ?? 'redis://127.0.0.1:6379';
let service: TestService | undefined;
let redis: SharedRedis | undefined;
let reads: ReadReplicas | undefined;
let exported: Set<string>;

describe('metrics named by the rules and the dashboard', () => {
  beforeAll(async () => {
    redis = await connectRedis({ url: REDIS_URL, prefix: `deploy-test:${process.pid}:`, connectTimeoutMs: 2_000 }).catch(() => undefined);
    if (!redis) console.warn(`deploy.test.ts: Redis at ${REDIS_URL} is unreachable (set TEST_REDIS_URL): redis_up is not checked`);
    service = await startService({ rateLimit: { windowMs: 60_000, perCredential: 1_000, perAddress: 1_000 }, ...(redis ? { redis } : {}) });
    // The database itself as a "replica" when it is a server: not in use (not a standby), but its families are exported.
    if (service.db.url !== undefined) {
      reads = new ReadReplicas({ urls: [service.db.url], primary: service.db.pool, poolMax: 1 });
      await reads.start();
      await service.close();
      service = await startService({ rateLimit: { windowMs: 60_000, perCredential: 1_000, perAddress: 1_000 }, reads, ...(redis ? { redis } : {}) });
    }
    // A request of each kind, so that the request families have samples.
    await service.rest('GET', '/healthz');
    const text = (await service.rest('GET', '/metrics')).text;
    exported = new Set(
      [...text.matchAll(/^# TYPE (\S+) (\S+)$/gm)].flatMap(([, name, type]) =>
        type === 'histogram'
          ? [name!, `${name}_bucket`, `${name}_count`, `${name}_sum`]
          : type === 'counter'
            ? [name!, `${name}_total`, name!.replace(/_total$/, '')]
            : [name!],
      ),
    );
  });
  afterAll(async () => {
    await service?.close();
    await reads?.close();
    await redis?.close();
  });

  /**
   * What this run can export: redis_up needs a Redis, the replica families a
   * server database (the embedded one has no replicas; the server run checks them).
   */
  const unchecked = ({ name }: { name: string }) =>
    !(name === 'redis_up' && !redis) && !((name.startsWith('db_replica') || name === 'db_reads_routed_total') && !reads);

  const rules = () =>
    (parseYaml(readFileSync(RULES, 'utf8')) as { groups: { rules: ({ record: string; expr: string } | { alert: string; expr: string })[] }[] }).groups.flatMap(
      (g) => g.rules,
    );

  test('every metric a rule reads is exported (or recorded by another rule)', () => {
    const recorded = new Set(rules().flatMap((rule) => ('record' in rule ? [rule.record] : [])));
    const named = rules().flatMap((rule) => metricNames(rule.expr).map((name) => ({ rule: 'record' in rule ? rule.record : rule.alert, name })));
    expect(named.length).toBeGreaterThan(30);
    // `up` is Prometheus' own, for every target.
    const missing = named.filter(({ name }) => name !== 'up' && !recorded.has(name) && !exported.has(name));
    expect(missing.filter(unchecked)).toEqual([]);
  });

  test('every metric a dashboard panel reads is exported (or recorded by a rule)', () => {
    const recorded = new Set(rules().flatMap((rule) => ('record' in rule ? [rule.record] : [])));
    const dashboard = JSON.parse(readFileSync(DASHBOARD, 'utf8')) as { panels: { title: string; targets: { expr: string }[] }[] };
    const named = dashboard.panels.flatMap((panel) =>
      panel.targets.flatMap((target) => metricNames(target.expr).map((name) => ({ panel: panel.title, name }))),
    );
    expect(named.length).toBeGreaterThan(20);
    const missing = named.filter(({ name }) => !recorded.has(name) && !exported.has(name));
    expect(missing.filter(unchecked)).toEqual([]);
  });

  test('the operator families are exported: build_info, in flight, pool waits, replica state, Redis', async () => {
    const text = (await service!.rest('GET', '/metrics')).text;
    expect(text).toMatch(/^build_info\{version="\d+\.\d+\.\d+",revision="[^"]+",node="v\d+[^"]*"\} 1$/m);
    expect(text).toMatch(/^http_requests_in_flight 1$/m);
    expect(text).toMatch(/^db_pool_waits_total \d+$/m);
    expect(text).toMatch(/^db_pool_wait_seconds_total [\d.e-]+$/m);
    if (reads) expect(text).toMatch(/^db_replica_up\{replica="0"\} 0$/m);
    if (redis) expect(text).toMatch(/^redis_up 1$/m);
  });

  test('the helper reads metric names as Prometheus would', () => {
    expect(metricNames('sum by (job, route) (rate(a_total{x="y{z}"}[5m])) / ignoring(state) b{state="max"} > 0.5 and c:d:e')).toEqual([
      'a_total',
      'b',
      'c:d:e',
    ]);
  });
});

test('the compose file names files that exist and the images CI makes', () => {
  const compose = parseYaml(readFileSync(path.join(DEPLOY, 'compose.yaml'), 'utf8')) as { services: Record<string, { volumes?: string[]; image?: string }> };
  expect(Object.keys(compose.services).sort()).toEqual(['api', 'grafana', 'migrate', 'postgres', 'prometheus', 'redis']);
  for (const service of Object.values(compose.services)) {
    for (const volume of service.volumes ?? []) {
      const [source] = volume.split(':');
      if (source!.startsWith('./')) expect(existsSync(path.join(DEPLOY, source!))).toBe(true);
    }
  }
  expect(compose.services.api!.image).toMatch(/^\$\{API_IMAGE:-/);
});

requires(needOnPath('haproxy', 'apt-get install haproxy')).test(
  "deploy/haproxy's configurations, filled in as the scale proofs fill them, pass HAProxy's own check",
  async () => {
    const { writeServiceBalancer, writeDatabaseBalancer } = await import('../../scripts/scale/haproxy');
    const dir = mkdtempSync(path.join(tmpdir(), 'deploy-haproxy-'));
    try {
      for (const file of [
        writeServiceBalancer(dir, 4000, [4001, 4002, 4003]),
        writeDatabaseBalancer(dir, 5000, 5001, [
          { name: 'node0', port: 5432, restPort: 8008 },
          { name: 'node1', port: 5433, restPort: 8009 },
        ]),
      ]) {
        expect(spawnSync('haproxy', ['-c', '-f', file], { encoding: 'utf8' }).stdout).toMatch(/Configuration file is valid/);
      }
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  },
);
