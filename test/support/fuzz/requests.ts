// Raw HTTP for the fuzz tests: node:http, so header values and paths go out
// byte for byte as generated; the headers a generated request sends, fitted
// under the service's header limit.
import { type IncomingHttpHeaders, request as httpRequest } from 'node:http';
import { materialize, type Repeat, textLength } from './values';

export type HeaderValue = string | string[];

export interface RawRequest {
  method: string;
  /** Sent as is in the request line (must be 0x21–0xff characters: node:http refuses others). */
  path: string;
  headers?: Record<string, HeaderValue>;
  body?: Buffer | string;
}

export interface RawResponse {
  status: number;
  headers: IncomingHttpHeaders;
  text: string;
  /** The parsed body; undefined when the body is not JSON (or empty). */
  json: unknown;
  ms: number;
}

/**
 * One request on a connection of its own (agent: false, Connection: close):
 * a response that makes the server drop the connection cannot spill into the
 * next request. Header values go out as latin1 bytes, as node:http writes
 * them; a body always gets its Content-Length (node sends a GET or DELETE
 * body unframed otherwise, which the server would read as a second request).
 */
export function send(port: number, req: RawRequest, timeoutMs = 20_000): Promise<RawResponse> {
  const body = req.body === undefined ? undefined : Buffer.isBuffer(req.body) ? req.body : Buffer.from(req.body, 'utf8');
  const headers: Record<string, HeaderValue> = { ...req.headers };
  const names = new Set(Object.keys(headers).map((n) => n.toLowerCase()));
  if (body !== undefined && !names.has('content-length') && !names.has('transfer-encoding')) {
    headers['content-length'] = String(body.length);
  }
  const started = performance.now();
  return new Promise((resolve, reject) => {
    const request = httpRequest({ host: '127.0.0.1', port, method: req.method, path: req.path, headers, agent: false, timeout: timeoutMs }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (chunk: Buffer) => chunks.push(chunk));
      res.on('error', reject);
      res.on('end', () => {
        const text = Buffer.concat(chunks).toString('utf8');
        let json: unknown;
        try {
          json = text === '' ? undefined : JSON.parse(text);
        } catch {
          json = undefined;
        }
        resolve({ status: res.statusCode ?? 0, headers: res.headers, text, json, ms: performance.now() - started });
      });
    });
    request.on('timeout', () => request.destroy(new Error(`no answer within ${timeoutMs} ms`)));
    request.on('error', reject);
    // The server may answer (413) and close before the whole body is written.
    request.on('socket', (socket) => socket.on('error', () => {}));
    request.end(body);
  });
}

/** GET /healthz answers 200 {"status":"ok"}: the process survived. */
export async function expectHealthy(port: number): Promise<void> {
  const res = await send(port, { method: 'GET', path: '/healthz' }, 5_000);
  if (res.status !== 200 || JSON.stringify(res.json) !== '{"status":"ok"}') {
    throw new Error(`/healthz answered ${res.status} ${res.text.slice(0, 200)}`);
  }
}

/** Node's HTTP client refuses header values outside tab, 0x20–0x7e and 0x80–0xff: send other text as its UTF-8 bytes read as latin1. */
export function latin1Header(value: string): string {
  return /^[\t\x20-\x7e\x80-\xff]*$/.test(value)
    ? value
    : Buffer.from(value, 'utf8')
        .toString('latin1')
        .replace(/[^\t\x20-\x7e\x80-\xff]/g, '?');
}

/** Request line and headers stay under the service's 64 KiB (docs/operation.md, Limits: over it is 431, tested on its own). */
const HEADER_BUDGET = 62 * 1024;

/**
 * The headers to send: the first value of each name (case-insensitively, so a
 * random extra header never replaces a credential), with the largest
 * repeated values trimmed until the request line and headers fit the budget.
 * The descriptor's own values are not touched (fast-check replays them).
 */
export function fitHeaders(pairs: readonly (readonly [string, HeaderValue | Repeat])[], requestLineLength: number): Record<string, HeaderValue> {
  const copy = pairs.map(([k, v]): [string, HeaderValue | Repeat] => [k, typeof v === 'object' && !Array.isArray(v) ? { ...v } : v]);
  const size = () => requestLineLength + copy.reduce((n, [k, v]) => n + k.length + 4 + (Array.isArray(v) ? v.join('').length : textLength(v)), 200);
  for (let over = size() - HEADER_BUDGET; over > 0; over = size() - HEADER_BUDGET) {
    const repeated = copy.map(([, v]) => v).filter((v): v is Repeat => typeof v === 'object' && !Array.isArray(v) && v.times > 0);
    if (repeated.length === 0) break;
    const largest = repeated.reduce((x, y) => (textLength(x) >= textLength(y) ? x : y));
    largest.times = Math.max(0, largest.times - Math.ceil(over / largest.repeat.length));
  }
  const headers: Record<string, HeaderValue> = {};
  for (const [name, value] of copy) {
    const key = Object.keys(headers).find((k) => k.toLowerCase() === name.toLowerCase()) ?? name;
    headers[key] ??= Array.isArray(value) ? value : materialize(value);
  }
  return headers;
}
