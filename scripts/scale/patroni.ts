// A PostgreSQL cluster that survives its primary, from Debian's packages: one
// etcd member (Patroni's consensus store), 2 or 3 PostgreSQL 15 nodes each
// managed by its own Patroni (run as the postgres user), and HAProxy routing
// a write port to whichever node Patroni's REST API reports as primary and a
// read port to the replicas (scripts/scale/haproxy.ts). Everything on
// loopback ports, in one temp folder.
//
// Patroni settings (SCALING.md explains them): ttl 10 s, loop_wait 1 s,
// retry_timeout 4 s (a dead primary's leader key expires within ttl; the
// standby then promotes itself); synchronous_mode on unless asked otherwise
// (a commit waits for one standby, so a promoted standby has every
// acknowledged write), not strict (with no standby left the primary commits
// alone rather than stop); use_pg_rewind with wal_log_hints (an old primary
// rejoins as a replica, rewound where it had diverged).
import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { chownSync, existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { Pool } from 'pg';
import { freePort } from '../lib/ports';
import { renderTemplate } from '../lib/template';
import { writeDatabaseBalancer } from './haproxy';
import { postgresUser, type Proc, type Runner, sleep, waitFor } from './processes';

export const PG_BIN = process.env.PG_BIN ?? '/usr/lib/postgresql/15/bin';

export interface PatroniOptions {
  nodes: number;
  synchronous: boolean;
  ttl?: number;
}

export interface Node {
  readonly name: string;
  readonly port: number;
  readonly restPort: number;
  readonly dir: string;
  readonly config: string;
  readonly url: string;
  patroni: Proc | null;
}

export interface Member {
  name: string;
  role: string;
  state: string;
  timeline?: number;
  lag?: number | string;
}

/** The configuration of one node: deploy/patroni/patroni.yml, filled in. */
function patroniYaml(node: Node, scope: string, etcdPort: number, options: PatroniOptions): string {
  const ttl = options.ttl ?? 10;
  return renderTemplate('patroni/patroni.yml', {
    scope,
    name: node.name,
    rest_address: `127.0.0.1:${node.restPort}`,
    etcd_hosts: `127.0.0.1:${etcdPort}`,
    ttl,
    retry_timeout: Math.floor((ttl - 1) / 2),
    synchronous: String(options.synchronous),
    pg_address: `127.0.0.1:${node.port}`,
    dir: node.dir,
    bin_dir: PG_BIN,
  });
}

export class PatroniCluster {
  readonly scope = `chatsvc${process.pid}`;
  readonly nodes: Node[] = [];
  writeUrl = '';
  readUrl = '';
  private etcdPort = 0;

  constructor(
    private readonly runner: Runner,
    private readonly dir: string,
    readonly options: PatroniOptions,
  ) {}

  /** etcd, the nodes (the first bootstraps, the others clone it), HAProxy; resolves once a leader and its (sync) standbys run. */
  async start(): Promise<void> {
    const owner = postgresUser();
    await this.startEtcd();
    for (let i = 0; i < this.options.nodes; i++) {
      const name = `node${i}`;
      const dir = path.join(this.dir, name);
      mkdirSync(dir, { mode: 0o700 });
      chownSync(dir, owner.uid, owner.gid);
      const port = await freePort();
      const node: Node = {
        name,
        port,
        restPort: await freePort(),
        dir,
        config: path.join(dir, 'patroni.yml'),
        url: `postgres://postgres@127.0.0.1:${port}/postgres`,
        patroni: null,
      };
      writeFileSync(node.config, patroniYaml(node, this.scope, this.etcdPort, this.options));
      this.nodes.push(node);
    }
    // Whatever happens, the PostgreSQL servers go down with their Patronis, gracefully, before any SIGKILL.
    this.runner.deferFirst(() => this.stopAll());
    this.startPatroni(this.nodes[0]!);
    await waitFor('the first node to bootstrap as leader', async () => (await this.leader()) === 'node0', 120_000);
    for (const node of this.nodes.slice(1)) this.startPatroni(node);
    await this.healthy(120_000);
    const [writePort, readPort] = [await freePort(), await freePort()];
    this.runner.start('haproxy (database)', 'haproxy', ['-f', writeDatabaseBalancer(this.dir, writePort, readPort, this.nodes), '-db']);
    this.writeUrl = `postgres://postgres@127.0.0.1:${writePort}/postgres`;
    this.readUrl = `postgres://postgres@127.0.0.1:${readPort}/postgres`;
    await waitFor('the write port to reach the primary', async () => !(await this.inRecovery(this.writeUrl)));
    await waitFor('the read port to reach a replica', async () => this.inRecovery(this.readUrl));
  }

  private async startEtcd(): Promise<void> {
    const [client, peer] = [await freePort(), await freePort()];
    this.etcdPort = client;
    const data = path.join(this.dir, 'etcd');
    this.runner.start(
      'etcd',
      'etcd',
      [
        '--name',
        'e0',
        '--data-dir',
        data,
        '--listen-client-urls',
        `http://127.0.0.1:${client}`,
        '--advertise-client-urls',
        `http://127.0.0.1:${client}`,
        '--listen-peer-urls',
        `http://127.0.0.1:${peer}`,
        '--initial-advertise-peer-urls',
        `http://127.0.0.1:${peer}`,
        '--initial-cluster',
        `e0=http://127.0.0.1:${peer}`,
      ],
      { logFile: path.join(this.dir, 'etcd.log') },
    );
    await waitFor('etcd', async () => (await fetch(`http://127.0.0.1:${client}/health`)).ok);
  }

  /** Starts (or restarts) a node's Patroni, as the postgres user. */
  startPatroni(node: Node): void {
    const env = { ...process.env, HOME: node.dir };
    node.patroni = this.runner.start(`patroni ${node.name}`, 'patroni', [node.config], {
      env,
      user: postgresUser(),
      cwd: node.dir,
      logFile: path.join(node.dir, `patroni-${Date.now()}.log`),
    });
  }

  /** The members as Patroni reports them (from any node that answers). */
  async members(): Promise<Member[]> {
    for (const node of this.nodes) {
      try {
        const response = await fetch(`http://127.0.0.1:${node.restPort}/cluster`, { signal: AbortSignal.timeout(1_000) });
        if (response.ok) return ((await response.json()) as { members: Member[] }).members;
      } catch {
        // That node is down: ask the next.
      }
    }
    return [];
  }

  async leader(): Promise<string | undefined> {
    return (await this.members()).find((m) => m.role === 'leader' && m.state === 'running')?.name;
  }

  /** A running leader, every other node a running replica, one of them the synchronous standby when in synchronous mode. */
  async healthy(timeoutMs = 60_000): Promise<void> {
    await waitFor(
      'a leader and its standbys',
      async () => {
        const members = await this.members();
        const running = members.filter((m) => m.state === 'running' || m.state === 'streaming');
        const sync = members.some((m) => m.role === 'sync_standby');
        return running.length === this.nodes.length && members.some((m) => m.role === 'leader') && (!this.options.synchronous || sync);
      },
      timeoutMs,
    );
  }

  node(name: string): Node {
    return this.nodes.find((n) => n.name === name)!;
  }

  /** The node's postmaster pid, from its data folder. */
  postmasterPid(node: Node): number | undefined {
    const file = path.join(node.dir, 'data', 'postmaster.pid');
    return existsSync(file) ? Number(readFileSync(file, 'utf8').split('\n')[0]) : undefined;
  }

  /** kill -9 of the node's Patroni and postmaster: the node is gone, as when its machine dies. */
  async kill(node: Node): Promise<void> {
    const postmaster = this.postmasterPid(node);
    node.patroni?.child.kill('SIGKILL');
    if (postmaster) process.kill(postmaster, 'SIGKILL');
    await node.patroni?.exited();
    node.patroni = null;
  }

  /**
   * patronictl with these arguments. Asynchronous: the proofs' load runs in
   * this process, and a synchronous child would stop it for as long (a
   * switchover takes seconds).
   */
  private async patronictl(argv: string[]): Promise<string> {
    const { stdout } = await promisify(execFile)('patronictl', ['-c', this.nodes[0]!.config, ...argv], {
      encoding: 'utf8',
      env: { ...process.env, HOME: this.dir },
    });
    return stdout;
  }

  /** `patronictl switchover`: the planned move of the primary to `candidate`. */
  switchover(candidate: string, leader: string): Promise<string> {
    return this.patronictl(['switchover', '--leader', leader, '--candidate', candidate, '--force']);
  }

  /** `patronictl edit-config` with these arguments (e.g. --set synchronous_mode_strict=true). */
  async editConfig(argv: string[]): Promise<void> {
    await this.patronictl(['edit-config', ...argv, '--force', '--quiet']);
  }

  /** Synchronous mode on or off, applied once the primary's synchronous_standby_names says so. */
  async setSynchronous(on: boolean): Promise<void> {
    await this.editConfig(['--set', `synchronous_mode=${on}`]);
    const pool = new Pool({ connectionString: this.writeUrl, max: 1 });
    try {
      await waitFor(
        `synchronous mode ${on ? 'on' : 'off'}`,
        async () => {
          const names = (await pool.query<{ n: string }>("SELECT current_setting('synchronous_standby_names') AS n")).rows[0]!.n;
          return on ? names !== '' : names === '';
        },
        30_000,
      );
    } finally {
      await pool.end();
    }
  }

  private async inRecovery(url: string): Promise<boolean> {
    const pool = new Pool({ connectionString: url, max: 1, connectionTimeoutMillis: 1_000 });
    pool.on('error', () => {});
    try {
      return (await pool.query<{ r: boolean }>('SELECT pg_is_in_recovery() AS r')).rows[0]!.r;
    } finally {
      await pool.end();
    }
  }

  /** Each Patroni stopped (SIGTERM: it stops its PostgreSQL), then any postmaster left stopped at once (SIGQUIT). */
  private async stopAll(): Promise<void> {
    await Promise.all(
      this.nodes.map(async (node) => {
        if (!node.patroni?.running()) return;
        node.patroni.child.kill('SIGTERM');
        await Promise.race([node.patroni.exited(), sleep(20_000)]);
      }),
    );
    for (const node of this.nodes) {
      const pid = this.postmasterPid(node);
      if (!pid) continue;
      try {
        process.kill(pid, 'SIGQUIT');
      } catch {
        continue; // Not running.
      }
      for (let i = 0; i < 100 && existsSync(`/proc/${pid}`); i++) await sleep(100);
    }
  }
}
