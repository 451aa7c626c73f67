// Where a benchmark ran, for its report: the machine, Node, the PostgreSQL
// server and its settings, the commit (and whether src/ differed from it),
// and the server URL with its password hidden.
import { execFileSync } from 'node:child_process';
import os from 'node:os';
import path from 'node:path';
import { Client } from 'pg';

export interface Machine {
  platform: string;
  release: string;
  arch: string;
  cpus: { model: string; speedMHz: number }[];
  totalMemMb: number;
  node: string;
  postgres: string;
  postgresSettings: Record<string, string>;
}

export interface GitState {
  commit: string | null;
  dirtyFiles: number | null;
}

export async function machine(serverUrl: string): Promise<Machine> {
  const client = new Client({ connectionString: serverUrl });
  await client.connect();
  try {
    const version = (await client.query<{ version: string }>('SELECT version()')).rows[0]!.version;
    const settings = await client.query<{ name: string; setting: string; unit: string | null }>(
      `SELECT name, setting, unit FROM pg_settings
        WHERE name IN ('shared_buffers', 'work_mem', 'synchronous_commit', 'fsync', 'max_connections', 'effective_cache_size', 'jit')`,
    );
    return {
      platform: os.platform(),
      release: os.release(),
      arch: os.arch(),
      cpus: os.cpus().map((cpu) => ({ model: cpu.model, speedMHz: cpu.speed })),
      totalMemMb: Math.round(os.totalmem() / 1048576),
      node: process.version,
      postgres: version,
      postgresSettings: Object.fromEntries(settings.rows.map((r) => [r.name, r.unit ? `${r.setting} (${r.unit})` : r.setting])),
    };
  } finally {
    await client.end();
  }
}

export function git(): GitState {
  const root = path.resolve(__dirname, '..');
  try {
    const commit = execFileSync('git', ['rev-parse', 'HEAD'], { cwd: root, encoding: 'utf8', stdio: ['ignore', 'pipe', 'ignore'] }).trim();
    const status = execFileSync('git', ['status', '--porcelain', '--', 'src', 'prisma', 'schema'], {
      cwd: root,
      encoding: 'utf8',
      stdio: ['ignore', 'pipe', 'ignore'],
    });
    return { commit, dirtyFiles: status.split('\n').filter(Boolean).length };
  } catch {
    return { commit: null, dirtyFiles: null };
  }
}

export function redact(url: string): string {
  const parsed = new URL(url);
  if (parsed.password) parsed.password = '***';
  return parsed.toString();
}
