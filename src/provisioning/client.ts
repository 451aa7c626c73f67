// Prisma's client, built on the database's own pool (so the same connections,
// bounds and statement count) on first use, and let go of when it closes.
// This folder alone reaches it.
import type { PrismaClient } from '../__generated__/prisma/client';
import type { Database } from '../db';
import { PRISMA_CLIENT_MODULE } from '../paths';

export type { PrismaClient };

type PrismaModules = { client: typeof import('../__generated__/prisma/client'); adapter: typeof import('@prisma/adapter-pg') };
let prismaModules: PrismaModules | undefined;

/**
 * The client's modules, loaded on first use: the request path never reaches
 * Prisma, so a service that only answers requests does not hold its runtime
 * (~2 MB of start-up allocations, kept by V8's young generation at rest).
 * require, not import(): see main.ts's tracing.
 */
function loadPrisma(): PrismaModules {
  return (prismaModules ??= {
    client: require(PRISMA_CLIENT_MODULE) as PrismaModules['client'],
    adapter: require('@prisma/adapter-pg') as PrismaModules['adapter'],
  });
}

/** A deployment without the generated client (or its adapter) fails where this is called, at start, not on the first write. */
export function assertPrismaInstalled(): void {
  require.resolve(PRISMA_CLIENT_MODULE);
  require.resolve('@prisma/adapter-pg');
}

const clients = new WeakMap<Database, PrismaClient>();

/** The database's Prisma client, made on the first call. */
export function prismaOf(database: Database): PrismaClient {
  let prisma = clients.get(database);
  if (prisma === undefined) {
    const { client, adapter } = loadPrisma();
    const made = new client.PrismaClient({ adapter: new adapter.PrismaPg(database.pool) });
    database.onClose(() => made.$disconnect());
    clients.set(database, made);
    prisma = made;
  }
  return prisma;
}
