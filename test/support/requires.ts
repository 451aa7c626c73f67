// What a test needs that a run may lack (Redis, a program such as pgbouncer
// or Chromium, PostgreSQL's binaries, a PostgreSQL server), decided when the
// file is collected: a test whose need is met is an ordinary test; one whose
// need is missing is skipped and says why, never run empty and counted as
// passed. Under CI=true (as .ci/run runs) a missing need is a failure naming
// it instead: CI must not go green on tests that never ran.
//
// The one exception is a need a kind of run lacks by design: the embedded
// database has no PostgreSQL server behind it, so its run skips the tests
// of the server's own behaviour (statement timeouts, concurrent migrations,
// PgBouncer, …) even in CI. Those skips are listed by name in
// docs/development.md, and .ci/run fails when the run's skipped tests are
// not exactly that list (none on the server).
import { existsSync } from 'node:fs';
import path from 'node:path';
import Redis from 'ioredis';
import { clustersAvailable } from '../../scripts/lib/pg-cluster';
import { realPostgresMissing } from './postgres-instance';

export interface Need {
  /** What is needed, as the messages name it: "Redis at redis://127.0.0.1:6379", "/usr/bin/chromium". */
  what: string;
  /** Why this run lacks it; undefined when it has it. */
  missing?: string;
  /** Lacked by the kind of run, not by the machine (the embedded database has no server): skipped even under CI. */
  byDesign?: boolean;
}

/** CI's runs (.ci/run exports CI=true): a missing need fails instead of skipping. */
export const IN_CI = process.env.CI === 'true';

/** The Redis the tests share (the machine's), or TEST_REDIS_URL (e.g. redis://127.0.0.1:1 to see the run without it). */
export const REDIS_URL = process.env.TEST_REDIS_URL ?? 'redis://127.0.0.1:6379';

/** Set by global-setup.ts (probeRedis): why Redis did not answer at the start of the run; unset when it did. */
const REDIS_MISSING_ENV = 'TEST_REDIS_MISSING';

/**
 * Asks Redis for a PING (global-setup.ts, once per run, before any file is
 * collected), and records the answer where every test file's collection reads
 * it: collection is synchronous, a connection is not.
 */
export async function probeRedis(): Promise<void> {
  const probe = new Redis(REDIS_URL, { lazyConnect: true, connectTimeout: 3_000, maxRetriesPerRequest: 0, retryStrategy: () => null });
  // The socket's own error (ECONNREFUSED, a timeout) says more than the failed connect's "Connection is closed".
  let cause: Error | undefined;
  probe.on('error', (error: Error) => (cause ??= error));
  try {
    await probe.connect();
    await probe.ping();
    delete process.env[REDIS_MISSING_ENV];
  } catch (error) {
    process.env[REDIS_MISSING_ENV] = `no answer (${(cause ?? (error as Error)).message}; set TEST_REDIS_URL)`;
  } finally {
    probe.disconnect();
  }
}

export const needRedis: Need = { what: `Redis at ${REDIS_URL}`, missing: process.env[REDIS_MISSING_ENV] };

/** A PostgreSQL server behind the run (TEST_DATABASE_URL): the embedded run lacks one by design. */
export const needServer: Need = {
  what: 'a PostgreSQL server (TEST_DATABASE_URL)',
  missing: process.env.TEST_RUN_DATABASE_URL ? undefined : 'the run is on the embedded database',
  byDesign: true,
};

/** A program at the path the test runs it from. */
export const needProgram = (file: string, install: string): Need => ({ what: file, missing: existsSync(file) ? undefined : `not found (${install})` });

/** A program the test runs by name, found on PATH. */
export function needOnPath(name: string, install: string): Need {
  const found = (process.env.PATH ?? '').split(path.delimiter).some((dir) => dir !== '' && existsSync(path.join(dir, name)));
  return { what: `${name} on PATH`, missing: found ? undefined : `not found (${install})` };
}

/** PostgreSQL clusters of the test's own (initdb, pg_basebackup; scripts/lib/pg-cluster.ts). */
export function needClusters(): Need {
  const can = clustersAvailable();
  return { what: 'PostgreSQL clusters of the test’s own (initdb as the postgres user)', missing: can.ok ? undefined : can.reason };
}

/** A real PostgreSQL instance of the test's own (test/support/postgres-instance.ts), not PGlite. */
export const needPostgresBinaries = (): Need => ({
  what: 'PostgreSQL binaries for an instance of the test’s own',
  missing: realPostgresMissing(),
});

type TestFn = (name: string, fn: jest.ProvidesCallback, timeout?: number) => void;
type DescribeFn = (name: string, fn: () => void) => void;

export interface Gated {
  /** True when every need is met: the tests run. */
  readonly met: boolean;
  /** The first need that is missing, if any. */
  readonly unmet?: Need;
  test: TestFn;
  describe: DescribeFn;
}

const here = (): string => path.relative(path.resolve(__dirname, '..', '..'), expect.getState().testPath ?? '?');

function failing(name: string, need: Need): void {
  test(`${name} [needs ${need.what}]`, () => {
    const error = new Error(
      `needs ${need.what}, which this run lacks: ${need.missing}. Outside CI this is skipped; under CI=true a test that cannot run fails.`,
    );
    // The message is the whole story: no stack into this helper.
    error.stack = error.message;
    throw error;
  });
}

/**
 * `test` and `describe` for tests that need `needs`: the ordinary ones when all
 * are met; else skipped with a message naming the test and what it lacks, or,
 * under CI=true, a failing test saying the same (a need lacked by design is
 * skipped even then).
 */
export function requires(...needs: Need[]): Gated {
  const unmet = needs.find((need) => need.missing !== undefined && need.byDesign) ?? needs.find((need) => need.missing !== undefined);
  if (!unmet) return { met: true, test, describe };
  const fails = IN_CI && !unmet.byDesign;
  const say = (what: string) => {
    // console.info: jest prints where it was said, without the code frame it adds to warnings.
    if (!fails) console.info(`SKIPPED ${here()}: ${what}: needs ${unmet.what}: ${unmet.missing}`);
  };
  return {
    met: false,
    unmet,
    test: (name, fn, timeout) => {
      say(`"${name}"`);
      if (fails) failing(name, unmet);
      else test.skip(name, fn, timeout);
    },
    describe: (name, fn) => {
      say(`every test of "${name}"`);
      if (fails) failing(name, unmet);
      describe.skip(name, fn);
    },
  };
}
