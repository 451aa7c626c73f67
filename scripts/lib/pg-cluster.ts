// Throwaway PostgreSQL 15 clusters from Debian's binaries: a primary and hot
// standbys made with pg_basebackup -R, each in a temp directory on a port of
// its own, run as the postgres user (PostgreSQL refuses to run as root). Used
// by the replica tests and by `npm run scale:proof`; removes what it made.
import { execFileSync, spawnSync } from 'node:child_process';
import { chownSync, existsSync, mkdtempSync, rmSync, writeFileSync, appendFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';

export const PG_BIN = process.env.PG_BIN ?? '/usr/lib/postgresql/15/bin';

export interface Cluster {
  readonly dir: string;
  readonly port: number;
  readonly url: string;
  start(): void;
  stop(mode?: 'fast' | 'immediate'): void;
  /** Stops it and deletes its directory. */
  destroy(): void;
}

/** Whether this machine can make clusters (the binaries, and root to run them as postgres, or being postgres). */
export function clustersAvailable(): { ok: true } | { ok: false; reason: string } {
  if (!existsSync(path.join(PG_BIN, 'initdb'))) return { ok: false, reason: `no ${PG_BIN}/initdb (apt-get install postgresql-15)` };
  // eslint-disable-next-line @typescript-eslint/no-unnecessary-condition -- stdout is null when `id` cannot be started, whatever its type says
  const user = process.getuid?.() === 0 ? 'root' : spawnSync('id', ['-un']).stdout?.toString().trim();
  if (user !== 'root' && user !== 'postgres') return { ok: false, reason: 'clusters are run as the postgres user: run as root or postgres' };
  if (user === 'root' && spawnSync('id', ['postgres']).status !== 0) return { ok: false, reason: 'no postgres user' };
  return { ok: true };
}

function asPostgres(command: string, args: string[], options: { quiet?: boolean } = {}): void {
  const asRoot = process.getuid?.() === 0;
  const [file, argv] = asRoot ? ['runuser', ['-u', 'postgres', '--', command, ...args]] : [command, args];
  execFileSync(file, argv, { stdio: options.quiet === false ? 'inherit' : 'pipe', cwd: '/tmp' });
}

function postgresDir(prefix: string): string {
  const dir = mkdtempSync(path.join(tmpdir(), prefix));
  if (process.getuid?.() === 0) {
    const uid = Number(execFileSync('id', ['-u', 'postgres']).toString().trim());
    const gid = Number(execFileSync('id', ['-g', 'postgres']).toString().trim());
    chownSync(dir, uid, gid);
  }
  return dir;
}

function cluster(dir: string, port: number): Cluster {
  const data = path.join(dir, 'data');
  const log = path.join(dir, 'log');
  const ctl = (args: string[]) => asPostgres(path.join(PG_BIN, 'pg_ctl'), ['-D', data, ...args]);
  return {
    dir,
    port,
    url: `postgres://postgres@127.0.0.1:${port}/postgres`,
    start: () => ctl(['-l', log, '-w', '-t', '60', 'start']),
    stop: (mode = 'fast') => {
      try {
        ctl(['-m', mode, '-w', 'stop']);
      } catch {
        // Not running.
      }
    },
    destroy() {
      this.stop('immediate');
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

/** A new primary on `port`, started, that accepts replication connections from loopback. */
export function createPrimary(port: number): Cluster {
  const dir = postgresDir('chatsvc-primary-');
  const data = path.join(dir, 'data');
  asPostgres(path.join(PG_BIN, 'initdb'), ['-D', data, '-U', 'postgres', '-A', 'trust', '--no-sync', '-E', 'UTF8']);
  appendFileSync(
    path.join(data, 'postgresql.conf'),
    [
      `port = ${port}`,
      "listen_addresses = '127.0.0.1'",
      `unix_socket_directories = '${dir}'`,
      'wal_level = replica',
      'max_wal_senders = 10',
      'max_replication_slots = 10',
      'hot_standby = on',
      // Throwaway data: durability is not what is measured.
      'fsync = off',
      'full_page_writes = off',
      'max_connections = 200',
      'shared_buffers = 64MB',
      '',
    ].join('\n'),
  );
  writeFileSync(path.join(data, 'pg_hba.conf'), 'local all all trust\nhost all all 127.0.0.1/32 trust\nhost replication all 127.0.0.1/32 trust\n');
  const primary = cluster(dir, port);
  primary.start();
  return primary;
}

/** A hot standby of `primary` on `port` (pg_basebackup -R with a slot of its own), started. */
export function createStandby(primary: Cluster, port: number, slot = `standby_${port}`): Cluster {
  const dir = postgresDir('chatsvc-standby-');
  const data = path.join(dir, 'data');
  asPostgres(path.join(PG_BIN, 'pg_basebackup'), [
    '-D',
    data,
    '-R',
    '-C',
    '-S',
    slot,
    '-X',
    'stream',
    '-h',
    '127.0.0.1',
    '-p',
    String(primary.port),
    '-U',
    'postgres',
    '--no-sync',
  ]);
  appendFileSync(path.join(data, 'postgresql.conf'), `port = ${port}\nunix_socket_directories = '${dir}'\n`);
  const standby = cluster(dir, port);
  standby.start();
  return standby;
}
