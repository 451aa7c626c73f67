// Faults injected under load, each at a fraction of the run: its window runs
// from the moment it is injected to the moment the proof sees the system
// whole again, plus WINDOW_GRACE_MS for requests already retrying. Errors are
// expected inside windows and counted; outside them, none.
import { log, sleep } from './processes';

/** Requests that began retrying just before a window closed still belong to it. */
export const WINDOW_GRACE_MS = 2_000;

export interface Fault {
  name: string;
  /** When to inject it, as a fraction of the run's duration. */
  at: number;
  /** It kills a process that holds clients' connections: an attempt may get no answer (clients retry those too). */
  dropsConnections?: boolean;
  /** Injects it, waits until the system is whole again, and may report figures of its own. */
  // eslint-disable-next-line @typescript-eslint/no-invalid-void-type -- a fault with no figures is an async function that returns nothing
  run(): Promise<Record<string, number | string> | void>;
}

export interface FaultWindow {
  name: string;
  start: number;
  end: number;
  dropsConnections: boolean;
  /** What the fault itself measured (e.g. promotion time). */
  figures: Record<string, number | string>;
}

export interface FaultPlan {
  readonly windows: FaultWindow[];
  readonly done: () => boolean;
  /** Resolves when every fault has run (rejects with the first that failed). */
  finished: Promise<void>;
}

/** Runs the faults in order, each no earlier than its time. */
export function scheduleFaults(t0: number, durationS: number, faults: Fault[]): FaultPlan {
  const windows: FaultWindow[] = [];
  let done = false;
  const finished = (async () => {
    try {
      for (const fault of faults) {
        await sleep(Math.max(0, t0 + fault.at * durationS * 1000 - Date.now()));
        const start = Date.now();
        log(`fault: ${fault.name}`);
        const figures = (await fault.run()) ?? {};
        windows.push({ name: fault.name, start, end: Date.now(), dropsConnections: fault.dropsConnections ?? false, figures });
        log(`fault: ${fault.name}: whole again in ${Date.now() - start} ms ${JSON.stringify(figures)}`);
      }
    } finally {
      done = true;
    }
  })();
  // The load checks done(); the failure itself is reported by whoever awaits `finished`.
  finished.catch(() => {});
  return { windows, done: () => done, finished };
}

/** Whether `at` falls in a window (its grace included). */
export const inWindow = (w: FaultWindow, at: number): boolean => at >= w.start && at < w.end + WINDOW_GRACE_MS;
