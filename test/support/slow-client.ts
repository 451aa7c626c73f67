// A client that sends its request slowly, over a raw socket (node:net): the
// start of the request at once, then a piece at a time, as a slowloris-style
// attacker or a stalled mobile link would. It reads whatever the service
// answers and notes when the service closed the connection.
import { connect } from 'node:net';

export interface SlowRequest {
  /** Sent at once: the request line and headers so far (and maybe some body). */
  start: string;
  /** Then this, `piece` characters at a time every `everyMs` (default: nothing more). */
  rest?: string;
  piece?: number;
  everyMs?: number;
  /** Stop waiting after this long (the test then fails on `closedAfterMs`). */
  giveUpMs: number;
}

export interface SlowAnswer {
  /** The status of the first answer, if any came. */
  status: number | undefined;
  headers: Record<string, string>;
  text: string;
  /** The parsed JSON body, if it was JSON. */
  body: any;
  /** When the service closed the connection (ms after the first byte was sent); undefined: still open at giveUpMs. */
  closedAfterMs: number | undefined;
  /** When the answer arrived (ms after the first byte was sent). */
  answeredAfterMs: number | undefined;
  /** How much of `rest` was sent before the answer or the close. */
  sent: number;
}

export function slowRequest(baseUrl: string, request: SlowRequest): Promise<SlowAnswer> {
  const { hostname, port } = new URL(baseUrl);
  return new Promise((resolve) => {
    const started = Date.now();
    const socket = connect(Number(port), hostname);
    let received = '';
    let answeredAfterMs: number | undefined;
    let sent = 0;
    let timer: NodeJS.Timeout | undefined;
    const finish = (closedAfterMs: number | undefined) => {
      clearInterval(timer);
      clearTimeout(giveUp);
      socket.destroy();
      resolve({ ...parse(received), closedAfterMs, answeredAfterMs, sent });
    };
    const giveUp = setTimeout(() => finish(undefined), request.giveUpMs);
    socket.on('connect', () => {
      socket.write(request.start);
      const rest = request.rest ?? '';
      if (rest === '') return;
      timer = setInterval(() => {
        if (sent >= rest.length || socket.destroyed || !socket.writable) return clearInterval(timer);
        const piece = rest.slice(sent, sent + (request.piece ?? 1));
        sent += piece.length;
        socket.write(piece);
      }, request.everyMs ?? 100);
    });
    socket.on('data', (chunk) => {
      answeredAfterMs ??= Date.now() - started;
      received += chunk.toString('latin1');
    });
    // A reset after the answer (the service closed while we still wrote) is a close too.
    socket.on('error', () => {});
    socket.on('close', () => finish(Date.now() - started));
  });
}

function parse(raw: string): Omit<SlowAnswer, 'closedAfterMs' | 'answeredAfterMs' | 'sent'> {
  const end = raw.indexOf('\r\n\r\n');
  if (end < 0) return { status: undefined, headers: {}, text: '', body: undefined };
  const [statusLine, ...lines] = raw.slice(0, end).split('\r\n');
  const headers: Record<string, string> = {};
  for (const line of lines) {
    const colon = line.indexOf(':');
    headers[line.slice(0, colon).trim().toLowerCase()] = line.slice(colon + 1).trim();
  }
  const length = headers['content-length'] === undefined ? undefined : Number(headers['content-length']);
  const text = Buffer.from(raw.slice(end + 4), 'latin1')
    .toString('utf8')
    .slice(0, length);
  let body: unknown;
  try {
    body = JSON.parse(text);
  } catch {
    body = undefined;
  }
  return { status: Number(statusLine!.split(' ')[1]), headers, text, body };
}

/** The start of a request with a body of `length` bytes: request line, headers, blank line. */
export function requestHead(method: string, path: string, headers: Record<string, string>, length: number): string {
  const lines = [`${method} ${path} HTTP/1.1`, 'Host: 127.0.0.1', `Content-Length: ${length}`, ...Object.entries(headers).map(([k, v]) => `${k}: ${v}`)];
  return `${lines.join('\r\n')}\r\n\r\n`;
}
