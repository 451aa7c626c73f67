// HAProxy configurations of the proofs (Debian's haproxy 2.6): deploy/haproxy's
// files, the reference configurations SCALING.md points at, filled in.
//
// - In front of the service instances (HTTP): round robin over the instances
//   that answer GET /readyz; a refused connection is retried on another. When
//   no instance is ready — the database is down for all of them, as in the
//   seconds of a failover — requests still go to them (the backup servers:
//   the same instances, unchecked), so that clients get the service's own
//   documented 503 rather than HAProxy's HTML page.
// - In front of the PostgreSQL nodes (TCP), by Patroni's REST checks: the
//   write port to the node whose GET /primary answers 200, the read port to
//   those whose GET /replica does. A node marked down has its sessions cut
//   (on-marked-down shutdown-sessions): connections to an old primary end at
//   once, not when a statement on them times out.
import { writeFileSync } from 'node:fs';
import path from 'node:path';
import { renderTemplate } from '../lib/template';

/** The service instances behind `port` (deploy/haproxy/service.cfg). */
export function writeServiceBalancer(dir: string, port: number, instancePorts: number[]): string {
  const file = path.join(dir, 'haproxy-service.cfg');
  const servers = [
    ...instancePorts.map((p, i) => `  server s${i} 127.0.0.1:${p} check`),
    ...instancePorts.map((p, i) => `  server s${i}-unready 127.0.0.1:${p} backup`),
  ].join('\n');
  writeFileSync(file, renderTemplate('haproxy/service.cfg', { bind: `127.0.0.1:${port}`, servers }));
  return file;
}

export interface DatabaseNode {
  name: string;
  /** PostgreSQL's port. */
  port: number;
  /** Patroni's REST API port. */
  restPort: number;
}

/** The write port (the primary) and the read port (the replicas) of a Patroni cluster (deploy/haproxy/postgres.cfg). */
export function writeDatabaseBalancer(dir: string, writePort: number, readPort: number, nodes: DatabaseNode[]): string {
  const file = path.join(dir, 'haproxy-database.cfg');
  const servers = nodes.map((n) => `  server ${n.name} 127.0.0.1:${n.port} check port ${n.restPort}`).join('\n');
  writeFileSync(file, renderTemplate('haproxy/postgres.cfg', { write_bind: `127.0.0.1:${writePort}`, read_bind: `127.0.0.1:${readPort}`, servers }));
  return file;
}
