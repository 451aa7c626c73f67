// What the benchmark's phases share, passed to each explicitly: the options,
// the seeded database, the running servers, the tokens and the warnings.
import type { BenchOptions } from './options';
import type { SeedResult, Target } from './seed';
import type { Servers } from './servers';

export interface BenchContext {
  options: BenchOptions;
  seeded: SeedResult;
  servers: Servers;
  /** Each side's session token header. */
  withToken: (kind: Target) => Record<string, string>;
  /** A random existing user's external id. */
  randomId: () => number;
  /** Records a warning for the report and prints it. */
  warn: (message: string) => void;
}

export function contextOf(options: BenchOptions, seeded: SeedResult, servers: Servers, warn: (message: string) => void): BenchContext {
  const tokens = { service: seeded.serviceToken, baseline: seeded.baselineToken };
  return {
    options,
    seeded,
    servers,
    withToken: (kind) => ({ 'SVC-Token': tokens[kind] }),
    randomId: () => 1 + Math.floor(Math.random() * options.users),
    warn,
  };
}
