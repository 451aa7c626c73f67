// Concurrent deletes: many DELETE /chat/Message/{ids}.json and deleteMessages
// calls at once, by different callers (owner, members, an outsider, the API
// key with and without On-Behalf-Of), over overlapping random id sets that
// include ids the caller may not delete (403 WrongPermissions, which per the
// README deletes nothing: "A request that fails a permission check deletes
// nothing"), ids of another application and unknown ids.
//
// Nothing is predicted in advance: the expected final state is computed from
// the answers the service gave (an id a successful call reported deleted is
// deleted for everyone or hidden for that caller; nothing else changed), then
// compared with the database, row for row. Each answer is also checked against
// the others for a serial order that could explain it: an id is reported
// deleted for everyone at most once, hidden at most once per user, and a
// NotFound or a 403 needs a cause (a delete that had started before it ended,
// a message the caller cannot reach), so "lost" deletes and deletes that
// "come back" both fail the test.
//
// On the embedded database statements run one at a time; on a server the
// pool's connections run them in parallel (row locks, READ COMMITTED).
import { createHash } from 'node:crypto';
import { LONG, recordFigures } from '../support/figures';
import { chooseSeed, countBy, random, type Random, runConcurrently, type Timed, timed } from '../support/concurrency';
import { percentile } from '../../scripts/lib/percentile';
import { unknownIds } from '../support/chat';
import { seedTenant, type Tenant } from '../support/seed';
import { testDatabaseOptions, useService, usingServer } from '../support/service';

// Bursts on a loaded CI machine (2 cores shared by two jest workers) can outlast jest's 60 s default.
jest.setTimeout(LONG ? 900_000 : 180_000);

// What is tested is what concurrent requests leave behind, not how fast they are: the statement and
// pool-wait bound (5 s by default) far above any queue here, so that a machine loaded by other work
// answers slowly instead of with 503 DATABASE_TIMEOUT (seen once at a load of 16 on 2 cores).
const service = useService({ database: testDatabaseOptions({ statementTimeoutMs: 120_000 }) });

const SEED = chooseSeed();
const ROUNDS = LONG ? 6 : 2;
const REQUESTS_PER_ROUND = LONG ? 600 : 200;
/** Requests in flight at once: past the server pool's 5 connections, so statements queue and contend. */
const CONCURRENCY = usingServer() ? 24 : 12;

const DELETE = /* GraphQL */ `
  mutation DeleteMessages($ids: [ID!]!, $force: Boolean) {
    deleteMessages(ids: $ids, force: $force) {
      successfullyDeleted
      notFound
    }
  }
`;

interface Actor {
  name: string;
  headers: Record<string, string>;
  /** The user the call acts as; null for the API key without On-Behalf-Of. */
  userId: number | null;
}

type Surface = 'rest' | 'graphql';

interface Plan {
  index: number;
  actor: Actor;
  surface: Surface;
  /** How force travels: REST 'absent' | 'json0' | 'json1' | 'form1' | 'query1'; GraphQL 'absent' | 'false' | 'true'. */
  forceAs: string;
  force: boolean;
  ids: string[];
}

/** What one call answered, reduced to what the checks need. */
type Outcome = { kind: 'ok'; deleted: string[]; notFound: string[] } | { kind: 'wrongPermissions' } | { kind: 'unexpected'; status: number; body: string };

interface Fixture {
  t: Tenant;
  other: Tenant;
  /** message id → its dialog's owner and occupants (messages of this round's application). */
  messages: Map<string, { owner: number; occupants: Set<number> }>;
  /** Ids requests may name. */
  targets: string[];
  /** Ids no request names: they must end exactly as they started. */
  control: string[];
  /** Messages of another application. */
  foreign: string[];
  unknown: string[];
  actors: Actor[];
}

async function seedRound(rng: Random): Promise<Fixture> {
  const { services, provisioning } = service.app;
  const t = await seedTenant(provisioning);
  const other = await seedTenant(provisioning);
  const extra = async (login: string, externalUserId: number) =>
    provisioning.users.create({ applicationId: t.applicationId, login, password: 'password123', externalUserId });
  const m2 = await extra('member2', 201);
  const m3 = await extra('member3', 202);
  const m2Token = (await provisioning.applications.createSession(t.applicationId, m2.id)).token;

  const messages = new Map<string, { owner: number; occupants: Set<number> }>();
  const dialog = async (ownerId: number, occupantIds: number[], senders: [number, number][]) => {
    const d = await provisioning.chat.createDialog({ applicationId: t.applicationId, ownerId, occupantIds });
    const occupants = new Set(d.occupantIds);
    for (const [senderId, count] of senders) {
      const bodies = Array.from({ length: count }, (_, i) => `m${i} from ${senderId} ${rng.int(1e9)}`);
      for (const id of await services.chat.createMany({ dialogId: d.id, senderId, bodies })) {
        messages.set(id, { owner: ownerId, occupants });
      }
    }
  };
  // Dialog A: owned by the tenant's owner; B: owned by the member. m2 is in both, m3 in A only.
  await dialog(
    t.owner.id,
    [t.member.id, m2.id, m3.id],
    [
      [t.owner.id, 160],
      [t.member.id, 60],
      [m3.id, 20],
    ],
  );
  await dialog(
    t.member.id,
    [t.owner.id, m2.id],
    [
      [t.member.id, 80],
      [t.owner.id, 40],
    ],
  );
  // The seeded dialog (owner + member, three messages) is part of the application too.
  for (const id of t.messageIds) messages.set(id, { owner: t.owner.id, occupants: new Set([t.owner.id, t.member.id]) });

  const all = rng.shuffle([...messages.keys()]);
  const controlCount = Math.floor(all.length * 0.15);
  const foreignIds = [...other.messageIds];
  const otherDialog = await provisioning.chat.createDialog({ applicationId: other.applicationId, ownerId: other.owner.id, occupantIds: [other.member.id] });
  foreignIds.push(
    ...(await services.chat.createMany({
      dialogId: otherDialog.id,
      senderId: other.owner.id,
      bodies: Array.from({ length: 20 }, (_, i) => `foreign ${i}`),
    })),
  );

  const actors: Actor[] = [
    { name: 'owner', headers: t.as.owner, userId: t.owner.id },
    { name: 'member', headers: t.as.member, userId: t.member.id },
    { name: 'member2', headers: { 'SVC-Token': m2Token }, userId: m2.id },
    { name: 'outsider', headers: t.as.outsider, userId: t.outsider.id },
    { name: 'member3 (API key, On-Behalf-Of)', headers: t.as.onBehalfOf(m3.id), userId: m3.id },
    { name: 'owner (API key, On-Behalf-Of)', headers: t.as.onBehalfOf(t.owner.id), userId: t.owner.id },
    { name: 'API key', headers: t.as.apiKey, userId: null },
  ];
  return {
    t,
    other,
    messages,
    targets: all.slice(controlCount),
    control: all.slice(0, controlCount),
    foreign: foreignIds,
    // Well-formed ids no message has: distinct per round so they never collide with real ones.
    unknown: unknownIds(40),
    actors,
  };
}

function plan(rng: Random, f: Fixture, index: number): Plan {
  // The API key alone deletes for everyone whatever it names: kept rarer, so that messages last
  // long enough in the round for hides and forces to contend over them.
  const users = f.actors.filter((a) => a.userId !== null);
  const actor = rng.chance(0.08) ? f.actors.find((a) => a.userId === null)! : rng.pick(users);
  const surface: Surface = rng.chance(0.5) ? 'rest' : 'graphql';
  // Force a quarter of the time, so that hides (the common case) have messages left to hide.
  const force = rng.chance(0.25);
  const forceAs =
    surface === 'rest' ? (force ? rng.pick(['json1', 'form1', 'query1']) : rng.pick(['absent', 'json0'])) : force ? 'true' : rng.pick(['absent', 'false']);
  const ids = rng.sample(f.targets, 1 + rng.int(20));
  if (rng.chance(0.3)) ids.push(...rng.sample(f.unknown, 1 + rng.int(3)));
  if (rng.chance(0.12)) ids.push(...rng.sample(f.foreign, 1 + rng.int(2)));
  // Ids named twice are reported once.
  if (rng.chance(0.1)) ids.push(ids[0]!);
  return { index, actor, surface, forceAs, force, ids: rng.shuffle(ids) };
}

async function send(p: Plan): Promise<Outcome> {
  if (p.surface === 'rest') {
    let path = `/chat/Message/${p.ids.join(',')}.json`;
    const options: { headers: Record<string, string>; body?: unknown; form?: boolean } = { headers: p.actor.headers };
    if (p.forceAs === 'json0') options.body = { force: 0 };
    if (p.forceAs === 'json1') options.body = { force: 1 };
    if (p.forceAs === 'form1') Object.assign(options, { body: { force: '1' }, form: true });
    if (p.forceAs === 'query1') path += '?force=1';
    const res = await service.rest('DELETE', path, options);
    if (res.status === 200 && res.body?.SuccessfullyDeleted && res.body?.NotFound) {
      return { kind: 'ok', deleted: res.body.SuccessfullyDeleted.ids, notFound: res.body.NotFound.ids };
    }
    if (res.status === 403 && JSON.stringify(res.body) === JSON.stringify({ errors: ['WrongPermissions'] })) return { kind: 'wrongPermissions' };
    return { kind: 'unexpected', status: res.status, body: res.text.slice(0, 300) };
  }
  const variables: Record<string, unknown> = { ids: p.ids };
  if (p.forceAs !== 'absent') variables.force = p.forceAs === 'true';
  const res = await service.graphql(DELETE, variables, p.actor.headers);
  const result = res.body?.data?.deleteMessages;
  if (res.status === 200 && result && !res.body.errors) return { kind: 'ok', deleted: result.successfullyDeleted, notFound: result.notFound };
  const errors = res.body?.errors;
  if (
    res.status === 200 &&
    errors?.length === 1 &&
    errors[0]?.extensions?.code === 'WRONG_PERMISSIONS' &&
    errors[0].message === 'WrongPermissions' &&
    !res.body.data?.deleteMessages
  ) {
    return { kind: 'wrongPermissions' };
  }
  return { kind: 'unexpected', status: res.status, body: res.text.slice(0, 300) };
}

/** Deleted for everyone (API key alone, or a user with force), else hidden for the calling user. */
const forEveryone = (p: Plan) => p.actor.userId === null || p.force;

/** The rows of `ids` (message columns and their hides), as one md5: equal digests, unchanged rows. */
async function rowsDigest(ids: readonly string[]): Promise<{ rows: number; md5: string }> {
  const { rows } = await service.db.pool.query<{ row: string }>(
    `SELECT ROW(m.id, m.dialog_id, m.sender_id, m.body, m.created_at, m.deleted_at,
                (SELECT string_agg(h.user_id::text || '@' || h.hidden_at::text, ',' ORDER BY h.user_id) FROM message_hides h WHERE h.message_id = m.id))::text AS row
       FROM messages m WHERE m.id = ANY($1::text[]) ORDER BY m.id`,
    [ids],
  );
  return {
    rows: rows.length,
    md5: createHash('md5')
      .update(rows.map((r) => r.row).join('\n'))
      .digest('hex'),
  };
}

interface RoundFigures {
  requests: number;
  messages: number;
  byOutcome: Record<string, number>;
  deletedForEveryone: number;
  hides: number;
  durationsMs: number[];
  wallMs: number;
}

async function round(rng: Random, roundIndex: number): Promise<RoundFigures> {
  const f = await seedRound(rng);
  const plans = Array.from({ length: REQUESTS_PER_ROUND }, (_, i) => plan(rng, f, i));
  const controlBefore = await rowsDigest([...f.control, ...f.foreign]);

  const wallStart = Date.now();
  const calls: Timed<Outcome>[] = await runConcurrently(
    plans.map((p) => () => timed(() => send(p))),
    CONCURRENCY,
  );
  const wallMs = Date.now() - wallStart;
  const where = `(seed ${SEED}, round ${roundIndex}; replay with CONCURRENCY_SEED=${SEED})`;
  const describe = (i: number) => {
    const p = plans[i]!;
    return `#${i} ${p.actor.name} ${p.surface} force=${p.forceAs}`;
  };

  // 1. Every call answered 200 or 403 WrongPermissions in the documented shape: no 5xx (a deadlock or a
  //    serialization failure would surface here as a 500), nothing else.
  const unexpected = calls.flatMap((c, i) => (c.result.kind === 'unexpected' ? [`${describe(i)}: ${c.result.status} ${c.result.body}`] : []));
  expect({ where, unexpected }).toEqual({ where, unexpected: [] });

  const problems: string[] = [];
  const foreign = new Set(f.foreign);
  const unknown = new Set(f.unknown);
  /** message id → the successful for-everyone calls that reported it deleted. */
  const everyoneWins = new Map<string, number[]>();
  /** "message:user" → the successful hide calls that reported it deleted. */
  const hideWins = new Map<string, number[]>();
  const add = (map: Map<string, number[]>, key: string, i: number) => map.set(key, [...(map.get(key) ?? []), i]);

  calls.forEach((c, i) => {
    const p = plans[i]!;
    if (c.result.kind !== 'ok') return;
    // 2. The answer partitions the named ids (each once) into deleted and not found.
    const named = [...new Set(p.ids)].sort();
    const answered = [...c.result.deleted, ...c.result.notFound].sort();
    if (JSON.stringify(named) !== JSON.stringify(answered)) problems.push(`${describe(i)}: answered ${answered.length} ids for ${named.length} named`);
    for (const id of c.result.deleted) {
      // 3. Unknown ids and other applications' messages are never deleted by this application's callers.
      if (unknown.has(id) || foreign.has(id)) problems.push(`${describe(i)}: reported ${id} deleted, which it cannot reach`);
      const m = f.messages.get(id);
      if (forEveryone(p)) {
        if (p.actor.userId !== null && m && m.owner !== p.actor.userId) problems.push(`${describe(i)}: force-deleted ${id} of a dialog it does not own`);
        add(everyoneWins, id, i);
      } else {
        if (m && !m.occupants.has(p.actor.userId!)) problems.push(`${describe(i)}: hid ${id} of a dialog it is not in`);
        add(hideWins, `${id}:${p.actor.userId}`, i);
      }
    }
  });

  // 4. Nothing is deleted twice: an id is reported deleted for everyone by at most one call,
  //    and hidden at most once per user.
  for (const [id, winners] of everyoneWins)
    if (winners.length > 1) problems.push(`${id} reported deleted for everyone by ${winners.map(describe).join(' and ')}`);
  for (const [key, winners] of hideWins) if (winners.length > 1) problems.push(`${key} reported hidden by ${winners.map(describe).join(' and ')}`);

  const winnerOf = (id: string) => everyoneWins.get(id)?.[0];
  /** Call j may have run before call i ended (so i may have seen its effect). */
  const couldPrecede = (j: number, i: number) => calls[j]!.startedAt <= calls[i]!.endedAt;
  /** Call j had answered before call i was sent (so i must have seen its effect). */
  const surelyPreceded = (j: number, i: number) => calls[j]!.endedAt < calls[i]!.startedAt;

  calls.forEach((c, i) => {
    const p = plans[i]!;
    const appIds = [...new Set(p.ids)].filter((id) => f.messages.has(id));
    if (c.result.kind === 'ok') {
      const deleted = new Set(c.result.deleted);
      // 5. Nothing lost: a reachable message reported NotFound was deleted (or hidden by the same
      //    user) by another call that could have run first. Otherwise the service dropped a delete.
      for (const id of c.result.notFound) {
        const m = f.messages.get(id);
        if (!m) continue;
        const w = winnerOf(id);
        const goneForEveryone = w !== undefined && w !== i && couldPrecede(w, i);
        if (forEveryone(p)) {
          if (!goneForEveryone) problems.push(`${describe(i)}: ${id} NotFound, yet no other call had deleted it`);
        } else if (m.occupants.has(p.actor.userId!)) {
          const hiddenBy = (hideWins.get(`${id}:${p.actor.userId}`) ?? []).filter((j) => j !== i && couldPrecede(j, i));
          if (!goneForEveryone && hiddenBy.length === 0) problems.push(`${describe(i)}: ${id} NotFound, yet visible to the caller`);
        }
      }
      // 6. A user's force succeeds only if every message of a dialog it does not own was already deleted
      //    for everyone (by another call that could have run first); an API key's only if it named no
      //    live message of another application (they are never deleted here).
      if (forEveryone(p)) {
        if (p.actor.userId === null && p.ids.some((id) => foreign.has(id)))
          problems.push(`${describe(i)}: API key succeeded over another application's message`);
        if (p.actor.userId !== null) {
          for (const id of appIds) {
            if (f.messages.get(id)!.owner === p.actor.userId || deleted.has(id)) continue;
            const w = winnerOf(id);
            if (w === undefined || !couldPrecede(w, i)) problems.push(`${describe(i)}: force succeeded over live ${id} of a dialog it does not own`);
          }
        }
      }
    } else if (c.result.kind === 'wrongPermissions') {
      // 7. A 403 needs a cause: never for a hide; for a force, a message the caller may not delete that
      //    had not surely been deleted for everyone before the call was sent.
      if (!forEveryone(p)) problems.push(`${describe(i)}: 403 for a delete without force`);
      else if (p.actor.userId === null) {
        if (!p.ids.some((id) => foreign.has(id))) problems.push(`${describe(i)}: API key refused without another application's message`);
      } else {
        const cause = appIds.some((id) => {
          if (f.messages.get(id)!.owner === p.actor.userId) return false;
          const w = winnerOf(id);
          return w === undefined || !surelyPreceded(w, i);
        });
        if (!cause) problems.push(`${describe(i)}: 403 although every message it may not delete was already gone`);
      }
    }
  });
  expect({ where, problems }).toEqual({ where, problems: [] });

  // 8. The database holds exactly what the answers say: deleted for everyone = the ids of successful
  //    force calls; hides = the (id, user) pairs of successful hides. A failed call that wrote anything,
  //    or a write no answer reported, shows up as a difference.
  const ids = [...f.messages.keys()];
  const dbDeleted = (
    await service.db.pool.query<{ id: string }>(`SELECT id FROM messages WHERE id = ANY($1::text[]) AND deleted_at IS NOT NULL ORDER BY id`, [ids])
  ).rows.map((r) => r.id);
  const dbHides = (
    await service.db.pool.query<{ key: string }>(
      `SELECT message_id || ':' || user_id AS key FROM message_hides WHERE message_id = ANY($1::text[]) ORDER BY 1`,
      [ids],
    )
  ).rows.map((r) => r.key);
  const expectedDeleted = [...everyoneWins.keys()].sort();
  const expectedHides = [...hideWins.keys()].sort();
  expect({ where, deletedForEveryone: dbDeleted }).toEqual({ where, deletedForEveryone: expectedDeleted });
  expect({ where, hides: [...dbHides].sort() }).toEqual({ where, hides: expectedHides });

  // 9. Rows no request named, and the other application's messages (named, never deletable here),
  //    are exactly as before, hides included.
  expect({ where, control: await rowsDigest([...f.control, ...f.foreign]) }).toEqual({ where, control: controlBefore });

  return {
    requests: calls.length,
    messages: f.messages.size,
    // e.g. "graphql force ok", "rest hide ok", "rest force wrongPermissions".
    byOutcome: countBy(
      calls.map((c, i) => ({ c, p: plans[i]! })),
      ({ c, p }) => `${p.surface} ${forEveryone(p) ? (p.actor.userId === null ? 'apiKey' : 'force') : 'hide'} ${c.result.kind}`,
    ),
    deletedForEveryone: expectedDeleted.length,
    hides: expectedHides.length,
    durationsMs: calls.map((c) => c.endedAt - c.startedAt),
    wallMs,
  };
}

test('parallel deletes through REST and GraphQL leave every message in the one state their answers describe', async () => {
  const rng = random(SEED);
  const rounds: RoundFigures[] = [];
  for (let r = 0; r < ROUNDS; r++) rounds.push(await round(rng, r));

  const durations = rounds.flatMap((r) => r.durationsMs);
  const byOutcome: Record<string, number> = {};
  for (const r of rounds) for (const [k, v] of Object.entries(r.byOutcome)) byOutcome[k] = (byOutcome[k] ?? 0) + v;
  recordFigures('concurrency-deletes', {
    seed: SEED,
    rounds: ROUNDS,
    concurrency: CONCURRENCY,
    requests: rounds.reduce((n, r) => n + r.requests, 0),
    ids: rounds.reduce((n, r) => n + r.messages, 0),
    byOutcome,
    deletedForEveryone: rounds.reduce((n, r) => n + r.deletedForEveryone, 0),
    hides: rounds.reduce((n, r) => n + r.hides, 0),
    requestMs: { p50: percentile(durations, 50), p95: percentile(durations, 95), max: percentile(durations, 100) },
    roundWallMs: rounds.map((r) => r.wallMs),
  });
});
