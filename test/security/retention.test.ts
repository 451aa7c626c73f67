// Deleted content is deleted (docs/decisions.md: Decisions, "Deleted messages"). A client
// deletes a message for everyone, over REST or GraphQL, or every occupant
// hides it for themselves; then the database is read as an attacker with a
// copy of it would read it: the text must be gone, while the row keeps what
// the delete rules need (so that a second delete still answers NotFound).
// With DELETED_CONTENT_RETENTION_S the text is kept aside, out of every
// answer, until the sweeper's run after its time.
//
// On a PostgreSQL server this file runs on a database of its own: the sweeper
// removes whatever is due in the whole database, other files' rows included.
import { recordFigures } from '../support/figures';
import { history } from '../support/chat';
import { seedTenant } from '../support/seed';
import { type ServiceOptions, useService } from '../support/service';

jest.setTimeout(120_000);

const service = useService({ database: 'isolated' });
const figures: Record<string, unknown> = {};
afterAll(() => recordFigures('retention', figures));

const seed = () => seedTenant(service.app.provisioning);

/** Another app over the file's database, with these options (a retention), listening on a free port. */
async function startApp(options: Omit<ServiceOptions, 'database'>): Promise<string> {
  return (await service.start(options)).baseUrl;
}

interface StoredMessage {
  id: string;
  dialog_id: string;
  sender_id: number;
  body: string | null;
  created_at: Date;
  deleted_at: Date | null;
}

/** What the database holds for these messages, by id. */
async function stored(ids: readonly string[]): Promise<Map<string, StoredMessage>> {
  const { rows } = await service.db.pool.query<StoredMessage>(
    'SELECT id, dialog_id, sender_id, body, created_at, deleted_at FROM messages WHERE id = ANY($1::text[])',
    [ids],
  );
  return new Map(rows.map((row) => [row.id, row]));
}

/** Every copy of these messages' text the database holds, anywhere: the messages' own and the retained ones. */
async function textsAnywhere(ids: readonly string[]): Promise<string[]> {
  const { rows } = await service.db.pool.query<{ body: string }>(
    `SELECT body FROM messages WHERE id = ANY($1::text[]) AND body IS NOT NULL
     UNION ALL
     SELECT body FROM retained_message_contents WHERE message_id = ANY($1::text[])`,
    [ids],
  );
  return rows.map((row) => row.body).sort();
}

const DELETE = `mutation Delete($ids: [ID!]!, $force: Boolean) { deleteMessages(ids: $ids, force: $force) { successfullyDeleted notFound } }`;

describe('a message deleted for everyone', () => {
  test('over REST loses its text at once, keeps its id, dialog, sender and times, and a second delete answers NotFound', async () => {
    const t = await seed();
    const [m0, m1, m2] = t.messageIds as [string, string, string];
    const before = await stored([m0]);

    const res = await service.call('DELETE', `/chat/Message/${m0}.json`, { headers: t.as.owner, body: { force: 1 } });
    expect({ status: res.status, body: res.body }).toEqual({ status: 200, body: { SuccessfullyDeleted: { ids: [m0] }, NotFound: { ids: [] } } });

    const after = (await stored([m0])).get(m0)!;
    expect(after.body).toBeNull();
    expect(after.deleted_at).toBeInstanceOf(Date);
    expect({ ...after, body: 'one', deleted_at: null }).toEqual({ ...before.get(m0)!, deleted_at: null });
    expect(await textsAnywhere(t.messageIds)).toEqual(['three', 'two']);

    const again = await service.call('DELETE', `/chat/Message/${m0}.json`, { headers: t.as.owner, body: { force: 1 } });
    expect(again.body).toEqual({ SuccessfullyDeleted: { ids: [] }, NotFound: { ids: [m0] } });
    expect(await history(service, t.dialogId, t.member.id)).toEqual([m1, m2].sort());
  });

  test('through GraphQL with an API key loses its text at once, and the others keep theirs', async () => {
    const t = await seed();
    const [m0, m1] = t.messageIds as [string, string, string];
    const res = await service.graphql(DELETE, { ids: [m0, m1], force: true }, t.as.apiKey);
    expect(res.body).toEqual({ data: { deleteMessages: { successfullyDeleted: [m0, m1], notFound: [] } } });
    const rows = await stored(t.messageIds);
    expect([...rows.values()].map((row) => [row.id, row.body, row.deleted_at !== null]).sort()).toEqual(
      [
        [m0, null, true],
        [m1, null, true],
        [t.messageIds[2], 'three', false],
      ].sort(),
    );
    expect(await textsAnywhere(t.messageIds)).toEqual(['three']);
    const again = await service.graphql(DELETE, { ids: [m0] }, t.as.apiKey);
    expect(again.body.data?.deleteMessages).toEqual({ successfullyDeleted: [], notFound: [m0] });
  });
});

describe('a message hidden by its occupants', () => {
  test('keeps its text while some occupant still sees it, and loses it when the last one hides it', async () => {
    const t = await seed();
    const [m0] = t.messageIds as [string, string, string];
    const first = await service.call('DELETE', `/chat/Message/${m0}.json`, { headers: t.as.owner });
    expect(first.body).toEqual({ SuccessfullyDeleted: { ids: [m0] }, NotFound: { ids: [] } });
    expect((await stored([m0])).get(m0)!.body).toBe('one');

    const last = await service.graphql(DELETE, { ids: [m0] }, t.as.member);
    expect(last.body.data?.deleteMessages).toEqual({ successfullyDeleted: [m0], notFound: [] });
    const row = (await stored([m0])).get(m0)!;
    expect({ body: row.body, deletedAt: row.deleted_at }).toEqual({ body: null, deletedAt: null });
    expect(await textsAnywhere([m0])).toEqual([]);
    // The rules are unchanged: hidden for each, so NotFound for each.
    const again = await service.call('DELETE', `/chat/Message/${m0}.json`, { headers: t.as.member });
    expect(again.body).toEqual({ SuccessfullyDeleted: { ids: [] }, NotFound: { ids: [m0] } });
  });

  test('by two occupants at the same moment leaves no text behind', async () => {
    const ROUNDS = 15;
    const left: string[] = [];
    for (let round = 0; round < ROUNDS; round++) {
      const t = await seed();
      const ids = t.messageIds;
      // Both occupants hide all three messages at once, one over REST, one over GraphQL.
      const [rest, graphql] = await Promise.all([
        service.call('DELETE', `/chat/Message/${ids.join(',')}.json`, { headers: t.as.owner }),
        service.graphql(DELETE, { ids }, t.as.member),
      ]);
      expect(rest.body.SuccessfullyDeleted.ids.sort()).toEqual([...ids].sort());
      expect(graphql.body.data?.deleteMessages.successfullyDeleted.sort()).toEqual([...ids].sort());
      left.push(...(await textsAnywhere(ids)));
    }
    figures.concurrentHides = { rounds: ROUNDS, messages: ROUNDS * 3, textsLeft: left.length };
    expect(left).toEqual([]);
  });
});

describe('DELETED_CONTENT_RETENTION_S', () => {
  test('keeps the text aside, in no answer, until the sweeper runs after its time', async () => {
    const base = await startApp({ chat: { deletedContentRetentionSeconds: 3600 } });
    const t = await seed();
    const [m0, m1] = t.messageIds as [string, string, string];
    const startedAt = Date.now();
    const res = await fetch(`${base}/chat/Message/${m0}.json?force=1`, { method: 'DELETE', headers: t.as.owner });
    expect(res.status).toBe(200);
    // Hidden by both occupants: the same retention.
    for (const as of [t.as.owner, t.as.member]) {
      expect((await fetch(`${base}/chat/Message/${m1}.json`, { method: 'DELETE', headers: as })).status).toBe(200);
    }

    const rows = await stored([m0, m1]);
    expect([rows.get(m0)!.body, rows.get(m1)!.body]).toEqual([null, null]);
    const { rows: retained } = await service.db.pool.query<{ message_id: string; body: string; expires_at: Date }>(
      'SELECT message_id, body, expires_at FROM retained_message_contents WHERE message_id = ANY($1::text[]) ORDER BY body',
      [[m0, m1]],
    );
    expect(retained.map((r) => [r.message_id, r.body])).toEqual([
      [m0, 'one'],
      [m1, 'two'],
    ]);
    for (const r of retained) {
      expect(r.expires_at.getTime()).toBeGreaterThanOrEqual(startedAt + 3_600_000 - 5_000);
      expect(r.expires_at.getTime()).toBeLessThanOrEqual(Date.now() + 3_600_000 + 5_000);
    }
    // Not in any history.
    expect(await history(service, t.dialogId, t.owner.id)).toEqual([t.messageIds[2]]);

    // Not yet due: a sweep keeps it.
    const early = await service.app.services.sweeper.runOnce();
    expect(early.removed.retained_content).toBe(0);
    expect((await textsAnywhere([m0, m1])).length).toBe(2);

    // An hour later (moved back rather than waited for): the next sweep removes it.
    await service.db.pool.query(`UPDATE retained_message_contents SET expires_at = now() - interval '1 second' WHERE message_id = $1`, [m0]);
    const due = await service.app.services.sweeper.runOnce();
    expect(due.removed.retained_content).toBe(1);
    expect(await textsAnywhere([m0, m1])).toEqual(['two']);
    // The message row itself stays: a delete still answers NotFound.
    expect((await stored([m0])).get(m0)!.deleted_at).toBeInstanceOf(Date);
    const again = await fetch(`${base}/chat/Message/${m0}.json?force=1`, { method: 'DELETE', headers: t.as.owner });
    expect(await again.json()).toEqual({ SuccessfullyDeleted: { ids: [] }, NotFound: { ids: [m0] } });
  });
});
