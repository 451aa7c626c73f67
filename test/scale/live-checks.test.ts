// The scale proofs' live checks (scripts/scale/live.ts) on made-up
// deliveries: a subscriber that received what it is owed, once and in order,
// passes; one event missing, twice, out of order within its dialog, not owed,
// or unlike the table fails; nothing owed, or too few writes, fails (nothing
// passes empty). The proofs themselves run in .ci/run.
import { liveChecks, type LiveWrite, type LiveWrites, type StoredEvent, STREAMS, Subscriber, type Dialog } from '../../scripts/scale/live';
import type { VirtualUser } from '../../scripts/scale/seed';
import { toGlobalId } from '../../src/services/global-id';
import { encodeCursor } from '../../src/services/live';

const user = (id: number): VirtualUser => ({
  id,
  externalUserId: id,
  token: `t${id}`,
  busy: false,
  partnerListed: false,
  partnerId: 0,
  partnerPhone: '',
  messageIds: [],
});

const DIALOG_A = 'a'.repeat(24);
const DIALOG_B = 'b'.repeat(24);
const dialogs: Dialog[] = [
  { id: DIALOG_A, ownerId: 1, occupants: new Set([1, 2]) },
  { id: DIALOG_B, ownerId: 2, occupants: new Set([2, 3]) },
];
const messageId = (n: number) => n.toString(16).padStart(24, '0');

let nextId = 1n;
function event(dialogId: string, kind: 'deleted' | 'hidden' | 'added', userId: number | null, message: number): StoredEvent {
  const key = { xid: 1000n + nextId, id: nextId++ };
  return { key, cursor: encodeCursor(key), dialogId, kind, userId, messageIds: [messageId(message)], createdAt: 1_000 };
}

const payloadOf = (e: StoredEvent) => ({
  cursor: e.cursor,
  dialogId: toGlobalId('Dialog', e.dialogId),
  scope: e.kind === 'hidden' ? 'FOR_ME' : 'FOR_EVERYONE',
  deletedMessageDatabaseIds: [...e.messageIds],
  deletedAt: new Date(e.createdAt).toISOString(),
});

function subscriber(userId: number, received: StoredEvent[], payload = payloadOf): Subscriber {
  const s = new Subscriber(STREAMS[0]!, user(userId), undefined, { kind: 'balancer' }, { balancer: 'http://127.0.0.1:1', instances: [] }, 'baseline');
  s.connections.push({ url: 'http://127.0.0.1:1', after: 'baseline', opened: 0, acked: 0 });
  for (const e of received) s.deliveries.push({ cursor: e.cursor, at: 1_010, payload: payload(e), connection: 0 });
  return s;
}

const writes = (deletes: number, extra: LiveWrite[] = []): LiveWrites => ({
  acknowledged: [
    ...Array.from({ length: deletes }, (_, i) => ({
      kind: 'delete for me' as const,
      via: 'REST' as const,
      userId: 2,
      dialogId: DIALOG_A,
      messageId: messageId(100 + i),
      at: 0,
    })),
    ...extra,
  ],
  unanswered: 0,
  scheduled: deletes * 2,
});

describe('live checks', () => {
  // User 1 occupies A; user 2 occupies A and B; a delete for me reaches only who made it.
  const everyoneA = event(DIALOG_A, 'deleted', null, 1);
  const everyoneB = event(DIALOG_B, 'deleted', null, 2);
  const hiddenBy2 = event(DIALOG_A, 'hidden', 2, 3);
  const added = event(DIALOG_A, 'added', 1, 4);
  const hides = Array.from({ length: 4 }, (_, i) => event(DIALOG_A, 'hidden', 2, 100 + i));
  const events = [everyoneA, everyoneB, hiddenBy2, added, ...hides];
  const owedTo2 = [everyoneA, everyoneB, hiddenBy2, ...hides];
  const run = (subscribers: Subscriber[], w = writes(4)) => liveChecks({ subscribers, events, dialogs, writes: w, windows: [] });
  const first = (subscribers: Subscriber[], w?: LiveWrites) => run(subscribers, w).checks[0]!;

  test('every event owed received once, in order, as stored: passes', () => {
    const result = run([subscriber(1, [everyoneA]), subscriber(2, owedTo2)]);
    expect(result.checks.map((c) => [c.ok, c.detail])).toEqual([
      [true, expect.stringMatching(/^8 owed, 8 delivered: missing 0, twice 0, not owed 0, unlike the table 0, out of order 0/)],
      [true, '0'],
      [true, '4 of 4 (4 deletes)'],
    ]);
    expect(result.figures).toMatchObject({ liveDeliveries: 8, replayed: 0, latencyP50: 10 });
  });

  test('nothing owed, or no subscriber: fails', () => {
    expect(first([]).ok).toBe(false);
    // User 3 is owed B's delete only; with none of its events in the table it is owed nothing.
    expect(liveChecks({ subscribers: [subscriber(3, [])], events: [everyoneA], dialogs, writes: writes(4), windows: [] }).checks[0]!.ok).toBe(false);
  });

  test('one missing, one twice, one out of order in its dialog, one not owed, one unlike the table: each fails', () => {
    expect(first([subscriber(2, owedTo2.slice(1))]).detail).toMatch(/missing 1/);
    expect(first([subscriber(2, [...owedTo2, hiddenBy2])]).detail).toMatch(/twice 1/);
    expect(first([subscriber(2, [hiddenBy2, everyoneA, everyoneB, ...hides])]).detail).toMatch(/out of order 1/);
    // Another user's delete for me.
    expect(first([subscriber(1, [everyoneA, hiddenBy2])]).detail).toMatch(/not owed 1/);
    expect(first([subscriber(2, owedTo2, (e) => ({ ...payloadOf(e), scope: 'FOR_EVERYONE' }))]).detail).toMatch(/unlike the table 5/);
    for (const s of [
      subscriber(2, owedTo2.slice(1)),
      subscriber(2, [...owedTo2, hiddenBy2]),
      subscriber(2, [hiddenBy2, everyoneA, everyoneB, ...hides]),
      subscriber(1, [everyoneA, hiddenBy2]),
    ]) {
      expect(first([s]).ok).toBe(false);
    }
  });

  test('events of two dialogs interleaved differently than the table still pass: the order is per dialog', () => {
    expect(first([subscriber(2, [everyoneB, everyoneA, hiddenBy2, ...hides])]).ok).toBe(true);
  });

  test('a write with no event, or with two, fails; fewer deletes than half those scheduled fails', () => {
    const send: LiveWrite = { kind: 'send', via: 'GraphQL', userId: 1, dialogId: DIALOG_A, messageId: messageId(4), at: 0 };
    const lost: LiveWrite = { kind: 'delete for everyone', via: 'GraphQL', userId: 1, dialogId: DIALOG_A, messageId: messageId(999), at: 0 };
    const ok = [subscriber(2, owedTo2)];
    expect(run(ok, writes(4, [send])).checks[2]!.ok).toBe(true);
    expect(run(ok, writes(4, [lost])).checks[2]!).toMatchObject({ ok: false, detail: expect.stringMatching(/^4 of 5/) });
    const twice = liveChecks({ subscribers: ok, events: [...events, event(DIALOG_A, 'added', 1, 4)], dialogs, writes: writes(4, [send]), windows: [] });
    expect(twice.checks[2]!.ok).toBe(false);
    expect(run(ok, { ...writes(4), scheduled: 100 }).checks[2]!.ok).toBe(false);
  });

  test('a subscription refused (not a documented unavailability) fails the run', () => {
    const s = subscriber(2, owedTo2);
    s.errors.push('FORBIDDEN Not an occupant of this dialog');
    expect(run([s]).checks[1]!.ok).toBe(false);
  });
});

describe('the instance kill', () => {
  const killed = 'http://127.0.0.1:1001';
  const other = 'http://127.0.0.1:1002';
  const window = { name: 'kill', start: 100, end: 1_000, dropsConnections: true, figures: {} };
  const e = { ...event(DIALOG_A, 'deleted', null, 50), createdAt: 500 };
  function moved(to: string, got: boolean): Subscriber {
    const s = new Subscriber(STREAMS[0]!, user(1), undefined, { kind: 'direct', home: 0 }, { balancer: '', instances: [killed, other] }, 'baseline');
    s.connections.push({ url: killed, after: 'baseline', opened: 0, acked: 10, lost: 150, code: 1006 });
    // A failed attempt in between (4408 from a busy instance), then the socket that resumed.
    s.connections.push({ url: other, after: 'baseline', opened: 1_150, lost: 1_160, code: 4408 });
    s.connections.push({ url: to, after: 'baseline', opened: 1_200, acked: 1_250 });
    if (got) s.deliveries.push({ cursor: e.cursor, at: 1_300, payload: payloadOf(e), connection: 2 });
    return s;
  }
  const check = (s: Subscriber) =>
    liveChecks({
      subscribers: [s],
      events: [e],
      dialogs,
      writes: { acknowledged: [], unanswered: 0, scheduled: 0 },
      windows: [window],
      instanceKill: { window: 'kill', instance: 0 },
    }).checks[3]!;

  test('reconnected on another instance, the event written meanwhile replayed: passes', () => {
    expect(check(moved(other, true))).toMatchObject({
      ok: true,
      detail: '1 subscribers, 1 reconnected on another instance with after, 1 events replayed to them, 0 missed',
    });
  });

  test('back on the killed instance, or nothing replayed (missed): fails', () => {
    expect(check(moved(killed, true)).ok).toBe(false);
    expect(check(moved(other, false))).toMatchObject({ ok: false, detail: expect.stringMatching(/0 events replayed to them, 1 missed/) });
  });
});
