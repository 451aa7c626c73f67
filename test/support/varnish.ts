// A real shared HTTP cache in front of a service: Debian's Varnish (`apt-get
// install varnish`, a named step of .ci/run) with its default configuration,
// started by the test that needs it and stopped in its afterAll.
import { type ChildProcess, spawn } from 'node:child_process';
import { chmodSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { connect } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { freePort } from '../../scripts/lib/ports';

export const VARNISHD = '/usr/sbin/varnishd';

export interface Varnish {
  readonly baseUrl: string;
  stop(): Promise<void>;
}

/**
 * varnishd -F listening on a free port, forwarding to 127.0.0.1:`backendPort`:
 * with its default configuration, or with the VCL file `vcl` (its backend's
 * port replaced by `backendPort`).
 */
export async function startVarnish(backendPort: number, vcl?: string): Promise<Varnish> {
  const port = await freePort();
  // Varnish's worker user reads the working directory (its compiled VCL, its shared memory log).
  const dir = mkdtempSync(join(tmpdir(), 'varnish-'));
  chmodSync(dir, 0o755);
  let backend = ['-b', `127.0.0.1:${backendPort}`];
  if (vcl !== undefined) {
    const file = join(dir, 'service.vcl');
    writeFileSync(file, readFileSync(vcl, 'utf8').replace(/\.port = "\d+";/, `.port = "${backendPort}";`), { mode: 0o644 });
    backend = ['-f', file];
  }
  const output: string[] = [];
  const child: ChildProcess = spawn(VARNISHD, ['-F', '-a', `127.0.0.1:${port}`, ...backend, '-n', dir, '-s', 'malloc,16m'], {
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  child.stdout!.on('data', (chunk: Buffer) => output.push(chunk.toString()));
  child.stderr!.on('data', (chunk: Buffer) => output.push(chunk.toString()));
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  const stop = async () => {
    if (child.exitCode === null && child.signalCode === null) child.kill('SIGTERM');
    await exited;
    rmSync(dir, { recursive: true, force: true });
  };
  // It compiles its VCL with cc before it listens (~1–3 s).
  const deadline = Date.now() + 30_000;
  while (!(await accepts(port))) {
    if (child.exitCode !== null || Date.now() > deadline) {
      await stop();
      throw new Error(`varnishd did not start:\n${output.join('')}`);
    }
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  return { baseUrl: `http://127.0.0.1:${port}`, stop };
}

function accepts(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = connect(port, '127.0.0.1');
    socket.once('connect', () => {
      socket.destroy();
      resolve(true);
    });
    socket.once('error', () => resolve(false));
  });
}

/** Varnish's X-Varnish holds two transaction ids on a hit (this request's and the stored object's), one on a miss or pass. */
export const wasHit = (headers: Headers): boolean => (headers.get('x-varnish') ?? '').trim().split(/\s+/).length === 2;
