// Databases of a service's own, for startService's `database: 'isolated'` and
// `twin` (service.ts): on a PostgreSQL server, databases created next to the
// run's one (and dropped with the service); on the embedded database, folders
// of their own. Nothing here starts a service.
import { cpSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { randomBytes } from 'node:crypto';
import { Client, Pool } from 'pg';
import { type AppOptions, createApp } from '../../src/app';
import { type DatabaseOptions, openDatabase } from '../../src/db';
import { migrate } from '../../src/db/migrate';
import type { Provisioning } from '../../src/provisioning';

/** The run's PostgreSQL database (global-setup.ts), or undefined on the embedded database. */
const runUrl = (): string | undefined => process.env.TEST_RUN_DATABASE_URL || undefined;

async function admin<T>(url: string, work: (client: Client) => Promise<T>): Promise<T> {
  const client = new Client({ connectionString: url });
  await client.connect();
  try {
    return await work(client);
  } finally {
    await client.end();
  }
}

/** A name for a database next to the run's one: its name, `tag` and random hex, within PostgreSQL's 63 bytes. */
function nameNextTo(run: string, tag: string, room = 0): string {
  return `${new URL(run).pathname.slice(1)}_${tag}${randomBytes(4).toString('hex')}`.slice(0, 63 - room);
}

const urlOf = (run: string, name: string): string => Object.assign(new URL(run), { pathname: `/${name}` }).toString();

/** openDatabase()'s options for a connection to a server database (as the run's database is opened: service.ts testDatabaseOptions). */
const serverOptions = (url: string): DatabaseOptions => ({ url, poolMax: 5, migrate: false });

export interface OwnDatabase {
  /** openDatabase()'s options for it. */
  options: DatabaseOptions;
  /** Removes it (after every connection to it closed). */
  drop: () => Promise<void>;
}

/**
 * A migrated, empty database of its own. On the embedded database every test
 * file already has its own: the run's is returned, and drop() does nothing.
 * On a PostgreSQL server the run's database is shared by the test files
 * running in parallel, whose writes would show in a digest of every table; so
 * a fresh one is created there, so that "the digest did not change" means
 * "this file's requests wrote nothing".
 */
export async function isolatedDatabase(embedded: DatabaseOptions): Promise<OwnDatabase> {
  const run = runUrl();
  if (!run) return { options: embedded, drop: async () => {} };
  const name = nameNextTo(run, 'fz');
  await admin(run, (c) => c.query(`CREATE DATABASE ${name}`));
  const pool = new Pool({ connectionString: urlOf(run, name), max: 1 });
  try {
    await migrate(pool);
  } finally {
    await pool.end();
  }
  return {
    options: serverOptions(urlOf(run, name)),
    drop: async () => {
      await admin(run, (c) => c.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`));
    },
  };
}

export interface SeededCopies<S> {
  /** openDatabase()'s options for each copy. */
  a: DatabaseOptions;
  b: DatabaseOptions;
  /** What the seed returned (valid in both copies). */
  seeded: S;
  /** Removes both (after every connection to them closed). */
  drop: () => Promise<void>;
}

/**
 * Two copies of one seeded database, byte for byte (the embedded database's
 * folder; a PostgreSQL database used as a template), so that tokens, keys,
 * ids and hashes are the same in both. `seed` runs on the provisioning of an
 * app with `options` (closed before the copy).
 */
export async function seededCopies<S>(options: Omit<AppOptions, 'database'>, seed: (provisioning: Provisioning) => Promise<S>): Promise<SeededCopies<S>> {
  let seeded: S | undefined;
  const seedWith = async (database: DatabaseOptions) => {
    const db = await openDatabase(database);
    try {
      const app = await createApp({ ...options, database: db });
      try {
        seeded = await seed(app.provisioning);
      } finally {
        await app.close();
      }
    } finally {
      await db.close();
    }
  };
  const run = runUrl();
  if (run) {
    // Room for the _a/_b suffixes.
    const prefix = nameNextTo(run, 'tw', 2);
    await admin(run, (c) => c.query(`CREATE DATABASE ${prefix}_a`));
    const pool = new Pool({ connectionString: urlOf(run, `${prefix}_a`), max: 1 });
    try {
      await migrate(pool);
    } finally {
      await pool.end();
    }
    await seedWith(serverOptions(urlOf(run, `${prefix}_a`)));
    // A template must have no other connection: the seeding one is closed.
    await admin(run, (c) => c.query(`CREATE DATABASE ${prefix}_b TEMPLATE ${prefix}_a`));
    return {
      a: serverOptions(urlOf(run, `${prefix}_a`)),
      b: serverOptions(urlOf(run, `${prefix}_b`)),
      seeded: seeded as S,
      drop: () =>
        admin(run, async (c) => {
          await c.query(`DROP DATABASE IF EXISTS ${prefix}_a WITH (FORCE)`);
          await c.query(`DROP DATABASE IF EXISTS ${prefix}_b WITH (FORCE)`);
        }),
    };
  }
  const dir = mkdtempSync(join(tmpdir(), 'twins-'));
  await seedWith({ dataDir: join(dir, 'a') });
  cpSync(join(dir, 'a'), join(dir, 'b'), { recursive: true });
  return {
    a: { dataDir: join(dir, 'a'), migrate: false },
    b: { dataDir: join(dir, 'b'), migrate: false },
    seeded: seeded as S,
    drop: async () => rmSync(dir, { recursive: true, force: true }),
  };
}
