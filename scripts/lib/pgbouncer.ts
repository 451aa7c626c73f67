// PgBouncer in transaction mode (Debian's pgbouncer) in front of one
// database, for test/db/pgbouncer.test.ts and `npm run scale:proof`: the
// configuration (deploy/pgbouncer/pgbouncer.ini, filled in) written to a directory of its own, and the command that
// starts it (as the postgres user when run as root: it refuses root).
import { execFileSync } from 'node:child_process';
import { chownSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { renderTemplate } from './template';

export interface PgbouncerOptions {
  /** Where pgbouncer.ini, users.txt, the socket and the log go. */
  dir: string;
  listenPort: number;
  /** The database served, under its own name. */
  server: { host: string; port: number; database: string; user: string };
  /** Server connections per database and user. */
  poolSize: number;
  maxClientConn?: number;
}

/** Writes the configuration (trust auth for `server.user`); answers the command line that starts PgBouncer on it. */
export function writePgbouncerConfig(options: PgbouncerOptions): { command: string; args: string[] } {
  const { dir, server } = options;
  const ini = path.join(dir, 'pgbouncer.ini');
  writeFileSync(path.join(dir, 'users.txt'), `"${server.user}" ""\n`);
  writeFileSync(
    ini,
    renderTemplate('pgbouncer/pgbouncer.ini', {
      database: server.database,
      server_host: server.host,
      server_port: server.port,
      user: server.user,
      listen_addr: '127.0.0.1',
      listen_port: options.listenPort,
      dir,
      auth_type: 'trust',
      pool_size: options.poolSize,
      // PgBouncer's own default when the caller names none.
      max_client_conn: options.maxClientConn ?? 100,
    }),
  );
  const root = process.getuid?.() === 0;
  if (root) {
    const uid = Number(execFileSync('id', ['-u', 'postgres']).toString());
    const gid = Number(execFileSync('id', ['-g', 'postgres']).toString());
    for (const file of ['', 'users.txt', 'pgbouncer.ini']) chownSync(path.join(dir, file), uid, gid);
  }
  return { command: 'pgbouncer', args: [...(root ? ['-u', 'postgres'] : []), ini] };
}
