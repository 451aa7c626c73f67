// A scenario's entry in the report: the service's figures beside the
// baseline's, their ratios (with rounds, the median of each round's), and the
// rounds themselves.
import { type Figures, type Round, median, ratio } from '../figures';

export interface Scenario {
  name: string;
  description: string;
  /** 'duration': timed runs after a warm-up; 'amount': a fixed number of requests. */
  kind: 'duration' | 'amount';
  connections: number;
  service: Figures;
  baseline: Figures;
  /** Where the baseline figures come from when they are another scenario's. */
  baselineFrom?: string;
  /** service / baseline: with rounds, the median of each round's ratio. */
  ratios: { reqPerSec: number; p50: number; p99: number };
  /** Timed scenarios: each round's figures (service and baseline measured back to back, the order alternating). */
  rounds?: Round[];
  /** The sweeper scenario: what the sweeper did during each sweeping run. */
  sweep?: SweepFigures;
}

export interface SweepFigures {
  /** Expired sessions seeded before each sweeping run. */
  backlog: number;
  batchSize: number;
  runs: {
    /** Sessions the sweeper removed during the run (warm-up and measured window). */
    removed: number;
    seconds: number;
    rowsPerSecond: number;
    /** Expired sessions still there when the run ended (0: the sweep ended before the load did). */
    leftAtEnd: number;
  }[];
}

export function scenarioOf(
  name: string,
  description: string,
  kind: Scenario['kind'],
  connections: number,
  svc: Figures,
  base: Figures,
  baselineFrom?: string,
  rounds?: Round[],
): Scenario {
  const ratios =
    rounds && rounds.length > 1
      ? {
          reqPerSec: median(rounds.map((r) => r.ratios.reqPerSec)),
          p50: median(rounds.map((r) => r.ratios.p50)),
          p99: median(rounds.map((r) => r.ratios.p99)),
        }
      : { reqPerSec: ratio(svc.reqPerSec, base.reqPerSec), p50: ratio(svc.p50, base.p50), p99: ratio(svc.p99, base.p99) };
  return {
    name,
    description,
    kind,
    connections,
    service: svc,
    baseline: base,
    ...(baselineFrom ? { baselineFrom } : {}),
    ratios,
    ...(rounds ? { rounds } : {}),
  };
}
