// The Debian packages a proof needs, installed with apt-get when a program is
// missing (run as root on a Debian-like machine). A step of its own in each
// proof, before anything starts: the rest of a proof assumes the programs.
// Debian's maintainer scripts would start their system services; in a
// container without an init system they are refused (policy-rc.d), and the
// proofs never use those: each runs its own on loopback ports.
import { execFileSync, spawnSync } from 'node:child_process';
import { log } from './processes';

/** A program the proof runs, and the package that has it. */
export interface Needed {
  program: string;
  pkg: string;
}

export const BASE_PACKAGES: Needed[] = [
  { program: 'haproxy', pkg: 'haproxy' },
  { program: 'pgbouncer', pkg: 'pgbouncer' },
];

export const FAILOVER_PACKAGES: Needed[] = [
  { program: 'haproxy', pkg: 'haproxy' },
  { program: 'patroni', pkg: 'patroni' },
  { program: 'patronictl', pkg: 'patroni' },
  { program: 'etcd', pkg: 'etcd-server' },
  { program: 'etcdctl', pkg: 'etcd-client' },
];

/** Installs the packages of the programs that are missing; says what it found. */
export function installDebianPackages(needed: Needed[]): void {
  const missing = [...new Set(needed.filter((n) => spawnSync('which', [n.program]).status !== 0).map((n) => n.pkg))];
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
}

// `tsx scripts/scale/install.ts`: both proofs' packages, as a step of its own (CI runs it before the proofs).
if (require.main === module) installDebianPackages([...BASE_PACKAGES, ...FAILOVER_PACKAGES]);
