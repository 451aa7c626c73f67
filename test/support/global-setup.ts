// The tests that start the service or the admin CLI as a process run the
// compiled dist/ (as `npm start` does): built here when src/ changed since.
//
// With TEST_DATABASE_URL (a PostgreSQL server), the run gets a database of its
// own, created here, migrated once, and dropped in global-teardown.ts; test
// files reach it through TEST_RUN_DATABASE_URL. Without it, nothing to do:
// each test file opens an in-memory embedded database.
//
// Redis is asked once here whether it answers: the files that need it read
// the answer when they are collected (test/support/requires.ts).
import { Client, Pool } from 'pg';
import { ensureBuilt } from '../../scripts/lib/compiled';
import { migrate } from '../../src/db/migrate';
import { probeRedis } from './requires';

export default async function globalSetup(): Promise<void> {
  ensureBuilt();
  await probeRedis();
  const serverUrl = process.env.TEST_DATABASE_URL;
  if (!serverUrl) return;
  const name = `chatsvc_test_${process.pid}_${Date.now()}`;
  const admin = new Client({ connectionString: serverUrl });
  await admin.connect();
  await admin.query(`CREATE DATABASE ${name}`);
  await admin.end();
  const url = new URL(serverUrl);
  url.pathname = `/${name}`;
  process.env.TEST_RUN_DATABASE_URL = url.toString();
  process.env.TEST_RUN_DATABASE_NAME = name;
  const pool = new Pool({ connectionString: url.toString(), max: 1 });
  await migrate(pool);
  await pool.end();
}
