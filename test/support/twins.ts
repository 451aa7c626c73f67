// Two services over two copies of one seeded database, for differential tests:
// the same requests sent to both must get the same answers and leave the same
// data. One runs as deployed; the other with options of the test's choosing
// (e.g. every document on plain graphql-js). The database is seeded once and
// copied byte for byte (the embedded database's folder; a PostgreSQL
// database used as a template), so tokens, keys, ids and hashes are the same
// on both sides.
import { cpSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { randomBytes } from 'node:crypto';
import { Client, Pool } from 'pg';
import { type App, type AppOptions, createApp } from '../../src/app';
import { type Database, openDatabase } from '../../src/db';
import { migrate } from '../../src/db/migrate';
import type { Provisioning } from '../../src/provisioning';
import { newSecretsKey } from '../../src/services/secrets';
import { startService, usingServer } from './service';

export interface World {
  readonly baseUrl: string;
  readonly app: App;
  readonly db: Database;
}

export interface Twins<S> {
  /** The service as deployed (with `options`). */
  subject: World;
  /** The same service with `options` and `referenceOptions`. */
  reference: World;
  /** What `seed` returned (valid on both sides). */
  seeded: S;
  close(): Promise<void>;
}

type Options = Omit<Partial<AppOptions>, 'database'>;

async function admin<T>(url: string, work: (client: Client) => Promise<T>): Promise<T> {
  const client = new Client({ connectionString: url });
  await client.connect();
  try {
    return await work(client);
  } finally {
    await client.end();
  }
}

async function listen(database: Database, options: Options): Promise<World> {
  const { baseUrl, app } = await startService({ ...options, database });
  return { baseUrl, app, db: database };
}

export async function startTwins<S>(given: Options, referenceOptions: Options, seed: (provisioning: Provisioning) => Promise<S>): Promise<Twins<S>> {
  // One key seals the applications' auth secrets for the seeding service and both twins (without it each makes its own).
  const options: Options = { secretsKey: newSecretsKey(), ...given };
  const runUrl = process.env.TEST_RUN_DATABASE_URL;
  const server = usingServer() && runUrl !== undefined;
  let open: (side: 'a' | 'b') => Promise<Database>;
  let cleanUp: () => Promise<void>;
  let seeded: S;

  const seedWith = async (database: Database) => {
    const app = await createApp({ ...options, database });
    try {
      seeded = await seed(app.provisioning);
    } finally {
      await app.close();
      await database.close();
    }
  };

  if (server) {
    const base = new URL(runUrl);
    const prefix = `${base.pathname.slice(1)}_tw${randomBytes(3).toString('hex')}`.slice(0, 58);
    const urlOf = (side: 'a' | 'b') => Object.assign(new URL(runUrl), { pathname: `/${prefix}_${side}` }).toString();
    await admin(runUrl, (c) => c.query(`CREATE DATABASE ${prefix}_a`));
    const pool = new Pool({ connectionString: urlOf('a'), max: 1 });
    try {
      await migrate(pool);
    } finally {
      await pool.end();
    }
    await seedWith(await openDatabase({ url: urlOf('a'), poolMax: 5, migrate: false }));
    // A template must have no other connection: the seeding one is closed.
    await admin(runUrl, (c) => c.query(`CREATE DATABASE ${prefix}_b TEMPLATE ${prefix}_a`));
    open = (side) => openDatabase({ url: urlOf(side), poolMax: 5, migrate: false });
    cleanUp = () =>
      admin(runUrl, async (c) => {
        await c.query(`DROP DATABASE IF EXISTS ${prefix}_a WITH (FORCE)`);
        await c.query(`DROP DATABASE IF EXISTS ${prefix}_b WITH (FORCE)`);
      });
  } else {
    const dir = mkdtempSync(join(tmpdir(), 'twins-'));
    await seedWith(await openDatabase({ dataDir: join(dir, 'a') }));
    cpSync(join(dir, 'a'), join(dir, 'b'), { recursive: true });
    open = (side) => openDatabase({ dataDir: join(dir, side), migrate: false });
    cleanUp = async () => rmSync(dir, { recursive: true, force: true });
  }

  const subject = await listen(await open('a'), options);
  const reference = await listen(await open('b'), { ...options, ...referenceOptions });
  return {
    subject,
    reference,
    seeded: seeded!,
    async close() {
      for (const world of [subject, reference]) {
        await world.app.close();
        await world.db.close();
      }
      await cleanUp();
    },
  };
}
