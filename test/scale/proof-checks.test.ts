// The scale proofs' checks (scripts/scale/assertions.ts) on made-up load
// results: none passes on nothing, a run whose writes were all refused fails,
// and a failed answer counts only when it is a documented 503 (or no answer
// while a fault kills a process that holds connections). The proofs
// themselves run in .ci/run; this is what keeps their checks honest between
// runs, and fails in seconds when one would pass empty.
import { acknowledgedCheck, enough, failuresDocumented, pairsCheck } from '../../scripts/scale/assertions';
import type { FaultWindow } from '../../scripts/scale/faults';
import { kindOf, MIX, type Sample, scheduled, type Write } from '../../scripts/scale/load';
import { MESSAGES } from '../../src/errors';

const uploads = (n: number): Write[] => Array.from({ length: n }, (_, i) => ({ at: i, userId: 1, kind: 'upload' as const, phone: `+1300${i}` }));

const sample = (at: number, status: number, kind?: string, failed: Sample['failed'] = []): Sample => ({
  at,
  op: 'upload',
  ms: 10,
  ok: status >= 200 && status < 300,
  status,
  kind,
  failed,
});

const window = (start: number, end: number, dropsConnections: boolean): FaultWindow => ({ name: 'fault', start, end, dropsConnections, figures: {} });

describe('acknowledged writes and read-after-write pairs', () => {
  // The base proof's default schedule: 60 s at 120 operations/s, uploads 20% of them.
  const minimum = enough(scheduled('upload then read', 120, 60));

  test('the minimum is half of what the schedule asks for', () => {
    expect(MIX['upload then read']).toBe(20);
    expect(scheduled('upload then read', 120, 60)).toBe(1_440);
    expect(minimum).toBe(720);
  });

  test('"0 of 0" fails: a run that acknowledged nothing proves nothing', () => {
    expect(acknowledgedCheck('primary', 0, [], minimum)).toMatchObject({ ok: false, detail: '0 of 0' });
    expect(pairsCheck({ checkedPairs: 0, stalePairs: 0 }, minimum)).toMatchObject({ ok: false, detail: '0 of 0 pairs' });
  });

  test('fewer writes or pairs than the minimum fail, even all present and none stale', () => {
    expect(acknowledgedCheck('primary', minimum - 1, uploads(minimum - 1), minimum).ok).toBe(false);
    expect(pairsCheck({ checkedPairs: minimum - 1, stalePairs: 0 }, minimum).ok).toBe(false);
  });

  test('enough writes, every one present, and enough pairs, none stale: passes', () => {
    expect(acknowledgedCheck('primary', 1_300, uploads(1_300), minimum)).toMatchObject({ ok: true, detail: '1300 of 1300' });
    expect(pairsCheck({ checkedPairs: 1_300, stalePairs: 0 }, minimum).ok).toBe(true);
  });

  test('one write missing, or one stale pair, fails', () => {
    expect(acknowledgedCheck('primary', 1_299, uploads(1_300), minimum).ok).toBe(false);
    expect(pairsCheck({ checkedPairs: 1_300, stalePairs: 1 }, minimum).ok).toBe(false);
  });
});

describe('failed answers', () => {
  const unavailable = kindOf(503, JSON.stringify({ errors: [MESSAGES.databaseUnavailable] }));

  test('the service’s answers are named by their code; a client error by its message; anything else is not the service’s', () => {
    expect(unavailable).toBe('503 SERVICE_UNAVAILABLE');
    expect(kindOf(503, JSON.stringify({ code: 'WRITE_OUTCOME_UNKNOWN', message: MESSAGES.writeOutcomeUnknown }))).toBe('503 WRITE_OUTCOME_UNKNOWN');
    expect(kindOf(401, JSON.stringify({ errors: { base: ['Required session does not exist'] } }))).toBe('401 Required session does not exist');
    expect(kindOf(503, '<html><body><h1>503 Service Unavailable</h1></body></html>')).toBe("503 (not the service's)");
  });

  test('documented 503s, retried or final, pass', () => {
    const samples = [sample(100, 200, undefined, [{ at: 50, kind: unavailable }]), sample(200, 503, unavailable)];
    expect(failuresDocumented(samples, [])).toMatchObject({ ok: true, detail: '2 of 2' });
  });

  test('an unexpected 4xx, a 500 or a proxy’s page fails, inside a fault window too', () => {
    const during = [window(0, 1_000, true)];
    for (const kind of ['401 Required session does not exist', '500 INTERNAL_SERVER_ERROR', "503 (not the service's)"]) {
      const status = Number(kind.slice(0, 3));
      expect(failuresDocumented([sample(100, status, kind)], during).ok).toBe(false);
      expect(failuresDocumented([sample(100, 200, undefined, [{ at: 100, kind }])], during).ok).toBe(false);
    }
  });

  test('no answer passes only inside the window of a fault that kills a process holding connections', () => {
    const dropped = { at: 500, kind: 'no answer (ECONNRESET)' };
    expect(failuresDocumented([sample(400, 200, undefined, [dropped])], [window(0, 1_000, true)]).ok).toBe(true);
    expect(failuresDocumented([sample(400, 200, undefined, [dropped])], [window(0, 1_000, false)]).ok).toBe(false);
    expect(failuresDocumented([sample(400, 200, undefined, [dropped])], [window(5_000, 6_000, true)]).ok).toBe(false);
  });
});

test('a run whose every write was refused fails its checks, whatever else it answered', () => {
  // What `scale:proof -- --refuse-writes` makes: reads answered, every upload 401, nothing acknowledged.
  const refused = kindOf(401, JSON.stringify({ errors: { base: ['Required session does not exist'] } }));
  const samples = Array.from({ length: 1_440 }, (_, i) => (i % 5 === 0 ? sample(i, 401, refused) : { ...sample(i, 200), op: 'lookup' }));
  const minimum = enough(scheduled('upload then read', 120, 60));
  const checks = [acknowledgedCheck('primary', 0, [], minimum), pairsCheck({ checkedPairs: 0, stalePairs: 0 }, minimum), failuresDocumented(samples, [])];
  expect(checks.map((c) => c.ok)).toEqual([false, false, false]);
  expect(checks[2]!.detail).toMatch(`0 of 288; others {"${refused}":288}: ${refused} (outside the windows);`);
});
