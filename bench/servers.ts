// The servers a benchmark run measures: the service, the baseline and, when
// the lookups run with --peers, the GraphQL peers; started together, described
// when the run fails (a crash shows in its stderr), and stopped at the end.
import type { BenchOptions } from './options';
import { type Server, startBaseline, startPeer, startService } from './processes';
import { log } from './progress';
import type { SeedResult } from './seed';

export interface Servers {
  service: Server;
  baseline: Server;
  /** The peers: all started, or none. */
  mercurius: Server | undefined;
  apolloLookup: Server | undefined;
  apolloFloor: Server | undefined;
}

export async function startServers(options: BenchOptions, seeded: SeedResult): Promise<Servers> {
  const peersWanted = options.peers && options.only.includes('lookups');
  const [service, baseline, mercurius, apolloLookup, apolloFloor] = await Promise.all([
    startService(seeded.databaseUrl, options.poolMax, options.cpuProf, options.serviceFlags),
    startBaseline(seeded.databaseUrl, options.poolMax, options.baselineSessionWrites),
    peersWanted ? startPeer('mercurius', seeded.databaseUrl, options.poolMax, options.cpuProf) : undefined,
    peersWanted ? startPeer('apollo-lookup', seeded.databaseUrl, options.poolMax, options.cpuProf) : undefined,
    peersWanted ? startPeer('apollo-floor', seeded.databaseUrl, options.poolMax, options.cpuProf) : undefined,
  ]);
  log(`service pid ${service.pid} at ${service.url}; baseline pid ${baseline.pid} at ${baseline.url}`);
  for (const peer of [mercurius, apolloLookup, apolloFloor]) if (peer) log(`peer: ${peer.name} pid ${peer.pid} at ${peer.url}`);
  return { service, baseline, mercurius, apolloLookup, apolloFloor };
}

/** Adds to the error's message what each server was doing (none when they never all started). */
export function describeServers(error: unknown, servers: Servers | undefined): void {
  const notes = (servers ? [servers.service, servers.baseline, servers.mercurius, servers.apolloLookup, servers.apolloFloor] : [])
    .filter((server): server is Server => server !== undefined)
    .map((server) => {
      const ended = server.exit();
      const state = ended ? `EXITED (${ended})` : 'still running';
      const tail = server.stderr.slice(-15).join('\n');
      const out = ended ? server.stdoutTail() : '';
      return `${server.name} (pid ${server.pid}) ${state}` + `${tail ? `; its stderr ends:\n${tail}` : ''}${out.trim() ? `\nits stdout ends:\n${out}` : ''}`;
    });
  if (notes.length > 0 && error instanceof Error) error.message += `\n${notes.join('\n')}`;
}

export async function stopServers(servers: Servers | undefined): Promise<void> {
  const codes = await Promise.all([
    servers?.service.stop(),
    servers?.baseline.stop(),
    servers?.mercurius?.stop(),
    servers?.apolloLookup?.stop(),
    servers?.apolloFloor?.stop(),
  ]);
  if (servers && codes[0] !== 0 && codes[0] !== undefined) log(`service exited with code ${codes[0]}`);
}
