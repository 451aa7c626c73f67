// A free TCP port on 127.0.0.1, for the throwaway servers the tests and
// `npm run scale:proof` start (PostgreSQL clusters, PgBouncer, Redis, service
// instances, HAProxy).
import { createServer } from 'node:net';

/** A port free on 127.0.0.1 now (the OS picks it; the caller then binds it). */
export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address() as { port: number };
      server.close(() => resolve(port));
    });
  });
}
