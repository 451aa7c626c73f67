// Deleting messages, written once and run on both surfaces: DELETE
// /chat/Message/{ids}.json on REST (force in a JSON body), deleteMessages on
// GraphQL. The spec's rules 1–4, the credentials, the ids and the limits,
// each checked against what the database holds afterwards. REST's force in
// the query or a form, its path and body parsing, and GraphQL's Boolean
// coercion stay in test/rest and test/graphql.
import { MESSAGES } from '../../src/errors';
import { prismaOf } from '../../src/provisioning/client';
import { deletedForEveryone, expectUntouched, hides, history, memberDialog, sorted, UNKNOWN, unknownIds } from '../support/chat';
import { seedTenant, type Tenant } from '../support/seed';
import { type Headers, REFUSED_CREDENTIALS, type Refusal, SURFACES, surfaceOf, value } from './surfaces';
import { useService } from '../support/service';

const service = useService();

const seed = () => seedTenant(service.app.provisioning);

/** The ways to ask for no force: absent, REST's 0 and GraphQL's false, null. */
const NO_FORCE = [
  ['without force', undefined],
  ['with force 0 (false)', false],
  ['with force null', null],
] as const;

/** A user's own credentials: their session token, or the API key acting for them (rule 4: "runs as that user"). */
const AS_USER = [
  ['a session token', (t: Tenant, who: 'owner' | 'member' | 'outsider') => t.as[who]],
  ['an API key with On-Behalf-Of', (t: Tenant, who: 'owner' | 'member' | 'outsider') => t.as.onBehalfOf(t[who].id)],
] as const;

const sides = (deleted: readonly string[], notFound: readonly string[]) => ({ deleted: sorted(deleted), notFound: sorted(notFound) });
/** "messageId:userId", as `hides` reports a hide. */
const hide = (messageId: string, userId: number) => `${messageId}:${userId}`;

describe.each(SURFACES)('%s', (name) => {
  const surface = surfaceOf(name, service);

  /** Deletes and expects success: the ids deleted and not found. */
  const del = async (ids: readonly string[], headers: Headers, force?: boolean | null) => value(await surface.deleteMessages(headers, ids, force));

  /** The tenant's messages as three named ids. */
  const messages = (t: Tenant) => t.messageIds as [string, string, string];

  describe('rule 1: a user session without force hides messages from the caller only', () => {
    test.each(NO_FORCE)('the owner %s hides a message from their own history while the member still sees it', async (_how, force) => {
      const t = await seed();
      const [m0, m1, m2] = messages(t);
      expect(await del([m0], t.as.owner, force)).toEqual(sides([m0], []));
      expect(await history(service, t.dialogId, t.owner.id)).toEqual(sorted([m1, m2]));
      expect(await history(service, t.dialogId, t.member.id)).toEqual(sorted(t.messageIds));
      expect(await deletedForEveryone(service, t.messageIds)).toEqual([]);
      expect(await hides(service, t.messageIds)).toEqual([hide(m0, t.owner.id)]);
    });

    test.each(AS_USER)('a member who does not own the dialog, by %s, hides messages from their own history only', async (_how, as) => {
      const t = await seed();
      const [m0, m1, m2] = messages(t);
      expect(await del([m0, m2], as(t, 'member'))).toEqual(sides([m0, m2], []));
      expect(await history(service, t.dialogId, t.member.id)).toEqual([m1]);
      expect(await history(service, t.dialogId, t.owner.id)).toEqual(sorted(t.messageIds));
      expect(await deletedForEveryone(service, t.messageIds)).toEqual([]);
      expect(await hides(service, t.messageIds)).toEqual(sorted([hide(m0, t.member.id), hide(m2, t.member.id)]));
    });

    test.each(AS_USER)('a user of the application outside the dialog, by %s, gets every id back as not found and nothing changes', async (_how, as) => {
      const t = await seed();
      expect(await del(t.messageIds, as(t, 'outsider'))).toEqual(sides([], t.messageIds));
      await expectUntouched(service, t);
    });

    test('both occupants can hide the same message, each from their own history', async () => {
      const t = await seed();
      const [m0, m1, m2] = messages(t);
      expect(await del([m0], t.as.member)).toEqual(sides([m0], []));
      expect(await del([m0], t.as.owner)).toEqual(sides([m0], []));
      expect(await history(service, t.dialogId, t.owner.id)).toEqual(sorted([m1, m2]));
      expect(await history(service, t.dialogId, t.member.id)).toEqual(sorted([m1, m2]));
      expect(await deletedForEveryone(service, t.messageIds)).toEqual([]);
    });
  });

  describe('rule 2: a user session with force deletes for everyone, and only the owner may', () => {
    test.each(AS_USER)('the owner with force, by %s, deletes messages from every history', async (_how, as) => {
      const t = await seed();
      const [m0, m1, m2] = messages(t);
      expect(await del([m0, m1], as(t, 'owner'), true)).toEqual(sides([m0, m1], []));
      expect(await history(service, t.dialogId, t.owner.id)).toEqual([m2]);
      expect(await history(service, t.dialogId, t.member.id)).toEqual([m2]);
      const message = await prismaOf(service.db).message.findUnique({ where: { id: m0 } });
      expect(message?.deletedAt).toBeInstanceOf(Date);
      expect(await deletedForEveryone(service, t.messageIds)).toEqual(sorted([m0, m1]));
    });

    test.each(AS_USER.flatMap(([how, as]) => (['member', 'outsider'] as const).map((who) => [who, how, as] as const)))(
      'the %s, who does not own the dialog, by %s, gets WrongPermissions with force and nothing changes',
      async (who, _how, as) => {
        const t = await seed();
        surface.expectFailure(await surface.deleteMessages(as(t, who), t.messageIds, true), 'WRONG_PERMISSIONS', MESSAGES.wrongPermissions);
        await expectUntouched(service, t);
      },
    );

    test('force over messages of a dialog the caller owns and of one they do not is refused as a whole', async () => {
      const t = await seed();
      const own = await memberDialog(service, t);
      surface.expectFailure(await surface.deleteMessages(t.as.member, [own.messageId, t.messageIds[0]!], true), 'WRONG_PERMISSIONS', MESSAGES.wrongPermissions);
      await expectUntouched(service, t, [own.messageId]);
      expect(await history(service, own.dialogId, t.member.id)).toEqual([own.messageId]);
      expect(await history(service, own.dialogId, t.owner.id)).toEqual([own.messageId]);
    });

    test('a member who owns another dialog deletes its messages for everyone with force', async () => {
      const t = await seed();
      const own = await memberDialog(service, t);
      expect(await del([own.messageId], t.as.member, true)).toEqual(sides([own.messageId], []));
      expect(await history(service, own.dialogId, t.member.id)).toEqual([]);
      expect(await history(service, own.dialogId, t.owner.id)).toEqual([]);
      expect(await deletedForEveryone(service, [own.messageId])).toEqual([own.messageId]);
      await expectUntouched(service, t);
    });

    test('the owner with force deletes for everyone a message the member had already hidden', async () => {
      const t = await seed();
      const [m0, m1, m2] = messages(t);
      expect(await del([m0], t.as.member)).toEqual(sides([m0], []));
      expect(await del([m0], t.as.owner, true)).toEqual(sides([m0], []));
      expect(await history(service, t.dialogId, t.owner.id)).toEqual(sorted([m1, m2]));
      expect(await history(service, t.dialogId, t.member.id)).toEqual(sorted([m1, m2]));
      expect(await deletedForEveryone(service, t.messageIds)).toEqual([m0]);
    });
  });

  describe('rule 3: an API key without On-Behalf-Of deletes for everyone within its application', () => {
    // The spec: "Sending force=1 in this mode gives the same result"; so does any other force.
    test.each([...NO_FORCE, ['with force', true] as const])('an API key %s deletes messages from every history', async (_how, force) => {
      const t = await seed();
      const [m0, m1, m2] = messages(t);
      expect(await del([m1], t.as.apiKey, force)).toEqual(sides([m1], []));
      expect(await history(service, t.dialogId, t.owner.id)).toEqual(sorted([m0, m2]));
      expect(await history(service, t.dialogId, t.member.id)).toEqual(sorted([m0, m2]));
      expect(await deletedForEveryone(service, t.messageIds)).toEqual([m1]);
      expect(await hides(service, t.messageIds)).toEqual([]);
    });

    test('an API key deletes every message of a dialog at once', async () => {
      const t = await seed();
      expect(await del(t.messageIds, t.as.apiKey, false)).toEqual(sides(t.messageIds, []));
      expect(await history(service, t.dialogId, t.owner.id)).toEqual([]);
      expect(await history(service, t.dialogId, t.member.id)).toEqual([]);
    });

    test("an API key gets WrongPermissions for another application's messages and nothing is deleted in either", async () => {
      const t = await seed();
      const other = await seed();
      surface.expectFailure(await surface.deleteMessages(t.as.apiKey, other.messageIds), 'WRONG_PERMISSIONS', MESSAGES.wrongPermissions);
      await expectUntouched(service, other);
      await expectUntouched(service, t);
    });

    test("an API key request mixing its own and another application's messages deletes nothing", async () => {
      const t = await seed();
      const other = await seed();
      const ids = [t.messageIds[0]!, other.messageIds[0]!, t.messageIds[1]!];
      surface.expectFailure(await surface.deleteMessages(t.as.apiKey, ids, true), 'WRONG_PERMISSIONS', MESSAGES.wrongPermissions);
      await expectUntouched(service, t);
      await expectUntouched(service, other);
    });
  });

  // Rules 1 and 2 run above with On-Behalf-Of too (AS_USER); here is what only it has.
  describe('rule 4: an API key with On-Behalf-Of acts as that user', () => {
    test('On-Behalf-Of naming a user of another application is forbidden and nothing changes', async () => {
      const t = await seed();
      const other = await seed();
      surface.expectFailure(await surface.deleteMessages(t.as.onBehalfOf(other.member.id), t.messageIds), 'FORBIDDEN', MESSAGES.onBehalfOfUnknown);
      await expectUntouched(service, t);
    });

    // A malformed id names no user: the same answer as an unknown one.
    test.each(['abc', '0', '-1', '1.5', '1e3', ' 1', '99999999999'])(
      'On-Behalf-Of %j, which is not a user id, is forbidden and nothing changes',
      async (onBehalfOf) => {
        const t = await seed();
        surface.expectFailure(
          await surface.deleteMessages({ ...t.as.apiKey, 'On-Behalf-Of': onBehalfOf }, t.messageIds),
          'FORBIDDEN',
          MESSAGES.onBehalfOfUnknown,
        );
        await expectUntouched(service, t);
      },
    );
  });

  describe('credentials', () => {
    test.each<Refusal>([
      ...REFUSED_CREDENTIALS,
      // The header's other malformations (fetch trims values: "ApiKey " arrives as "ApiKey").
      ...['ApiKey', 'ApiKey ', 'apikey KEY', 'Basic dXNlcjpwYXNz'].map((authorization): Refusal => [
        `the malformed Authorization ${JSON.stringify(authorization)}`,
        () => ({ Authorization: authorization }),
        'UNAUTHENTICATED',
        MESSAGES.malformedAuthorization,
      ]),
      ['the API key under another scheme (Bearer)', (t) => ({ Authorization: `Bearer ${t.apiKey}` }), 'UNAUTHENTICATED', MESSAGES.malformedAuthorization],
    ])('%s is refused and nothing changes', async (_what, headers, code, message) => {
      const t = await seed();
      surface.expectFailure(await surface.deleteMessages(headers(t), t.messageIds), code, message);
      await expectUntouched(service, t);
    });

    test('an expired session is refused as one that does not exist and nothing changes', async () => {
      const t = await seed();
      await prismaOf(service.db).session.updateMany({ where: { userId: t.owner.id }, data: { expiresAt: new Date(Date.now() - 60_000) } });
      surface.expectFailure(await surface.deleteMessages(t.as.owner, t.messageIds, true), 'UNAUTHENTICATED', MESSAGES.sessionMissing);
      await expectUntouched(service, t);
    });

    test('an application session token is forbidden with force too, and nothing changes', async () => {
      const t = await seed();
      surface.expectFailure(await surface.deleteMessages(t.as.app, t.messageIds, true), 'FORBIDDEN', MESSAGES.needUser);
      await expectUntouched(service, t);
    });

    test("a user token of another application cannot delete this tenant's messages: the ids are not found", async () => {
      const t = await seed();
      const other = await seed();
      expect(await del(t.messageIds, other.as.owner)).toEqual(sides([], t.messageIds));
      expect(await del(t.messageIds, other.as.owner, true)).toEqual(sides([], t.messageIds));
      await expectUntouched(service, t);
    });
  });

  describe('ids', () => {
    test('existing ids are reported as deleted, unknown and malformed ids as not found', async () => {
      const t = await seed();
      const [m0, m1, m2] = messages(t);
      const malformed = ['xyz', m0.toUpperCase(), `${m0}0`, m0.slice(1)];
      expect(await del([m0, UNKNOWN, ...malformed, m2], t.as.owner)).toEqual(sides([m0, m2], [UNKNOWN, ...malformed]));
      expect(await history(service, t.dialogId, t.owner.id)).toEqual([m1]);
      expect(await history(service, t.dialogId, t.member.id)).toEqual(sorted(t.messageIds));
    });

    test('only unknown ids give a success with every id not found and none deleted', async () => {
      const t = await seed();
      expect(await del([UNKNOWN, 'xyz'], t.as.apiKey)).toEqual(sides([], [UNKNOWN, 'xyz']));
      await expectUntouched(service, t);
    });

    test('an id given twice is reported once', async () => {
      const t = await seed();
      const [m0] = messages(t);
      expect(await del([m0, UNKNOWN, m0, 'xyz', UNKNOWN, 'xyz'], t.as.owner, true)).toEqual(sides([m0], [UNKNOWN, 'xyz']));
      expect(await deletedForEveryone(service, t.messageIds)).toEqual([m0]);
    });

    test('deleting a message again after hiding it reports it as not found', async () => {
      const t = await seed();
      const [m0, m1] = messages(t);
      expect(await del([m0], t.as.member)).toEqual(sides([m0], []));
      expect(await del([m0, m1], t.as.member)).toEqual(sides([m1], [m0]));
      expect(await hides(service, t.messageIds)).toEqual(sorted([hide(m0, t.member.id), hide(m1, t.member.id)]));
    });

    test('one request mixing a hidden message, unknown, malformed and repeated ids puts each id on its side once', async () => {
      const t = await seed();
      const [m0, m1, m2] = messages(t);
      expect(await del([m1], t.as.member)).toEqual(sides([m1], []));
      expect(await del([m0, m1, UNKNOWN, 'xyz', m2, m0], t.as.member)).toEqual(sides([m0, m2], [m1, UNKNOWN, 'xyz']));
      expect(await history(service, t.dialogId, t.member.id)).toEqual([]);
      expect(await history(service, t.dialogId, t.owner.id)).toEqual(sorted(t.messageIds));
    });

    test('a message deleted for everyone is not found for any later delete', async () => {
      const t = await seed();
      const [m0] = messages(t);
      expect(await del([m0], t.as.owner, true)).toEqual(sides([m0], []));
      for (const [headers, force] of [
        [t.as.owner, true],
        [t.as.owner, undefined],
        [t.as.member, undefined],
        [t.as.apiKey, undefined],
        [t.as.onBehalfOf(t.member.id), undefined],
      ] as const) {
        expect(await del([m0], headers, force)).toEqual(sides([], [m0]));
      }
      expect(await hides(service, t.messageIds)).toEqual([]);
    });
  });

  describe('the number of ids', () => {
    // REST's path cannot name no id at all (its empty list is one empty id):
    // the empty list is tested on each surface in its own file.
    test.each([
      ['between two ids', (ids: string[]) => [ids[0]!, '', ids[1]!]],
      ['after the ids', (ids: string[]) => [ids[0]!, '']],
      ['before the ids', (ids: string[]) => ['', ids[0]!]],
    ])('an empty id %s is refused and nothing changes', async (_where, build) => {
      const t = await seed();
      surface.expectFailure(await surface.deleteMessages(t.as.apiKey, build(t.messageIds)), 'BAD_USER_INPUT', 'ids must not be empty');
      await expectUntouched(service, t);
    });

    test('1001 ids are refused and nothing changes', async () => {
      const t = await seed();
      const ids = [...t.messageIds, ...unknownIds(1001 - t.messageIds.length)];
      surface.expectFailure(await surface.deleteMessages(t.as.apiKey, ids), 'BAD_USER_INPUT', 'at most 1000 ids per call (got 1001)');
      await expectUntouched(service, t);
    });

    test('exactly 1000 ids are accepted', async () => {
      const t = await seed();
      const unknown = unknownIds(1000 - t.messageIds.length);
      expect(await del([...t.messageIds, ...unknown], t.as.owner)).toEqual(sides(t.messageIds, unknown));
      expect(await history(service, t.dialogId, t.owner.id)).toEqual([]);
      expect(await history(service, t.dialogId, t.member.id)).toEqual(sorted(t.messageIds));
    });
  });
});
