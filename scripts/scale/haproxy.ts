// HAProxy configurations of the proofs (Debian's haproxy 2.6), the reference
// configurations SCALING.md points at.
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

/** The service instances behind `port`. */
export function writeServiceBalancer(dir: string, port: number, instancePorts: number[]): string {
  const file = path.join(dir, 'haproxy-service.cfg');
  writeFileSync(
    file,
    [
      'global',
      '  maxconn 4096',
      'defaults',
      '  mode http',
      '  timeout connect 1s',
      '  timeout client 30s',
      '  timeout server 30s',
      // A refused connection never reached an instance: safe to try another.
      '  retries 2',
      '  option redispatch',
      '  retry-on conn-failure',
      'frontend fe',
      `  bind 127.0.0.1:${port}`,
      '  default_backend svc',
      'backend svc',
      '  balance roundrobin',
      '  option httpchk GET /readyz',
      '  http-check expect status 200',
      '  option allbackups',
      '  default-server inter 500 fall 2 rise 2',
      ...instancePorts.map((p, i) => `  server s${i} 127.0.0.1:${p} check`),
      ...instancePorts.map((p, i) => `  server s${i}-unready 127.0.0.1:${p} backup`),
      '',
    ].join('\n'),
  );
  return file;
}

export interface DatabaseNode {
  name: string;
  /** PostgreSQL's port. */
  port: number;
  /** Patroni's REST API port. */
  restPort: number;
}

/** The write port (the primary) and the read port (the replicas) of a Patroni cluster. */
export function writeDatabaseBalancer(dir: string, writePort: number, readPort: number, nodes: DatabaseNode[]): string {
  const file = path.join(dir, 'haproxy-database.cfg');
  const servers = nodes.map((n) => `  server ${n.name} 127.0.0.1:${n.port} check port ${n.restPort}`);
  const checked = ['  default-server inter 500ms fastinter 250ms downinter 500ms fall 2 rise 1 on-marked-down shutdown-sessions'];
  writeFileSync(
    file,
    [
      'global',
      '  maxconn 4096',
      'defaults',
      '  mode tcp',
      '  timeout connect 1s',
      // Pooled connections stay idle for seconds; the pools close them at 10 s.
      '  timeout client 30m',
      '  timeout server 30m',
      '  timeout check 1s',
      // A node that refuses is down or restarting: fail this connection now
      // (the service answers 503, its client retries) rather than wait to retry it.
      '  retries 0',
      '  option clitcpka',
      '  option srvtcpka',
      'listen primary',
      `  bind 127.0.0.1:${writePort}`,
      '  option httpchk GET /primary',
      '  http-check expect status 200',
      ...checked,
      ...servers,
      'listen replicas',
      `  bind 127.0.0.1:${readPort}`,
      '  balance roundrobin',
      '  option httpchk GET /replica',
      '  http-check expect status 200',
      ...checked,
      ...servers,
      '',
    ].join('\n'),
  );
  return file;
}
