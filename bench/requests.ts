// The harness's own requests to the servers, apart from the load: retried
// fetches, JSON answers for the checks, and the statement counters read
// around each measured run.
import type { Server } from './processes';
import type { Target } from './seed';

export const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/**
 * The harness's own requests (counters, checks), retried: a keep-alive socket
 * the server is closing just then fails once and works on a fresh one.
 */
export async function request(url: string, init: RequestInit = {}): Promise<Response> {
  for (let attempt = 1; ; attempt++) {
    try {
      return await fetch(url, init);
    } catch (error) {
      // eslint-disable-next-line preserve-caught-error, @typescript-eslint/no-base-to-string -- the message carries the cause's text (fetch's cause is an Error)
      if (attempt >= 3) throw new Error(`${init.method ?? 'GET'} ${url}: ${(error as Error).message} (${String((error as Error).cause ?? '')})`);
      await sleep(100 * attempt);
    }
  }
}

/** A GET's status and body: the parsed JSON, or the text when it is not JSON. */
export async function getJson(url: string, headers: Record<string, string>): Promise<{ status: number; body: unknown }> {
  const res = await request(url, { headers });
  const text = await res.text();
  try {
    return { status: res.status, body: JSON.parse(text) };
  } catch {
    return { status: res.status, body: text };
  }
}

/** The statement counter of a target: the service's db_statements_total, the baseline's own. */
export async function statementCount(target: Server, kind: Target): Promise<number | null> {
  if (kind === 'baseline') {
    const res = await request(`${target.url}/__statements`);
    return ((await res.json()) as { statements: number }).statements;
  }
  const res = await request(target.metricsUrl ?? `${target.url}/metrics`);
  if (!res.ok) return null;
  const match = /^db_statements_total(?:\{[^}]*\})? ([0-9.e+]+)$/m.exec(await res.text());
  return match ? Number(match[1]) : null;
}

/** The statement count once the target has gone quiet (two equal readings 250 ms apart; 20 s at most). */
export async function settledCount(target: Server, kind: Target): Promise<number | null> {
  let last = await statementCount(target, kind);
  const deadline = Date.now() + 20_000;
  while (Date.now() < deadline) {
    await sleep(250);
    const now = await statementCount(target, kind);
    if (now === last) return now;
    last = now;
  }
  return last;
}
