// The embedded default database: PostgreSQL compiled to WebAssembly (PGlite),
// served on a loopback socket so that the service reaches it through the very
// same driver (pg + @prisma/adapter-pg) it uses for a real PostgreSQL server.
import { mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { AppError, ConfigError } from '../errors';

export interface EmbeddedDatabase {
  /** A pg connection string for the socket the database listens on. */
  readonly url: string;
  close(): Promise<void>;
}

/**
 * Opens PGlite on `dataDir` (in memory when null) and listens on 127.0.0.1 at
 * a free port.
 *
 * PGlite is a single-connection database: its socket server multiplexes
 * clients one protocol message at a time, so two clients' unnamed statements
 * could interleave. One connection at a time is therefore allowed (the
 * caller's pool must have max 1), and one process owns a data directory at a
 * time, guarded by a lock file holding its pid.
 */
export async function openEmbeddedDatabase(dataDir: string | null): Promise<EmbeddedDatabase> {
  let releaseLock = () => {};
  if (dataDir !== null) {
    mkdirSync(path.dirname(path.resolve(dataDir)), { recursive: true });
    releaseLock = acquireLock(`${path.resolve(dataDir)}.lock`);
  }
  try {
    // Loaded here, not at the top: PGlite's WebAssembly PostgreSQL costs
    // ~49 MB of resident memory as soon as it is imported, which a service
    // running on a PostgreSQL server (DATABASE_URL) must not pay.
    const [{ PGlite }, { PGLiteSocketServer }] = await Promise.all([import('@electric-sql/pglite'), import('@electric-sql/pglite-socket')]).catch(
      (error: unknown) => {
        // Optional dependencies: a production install (--omit=optional) runs on a server and leaves them out.
        if ((error as { code?: string }).code === 'ERR_MODULE_NOT_FOUND') {
          throw new ConfigError(
            'Invalid configuration:\n  DATABASE_URL: required: this install has no embedded database ' +
              '(@electric-sql/pglite is an optional dependency, which a production install leaves out)',
          );
        }
        throw error;
      },
    );
    const db = await PGlite.create(dataDir === null ? undefined : { dataDir });
    const server = new PGLiteSocketServer({ db, host: '127.0.0.1', port: 0, maxConnections: 1 });
    await server.start();
    const [, port] = server.getServerConn().split(':');
    return {
      url: `postgresql://postgres@127.0.0.1:${port}/postgres?sslmode=disable`,
      async close() {
        await server.stop();
        await db.close();
        releaseLock();
      },
    };
  } catch (error) {
    releaseLock();
    throw error;
  }
}

function acquireLock(lockFile: string): () => void {
  try {
    const holder = Number(readFileSync(lockFile, 'utf8'));
    if (holder !== process.pid && isAlive(holder)) {
      throw new AppError(
        'DATABASE_BUSY',
        `The embedded database is in use by process ${holder} (a running service?). ` + 'Stop it, or set DATABASE_URL to share a PostgreSQL server.',
      );
    }
  } catch (error) {
    if (error instanceof AppError) throw error;
    // No lock file, or an unreadable one: nobody holds the directory.
  }
  writeFileSync(lockFile, String(process.pid));
  return () => rmSync(lockFile, { force: true });
}

/** Whether a process with this id runs (EPERM: it does, as another user). */
export function isAlive(pid: number): boolean {
  if (!Number.isInteger(pid) || pid <= 0) return false;
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === 'EPERM';
  }
}
