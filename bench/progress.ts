// Progress: a cli-progress bar when stdout is a terminal, plain lines otherwise
// (CI logs, the smoke test), so that captured output stays readable.
import { SingleBar, Presets } from 'cli-progress';

export interface Progress {
  increment(by: number): void;
  stop(): void;
}

// eslint-disable-next-line @typescript-eslint/no-unnecessary-type-conversion -- isTTY is undefined when stdout is not a terminal, whatever its type says
const interactive = (): boolean => Boolean(process.stdout.isTTY) && process.env.CI === undefined;

export function log(line: string): void {
  process.stdout.write(`${line}\n`);
}

export function progress(label: string, total: number, unit = ''): Progress {
  let value = 0;
  if (interactive()) {
    const bar = new SingleBar(
      {
        format: `${label.padEnd(28)} [{bar}] {percentage}% | {value}/{total}${unit ? ` ${unit}` : ''} | {duration_formatted}`,
        hideCursor: true,
        clearOnComplete: false,
        etaBuffer: 20,
      },
      Presets.shades_classic,
    );
    bar.start(total, 0);
    return {
      increment(by) {
        value += by;
        bar.update(value);
      },
      stop() {
        bar.update(value);
        bar.stop();
      },
    };
  }
  // Plain lines: one at each tenth of the way.
  let reported = 0;
  log(`${label}: 0/${total}${unit ? ` ${unit}` : ''}`);
  return {
    increment(by) {
      value += by;
      const tenth = Math.floor((value / total) * 10);
      if (tenth > reported && value < total) {
        reported = tenth;
        log(`${label}: ${value}/${total}${unit ? ` ${unit}` : ''}`);
      }
    },
    stop() {
      log(`${label}: ${value}/${total}${unit ? ` ${unit}` : ''} done`);
    },
  };
}

/** A time-based bar for a load run of known duration; nothing when not a terminal. */
export function timer(label: string, seconds: number): Progress {
  if (!interactive() || seconds < 2) return { increment() {}, stop() {} };
  const p = progress(label, Math.round(seconds), 's');
  const started = Date.now();
  let shown = 0;
  const tick = setInterval(() => {
    const elapsed = Math.min(Math.round(seconds), Math.floor((Date.now() - started) / 1000));
    p.increment(elapsed - shown);
    shown = elapsed;
  }, 1000);
  return {
    increment() {},
    stop() {
      clearInterval(tick);
      p.stop();
    },
  };
}
