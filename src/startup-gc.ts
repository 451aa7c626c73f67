// One full, memory-reducing garbage collection once the service is listening.
//
// Start-up allocates ~55 MB (loading ~975 modules, building the schema and
// the routes, opening the database): the scavenges grow V8's young
// generation to its maximum (~16 MB resident, half of it garbage) and the old
// generation keeps start-up's garbage. An idle instance runs no collection
// that would give them back: V8's memory reducer is armed by a full
// collection, which start-up does not always reach, and on Node 24 it then
// declines for start-up's allocation rate. So every instance at rest held
// ~15 MB it does not use (BENCHMARKS.md, issue 20). The collection costs
// 10–70 ms once, a second after listening; GC_AFTER_START=false skips it.
import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';

type Collect = (options?: { type: 'major'; flavor: 'last-resort' }) => void;

/**
 * V8 12 (Node 22 and later) takes the options; V8 11 (Node 20) reads any
 * object as a young-generation collection, so there a plain gc(): a full
 * collection, after which V8's memory reducer shrinks the spaces ~10 s later.
 */
const SHRINKING = Number(process.versions.v8.split('.')[0]) >= 12 ? ({ type: 'major', flavor: 'last-resort' } as const) : undefined;

export function collectStartupGarbage(): void {
  // --expose-gc reaches the contexts created after it is set: a context made
  // for the purpose hands over its gc(), and the service's own global never
  // gets one. `last-resort` is the flavour that shrinks the heap's spaces,
  // not only collects them.
  setFlagsFromString('--expose-gc');
  try {
    (runInNewContext('gc') as Collect)(SHRINKING);
  } finally {
    setFlagsFromString('--no-expose-gc');
  }
}
