// The proofs' load: a fixed rate of operations over every route, through the
// load balancer, by N virtual users (each sequential, so that a write and the
// same caller's next read form a pair that means something). Clients behave
// as the README says: a 503 or a connection that fails is retried with
// backoff (50 ms doubling to 800 ms) for up to `retryMs`.
//
// Mix: lookups 30%, registered users 25%, upload then read 20%, address book
// 10%, session 10%, message delete 5%. Every acknowledged write is recorded
// (the proof then looks for it on the database), with each failed attempt's
// kind: its status and error code, or "no answer". Every operation is valid
// and made with a live session: its answer is a 2xx, and anything else (a
// 4xx included) is a failure.
import { ERRORS, MESSAGES } from '../../src/errors';
import type { VirtualUser } from './seed';
import { sleep } from './processes';

export interface Sample {
  at: number;
  op: string;
  ms: number;
  /** Answered 2xx in the end. */
  ok: boolean;
  status: number;
  /** The final answer's kind when it failed: e.g. "503 WRITE_OUTCOME_UNKNOWN", "no answer". */
  kind?: string;
  /** When each failed attempt before the final answer failed, and its kind. */
  failed: { at: number; kind: string }[];
}

/** An acknowledged write: an upload's phone, or a deleted message. */
export type Write = { at: number; userId: number } & ({ kind: 'upload'; phone: string } | { kind: 'delete'; messageId: string });

export interface LoadResult {
  samples: Sample[];
  acknowledged: Write[];
  /** Writes answered WRITE_OUTCOME_UNKNOWN at some attempt (a retry may then have succeeded). */
  unconfirmed: Write[];
  checkedPairs: number;
  stalePairs: number;
  /** Scheduled operations not started because every user had a request in flight. */
  skipped: number;
}

export interface LoadOptions {
  base: string;
  users: VirtualUser[];
  rate: number;
  durationS: number;
  retryMs: number;
  /** The load goes on past the duration until this says the faults are over. */
  done(): boolean;
  /**
   * A check of the checks (`scale:proof -- --refuse-writes`): uploads and
   * deletes carry a token no session has, so the service refuses every one
   * (401). A proof run so must fail.
   */
  refuseWrites?: boolean;
}

/** Each operation's weight in the mix, out of 100. */
export const MIX = { lookup: 30, 'registered users': 25, 'upload then read': 20, 'address book': 10, session: 10, 'delete message': 5 } as const;

/** How many of an operation a load at `rate` for `durationS` schedules (the mix's share of every scheduled operation). */
export const scheduled = (op: keyof typeof MIX, rate: number, durationS: number): number => Math.floor((rate * durationS * MIX[op]) / 100);

const MESSAGE_CODES = new Map<string, string>(
  Object.entries({
    [MESSAGES.databaseUnavailable]: 'SERVICE_UNAVAILABLE',
    [MESSAGES.shuttingDown]: 'SERVICE_UNAVAILABLE',
    [MESSAGES.databaseTimeout]: 'DATABASE_TIMEOUT',
    [MESSAGES.conflict]: 'DATABASE_BUSY',
    [MESSAGES.writeOutcomeUnknown]: 'WRITE_OUTCOME_UNKNOWN',
    [MESSAGES.rateLimitStoreUnavailable]: 'SERVICE_UNAVAILABLE',
    [MESSAGES.internal]: 'INTERNAL_SERVER_ERROR',
  }),
);

/** The first message of a REST error body: the list form, or the object form's first field. */
function firstMessage(errors: unknown): unknown {
  if (Array.isArray(errors)) return errors[0];
  if (errors !== null && typeof errors === 'object') return Object.values(errors).flat()[0];
  return undefined;
}

/**
 * "503 DATABASE_TIMEOUT" from either REST shape; a client error with its
 * message ("401 Required session does not exist"); "503 (not the service's)"
 * for a body that is neither (e.g. a proxy's page).
 */
export function kindOf(status: number, text: string): string {
  try {
    const body = JSON.parse(text) as { code?: unknown; errors?: unknown };
    if (typeof body.code === 'string' && body.code in ERRORS) return `${status} ${body.code}`;
    const message = firstMessage(body.errors);
    const code = typeof message === 'string' ? MESSAGE_CODES.get(message) : undefined;
    if (code) return `${status} ${code}`;
    if (typeof message === 'string' && status < 500) return `${status} ${message}`;
  } catch {
    // Not JSON.
  }
  return `${status} (not the service's)`;
}

/** "no answer", with why: the socket's error code (a reset, a refusal) or the client's own timeout. */
function noAnswer(error: unknown): string {
  const e = error as { name?: string; cause?: { code?: string; message?: string } };
  const why = e.name === 'TimeoutError' ? 'timeout' : (e.cause?.code ?? e.cause?.message ?? e.name);
  return why ? `no answer (${why})` : 'no answer';
}

interface Answer {
  status: number;
  text: string;
  failed: { at: number; kind: string }[];
}

/** One request, retried on 503 and connection failures (the documented client behaviour). */
export async function call(base: string, retryMs: number, method: string, pathname: string, headers: Record<string, string>, body?: unknown): Promise<Answer> {
  const failed: { at: number; kind: string }[] = [];
  let delay = 50;
  const deadline = Date.now() + retryMs;
  for (;;) {
    let kind: string;
    try {
      const response = await fetch(`${base}${pathname}`, {
        method,
        headers: body === undefined ? headers : { ...headers, 'content-type': 'application/json' },
        body: body === undefined ? undefined : JSON.stringify(body),
        signal: AbortSignal.timeout(Math.max(retryMs, 5_000)),
      });
      const text = await response.text();
      if (response.status !== 503 || Date.now() > deadline) return { status: response.status, text, failed };
      kind = kindOf(503, text);
    } catch (error) {
      // No status: the text says why there was no answer.
      if (Date.now() > deadline) return { status: 0, text: noAnswer(error), failed };
      kind = noAnswer(error);
    }
    failed.push({ at: Date.now(), kind });
    await sleep(delay);
    delay = Math.min(delay * 2, 800);
  }
}

type Op = { name: string; weight: number; run: (user: VirtualUser) => Promise<void> };

/** The operations, bound to one load's state. */
function operations(options: LoadOptions, result: LoadResult): Op[] {
  const { base, users, retryMs } = options;
  let writeSeq = 0;
  const measured = async (op: string, method: string, pathname: string, user: VirtualUser, body?: unknown): Promise<Answer> => {
    const started = Date.now();
    const writes = method !== 'GET';
    const token = options.refuseWrites && writes ? `refused-${user.token}` : user.token;
    const answer = await call(base, retryMs, method, pathname, { 'SVC-Token': token }, body);
    const ok = answer.status >= 200 && answer.status < 300;
    const kind = ok ? undefined : answer.status === 0 ? answer.text : kindOf(answer.status, answer.text);
    result.samples.push({ at: started, op, ms: Date.now() - started, ok, status: answer.status, kind, failed: answer.failed });
    return answer;
  };
  const unconfirmed = (answer: Answer) =>
    answer.failed.some((f) => f.kind.endsWith('WRITE_OUTCOME_UNKNOWN')) || kindOf(answer.status, answer.text).endsWith('WRITE_OUTCOME_UNKNOWN');
  const uploadThenRead = async (user: VirtualUser) => {
    const phone = `+1300${String(++writeSeq).padStart(8, '0')}`;
    const listed = !user.partnerListed;
    const contacts = [
      { name: 'written', phone },
      { name: 'partner', phone: user.partnerPhone, ...(listed ? {} : { destroy: 1 }) },
    ];
    const upload = await measured('upload', 'POST', '/address_book.json', user, { contacts });
    const write: Write = { at: Date.now(), userId: user.id, kind: 'upload', phone };
    if (unconfirmed(upload)) result.unconfirmed.push(write);
    if (upload.status !== 200 && upload.status !== 201) return;
    result.acknowledged.push(write);
    user.partnerListed = listed;
    // The pair: this caller's next read, through the load balancer (any instance).
    const read = await measured('registered users', 'GET', '/address_book/registered_users.json', user);
    if (read.status !== 200) return;
    result.checkedPairs++;
    const ids = (JSON.parse(read.text) as { items: { user: { id: number } }[] }).items.map((item) => item.user.id);
    if (ids.includes(user.partnerId) !== listed) result.stalePairs++;
  };
  const deleteMessage = async (user: VirtualUser) => {
    const id = user.messageIds.pop();
    if (!id) return;
    const answer = await measured('delete message', 'DELETE', `/chat/Message/${id}.json`, user);
    const write: Write = { at: Date.now(), userId: user.id, kind: 'delete', messageId: id };
    if (unconfirmed(answer)) result.unconfirmed.push(write);
    // Acknowledged by this answer, or by an earlier attempt's that the retry found done (NotFound).
    if (answer.status === 200 && (JSON.parse(answer.text) as { SuccessfullyDeleted: { ids: string[] } }).SuccessfullyDeleted.ids.includes(id)) {
      result.acknowledged.push(write);
    }
  };
  return [
    {
      name: 'lookup',
      weight: MIX.lookup,
      run: (user) => measured('lookup', 'GET', `/users/external/${users[(user.externalUserId + 7) % users.length]!.externalUserId}.json`, user).then(() => {}),
    },
    {
      name: 'registered users',
      weight: MIX['registered users'],
      run: (user) => measured('registered users', 'GET', '/address_book/registered_users.json', user).then(() => {}),
    },
    { name: 'upload then read', weight: MIX['upload then read'], run: uploadThenRead },
    { name: 'address book', weight: MIX['address book'], run: (user) => measured('address book', 'GET', '/address_book.json', user).then(() => {}) },
    { name: 'session', weight: MIX.session, run: (user) => measured('session', 'GET', '/session.json', user).then(() => {}) },
    { name: 'delete message', weight: MIX['delete message'], run: deleteMessage },
  ];
}

/** Runs the load until the duration is over and `done()`; resolves when every request has answered. */
export async function runLoad(options: LoadOptions): Promise<LoadResult> {
  const result: LoadResult = { samples: [], acknowledged: [], unconfirmed: [], checkedPairs: 0, stalePairs: 0, skipped: 0 };
  const ops = operations(options, result);
  const totalWeight = ops.reduce((sum, op) => sum + op.weight, 0);
  const inflight = new Set<Promise<void>>();
  const t0 = Date.now();
  let issued = 0;
  while (Date.now() - t0 < options.durationS * 1000 || !options.done()) {
    const due = Math.floor(((Date.now() - t0) / 1000) * options.rate);
    for (; issued < due; issued++) {
      const idle = options.users.filter((u) => !u.busy);
      if (idle.length === 0) {
        result.skipped++;
        continue;
      }
      const user = idle[Math.floor(Math.random() * idle.length)]!;
      let pick = Math.random() * totalWeight;
      const op = ops.find((candidate) => (pick -= candidate.weight) < 0) ?? ops[0]!;
      user.busy = true;
      const p = op.run(user).finally(() => {
        user.busy = false;
        inflight.delete(p);
      });
      inflight.add(p);
    }
    await sleep(20);
  }
  await Promise.all(inflight);
  return result;
}
