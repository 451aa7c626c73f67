// The Debian packages the proofs and the tests need, installed with apt-get
// when a program is missing (run as root on a Debian-like machine). A step of
// its own in each proof, before anything starts: the rest of a proof assumes
// the programs. `tsx scripts/scale/install.ts` installs every one of them, the
// tests' included, and fails naming any program still missing after: .ci/run
// runs it before the tests, so that no test skips for want of a program.
// Debian's maintainer scripts would start their system services; in a
// container without an init system they are refused (policy-rc.d), and the
// proofs never use those: each runs its own on loopback ports.
import { execFileSync, spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import path from 'node:path';
import { PG_BIN } from '../lib/pg-cluster';
import { log } from './processes';

/** A program the proof or a test runs (a name found on PATH, or the exact path it runs), and the package that has it. */
export interface Needed {
  program: string;
  pkg: string;
}

/** PostgreSQL clusters of a proof's or a test's own (scripts/lib/pg-cluster.ts), and the Redis a proof restarts. */
const CLUSTERS_AND_REDIS: Needed[] = [
  { program: path.join(PG_BIN, 'initdb'), pkg: `postgresql-${path.basename(path.dirname(PG_BIN))}` },
  { program: 'redis-server', pkg: 'redis-server' },
  { program: 'redis-cli', pkg: 'redis-tools' },
];

export const BASE_PACKAGES: Needed[] = [...CLUSTERS_AND_REDIS, { program: 'haproxy', pkg: 'haproxy' }, { program: 'pgbouncer', pkg: 'pgbouncer' }];

export const FAILOVER_PACKAGES: Needed[] = [
  ...CLUSTERS_AND_REDIS,
  { program: 'haproxy', pkg: 'haproxy' },
  { program: 'patroni', pkg: 'patroni' },
  { program: 'patronictl', pkg: 'patroni' },
  { program: 'etcd', pkg: 'etcd-server' },
  { program: 'etcdctl', pkg: 'etcd-client' },
];

/** The programs jest's tests run, at the paths they look for them (test/support/requires.ts skips, or under CI fails, without them). */
export const TEST_PACKAGES: Needed[] = [
  ...CLUSTERS_AND_REDIS,
  // test/browser/explorer.test.ts
  { program: '/usr/bin/chromium', pkg: 'chromium' },
  // test/security/shared-cache.test.ts
  { program: '/usr/sbin/varnishd', pkg: 'varnish' },
  // test/db/pgbouncer.test.ts
  { program: 'pgbouncer', pkg: 'pgbouncer' },
  // test/ops/deploy.test.ts: promtool checks the alerting rules, HAProxy its configurations
  { program: 'promtool', pkg: 'prometheus' },
  { program: 'haproxy', pkg: 'haproxy' },
];

const present = (n: Needed): boolean => (path.isAbsolute(n.program) ? existsSync(n.program) : spawnSync('which', [n.program]).status === 0);

/** Installs the packages of the programs that are missing; says what it found; throws naming any program still missing. */
export function installDebianPackages(needed: Needed[]): void {
  const missing = [...new Set(needed.filter((n) => !present(n)).map((n) => n.pkg))];
  if (missing.length === 0) {
    log(`already installed: ${[...new Set(needed.map((n) => n.pkg))].join(', ')}`);
    return;
  }
  log(`installing ${missing.join(', ')} with apt-get`);
  const env = { ...process.env, DEBIAN_FRONTEND: 'noninteractive' };
  try {
    execFileSync('apt-get', ['install', '-y', '-q', ...missing], { stdio: 'inherit', env });
  } catch {
    // Package lists not fetched yet (a fresh machine): fetch them once and try again.
    execFileSync('apt-get', ['update', '-q'], { stdio: 'inherit', env });
    execFileSync('apt-get', ['install', '-y', '-q', ...missing], { stdio: 'inherit', env });
  }
  const still = needed.filter((n) => !present(n));
  if (still.length > 0) throw new Error(`still missing after apt-get install: ${still.map((n) => `${n.program} (${n.pkg})`).join(', ')}`);
}

if (require.main === module) installDebianPackages([...TEST_PACKAGES, ...BASE_PACKAGES, ...FAILOVER_PACKAGES]);
