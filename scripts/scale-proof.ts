// npm run scale:proof [-- --duration 60 --rate 120 --live-rate 20 --users 40]
// npm run scale:proof -- --failover [--duration 90 --nodes 2 --async --retry-ms 5000]
// npm run scale:proof -- [--failover] --refuse-writes   (a check of the checks: must fail)
//
// The service past one machine, proved on this one (SCALING.md). Without
// --failover: 3 instances, PgBouncer, a streaming standby and Redis, under
// instance, standby and Redis faults (scripts/scale/base-proof.ts). With
// --failover: PostgreSQL under Patroni, the primary killed, rejoining, the
// synchronous standby killed, a switchover (scripts/scale/failover-proof.ts).
// Both install what they need from Debian's packages as their first step,
// stop everything they started and delete their data, whatever happens;
// they exit non-zero when a check fails. --refuse-writes sends the load's
// uploads and deletes with a token the service refuses: such a run must
// fail its checks (no acknowledged writes, every write answered 401).
import { parseArgs } from 'node:util';
import { baseProof } from './scale/base-proof';
import { failoverProof } from './scale/failover-proof';
import { Runner } from './scale/processes';

const { values: args } = parseArgs({
  options: {
    failover: { type: 'boolean', default: false },
    duration: { type: 'string' },
    rate: { type: 'string', default: '120' },
    'live-rate': { type: 'string', default: '20' },
    users: { type: 'string', default: '40' },
    nodes: { type: 'string', default: '2' },
    async: { type: 'boolean', default: false },
    'retry-ms': { type: 'string', default: '5000' },
    'refuse-writes': { type: 'boolean', default: false },
  },
});

const positive = (name: string, value: string | undefined, min = 1): number => {
  const n = Number(value);
  if (!Number.isInteger(n) || n < min) {
    process.stderr.write(`scale proof: --${name} must be an integer of at least ${min} (got ${value})\n`);
    process.exit(2);
  }
  return n;
};

const common = {
  durationS: positive('duration', args.duration ?? (args.failover ? '90' : '60'), 10),
  rate: positive('rate', args.rate),
  liveRate: positive('live-rate', args['live-rate']),
  users: positive('users', args.users, 2),
  refuseWrites: args['refuse-writes'],
};
const runner = new Runner();
if (args.failover) {
  const nodes = positive('nodes', args.nodes, 2);
  if (nodes > 3) {
    process.stderr.write('scale proof: --nodes is 2 or 3\n');
    process.exit(2);
  }
  const options = { ...common, nodes, synchronous: !args.async, retryMs: positive('retry-ms', args['retry-ms'], 0) };
  runner.run('failover proof', () => failoverProof(runner, options));
} else {
  runner.run('scale proof', () => baseProof(runner, common));
}
