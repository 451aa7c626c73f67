// What deploy/ holds is checked, not just written: the Kubernetes manifests
// against Kubernetes' schemas (kubernetes-models, which carries them: nothing
// is downloaded), the Prometheus rules by promtool (Debian's prometheus), and
// every metric the rules and the Grafana dashboard name is exported by a
// running service (with Redis, a read replica and rate limits, so that every
// family it can export is there). compose.yaml's `observability` profile is
// checked as wiring (each file it mounts exists and sits where the other files
// look for it; the dashboard's panels read the provisioned data source),
// Prometheus' configuration by promtool, and Debian's Prometheus runs it
// against a service here (scraping it, evaluating every rule without error).
// Grafana itself is not run (not packaged by Debian, no registry for its image).
import { execFileSync, spawn, spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { parseAllDocuments, parse as parseYaml } from 'yaml';
import { serveMetrics } from '../../src/http/observability';
import { connectRedis, type SharedRedis } from '../../src/scale/redis';
import { ReadReplicas } from '../../src/scale/replicas';
import { freePort } from '../../scripts/lib/ports';
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
    const text = await operatorPage(service);
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
    const text = await operatorPage(service!);
    expect(text).toMatch(/^build_info\{version="\d+\.\d+\.\d+",revision="[^"]+",node="v\d+[^"]*"\} 1$/m);
    // Read on the operator's listener: no request of the service's is in flight.
    expect(text).toMatch(/^http_requests_in_flight 0$/m);
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

/** The whole page, as the operator's scraper reads it on METRICS_PORT (the service's own port names no versions). */
async function operatorPage(service: TestService): Promise<string> {
  const listener = await serveMetrics(service.app.metrics, '127.0.0.1', 0);
  try {
    return await (await fetch(`http://127.0.0.1:${listener.address.port}/metrics`)).text();
  } finally {
    await listener.close();
  }
}

interface ComposeService {
  image?: string;
  profiles?: string[];
  volumes?: string[];
  ports?: string[];
  expose?: string[];
  environment?: Record<string, string>;
  depends_on?: string[] | Record<string, unknown>;
}
const compose = () => parseYaml(readFileSync(path.join(DEPLOY, 'compose.yaml'), 'utf8')) as { services: Record<string, ComposeService> };
/** A service's bind mounts: the file or folder under deploy/ → where the container sees it. */
const mounts = (service: ComposeService): Map<string, string> =>
  new Map((service.volumes ?? []).filter((v) => v.startsWith('./')).map((v) => [path.join(DEPLOY, v.split(':')[0]!), v.split(':')[1]!]));
const PROMETHEUS_CONFIG = path.join(DEPLOY, 'prometheus', 'prometheus.yml');
interface PrometheusConfig {
  global: Record<string, string>;
  rule_files: string[];
  scrape_configs: { job_name: string; metrics_path: string; static_configs: { targets: string[] }[] }[];
}
const prometheusConfig = () => parseYaml(readFileSync(PROMETHEUS_CONFIG, 'utf8')) as PrometheusConfig;

describe("compose.yaml's observability profile", () => {
  test('Prometheus and Grafana are the profile, each mounting files that exist where the other files look for them', () => {
    const { services } = compose();
    expect(Object.keys(services).filter((name) => services[name]!.profiles?.includes('observability'))).toEqual(['prometheus', 'grafana']);
    // The stack without the profile: what CI brings up (scripts/container/check.sh).
    for (const name of ['postgres', 'redis', 'migrate', 'api']) expect([name, services[name]!.profiles]).toEqual([name, undefined]);

    // Prometheus: its image's default --config.file, the rule files the configuration names, the target it scrapes.
    const prometheus = mounts(services.prometheus!);
    for (const source of prometheus.keys()) expect(existsSync(source)).toBe(true);
    expect(prometheus.get(PROMETHEUS_CONFIG)).toBe('/etc/prometheus/prometheus.yml');
    const config = prometheusConfig();
    expect(config.rule_files.sort()).toEqual([prometheus.get(RULES)]);
    const [scrape] = config.scrape_configs;
    // The job the rules and the dashboard select.
    expect(readFileSync(RULES, 'utf8')).toContain(`job="${scrape!.job_name}"`);
    expect(readFileSync(DASHBOARD, 'utf8')).toContain(`job=\\"${scrape!.job_name}\\"`);
    const [host, port] = scrape!.static_configs[0]!.targets[0]!.split(':');
    // Reached on the compose network only (METRICS_PORT, exposed, not published).
    expect(services[host!]?.expose).toContain(port);
    expect(services[host!]?.environment?.METRICS_PORT).toBe(port);
    expect(scrape!.metrics_path).toBe('/metrics');

    // Grafana: provisioning where the image reads it, the dashboards where the provider looks, the data source at Prometheus.
    const grafana = mounts(services.grafana!);
    for (const source of grafana.keys()) expect(existsSync(source)).toBe(true);
    const provisioning = path.join(DEPLOY, 'grafana', 'provisioning');
    expect(grafana.get(provisioning)).toBe('/etc/grafana/provisioning');
    const provider = parseYaml(readFileSync(path.join(provisioning, 'dashboards', 'chat-user-service.yml'), 'utf8')) as {
      providers: { type: string; options: { path: string } }[];
    };
    expect(provider.providers.map((p) => [p.type, p.options.path])).toEqual([['file', grafana.get(path.dirname(DASHBOARD))]]);
    const { datasources } = parseYaml(readFileSync(path.join(provisioning, 'datasources', 'prometheus.yml'), 'utf8')) as {
      datasources: { uid: string; type: string; url: string }[];
    };
    expect(datasources).toHaveLength(1);
    const [source] = datasources;
    expect([source!.type, source!.url]).toEqual(['prometheus', 'http://prometheus:9090']);
    expect(services.grafana!.depends_on).toEqual(['prometheus']);

    // Every panel (and every query of one) reads that data source, by its uid.
    const dashboard = JSON.parse(readFileSync(DASHBOARD, 'utf8')) as {
      panels: { title: string; datasource?: { type: string; uid: string }; targets: { datasource?: { type: string; uid: string } }[] }[];
    };
    expect(dashboard.panels.length).toBeGreaterThan(5);
    for (const panel of dashboard.panels) {
      for (const ds of [panel.datasource, ...panel.targets.map((t) => t.datasource)]) {
        if (ds === undefined && panel.datasource !== undefined) continue;
        expect([panel.title, ds]).toEqual([panel.title, { type: 'prometheus', uid: source!.uid }]);
      }
    }
  });

  requires(needOnPath('promtool', 'apt-get install prometheus')).test("promtool accepts Prometheus' configuration with the rules it names", () => {
    const dir = mkdtempSync(path.join(tmpdir(), 'deploy-prometheus-'));
    try {
      // The rule file where the container has it → where it is here.
      const config = prometheusConfig();
      const file = path.join(dir, 'prometheus.yml');
      writeFileSync(file, JSON.stringify({ ...config, rule_files: [RULES] }));
      const checked = spawnSync('promtool', ['check', 'config', file], { encoding: 'utf8' });
      expect([checked.status, checked.stdout + checked.stderr]).toEqual([0, expect.stringMatching(/SUCCESS: .*prometheus\.yml is valid/)]);
      expect(checked.stdout).toMatch(/SUCCESS: \d+ rules found/);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  requires(needOnPath('prometheus', 'apt-get install prometheus')).test(
    "Debian's Prometheus with that configuration scrapes a service and evaluates every rule without an error",
    async () => {
      const dir = mkdtempSync(path.join(tmpdir(), 'deploy-prometheus-run-'));
      const target = await startService({});
      // Where production serves /metrics (METRICS_PORT), as compose's Prometheus scrapes it.
      const metricsListener = await serveMetrics(target.app.metrics, '127.0.0.1', 0);
      const port = await freePort();
      // As compose's, but the target is the service here, and every second (the test waits for evaluations).
      const config = prometheusConfig();
      const file = path.join(dir, 'prometheus.yml');
      writeFileSync(
        file,
        JSON.stringify({
          ...config,
          global: { scrape_interval: '1s', evaluation_interval: '1s' },
          rule_files: [RULES],
          scrape_configs: config.scrape_configs.map((c) => ({ ...c, static_configs: [{ targets: [`127.0.0.1:${metricsListener.address.port}`] }] })),
        }),
      );
      const server = spawn(
        'prometheus',
        [`--config.file=${file}`, `--storage.tsdb.path=${path.join(dir, 'data')}`, `--web.listen-address=127.0.0.1:${port}`, '--log.level=warn'],
        { stdio: ['ignore', 'ignore', 'pipe'] },
      );
      let log = '';
      server.stderr.on('data', (chunk: Buffer) => (log += chunk.toString()));
      const api = async <T>(query: string): Promise<T> => ((await (await fetch(`http://127.0.0.1:${port}/api/v1/${query}`)).json()) as { data: T }).data;
      type Rule = { name: string; health: string; lastError?: string; lastEvaluation: string };
      type Target = { health: string; labels: { job: string } };
      try {
        const deadline = Date.now() + 60_000;
        let rules: Rule[] = [];
        let targets: Target[] = [];
        for (;;) {
          try {
            targets = (await api<{ activeTargets: Target[] }>('targets')).activeTargets;
            rules = (await api<{ groups: { rules: Rule[] }[] }>('rules')).groups.flatMap((g) => g.rules);
          } catch {
            // Not listening yet.
          }
          const evaluated = rules.length > 0 && rules.every((r) => !r.lastEvaluation.startsWith('0001-'));
          if ((targets[0]?.health === 'up' && evaluated) || Date.now() > deadline) break;
          await new Promise((resolve) => setTimeout(resolve, 500));
        }
        expect([targets.map((t) => [t.labels.job, t.health]), log]).toEqual([[[prometheusConfig().scrape_configs[0]!.job_name, 'up']], log]);
        expect(rules.length).toBeGreaterThan(20);
        expect(rules.filter((r) => r.health !== 'ok').map((r) => [r.name, r.health, r.lastError])).toEqual([]);
        // The scraped families are there under the job's label.
        const [info] = (await api<{ result: { metric: { job: string } }[] }>('query?query=build_info')).result;
        expect(info?.metric.job).toBe('chat-user-service');
      } finally {
        server.kill('SIGTERM');
        await new Promise((resolve) => server.once('exit', resolve));
        await metricsListener.close();
        await target.close();
        rmSync(dir, { recursive: true, force: true });
      }
    },
  );
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
