// The chat screens' rules, written once and run on both surfaces (issue 32):
// GET /chat/Dialog.json, GET and POST /chat/Message.json on REST; viewer's
// dialogs, Dialog.messages and messageSend on GraphQL. Histories after
// deletes for the caller and for everyone, seen by each occupant; sending
// (occupants only, the body's limits); another application's dialog
// invisible everywhere; the credentials. What only one surface has
// (outcomes per id, paging by cursor, QuickBlox's skip) is in test/graphql/chat.test.ts
// and test/rest/chat.test.ts.
import { MESSAGES } from '../../src/errors';
import { prismaOf } from '../../src/provisioning/client';
import { memberDialog, UNKNOWN } from '../support/chat';
import { seedTenant, type Tenant } from '../support/seed';
import { type Headers, REFUSED_CREDENTIALS, SURFACES, surfaceOf, value } from './surfaces';
import { useService } from '../support/service';

const service = useService();
const seed = () => seedTenant(service.app.provisioning);
type Send = [headers: Headers, dialogId: string, body: string];
const stored = (dialogId: string) => prismaOf(service.db).message.count({ where: { dialogId } });

describe.each(SURFACES)('%s', (name) => {
  const surface = surfaceOf(name, service);
  const ids = (messages: { id: string }[]) => messages.map((m) => m.id);

  describe('dialogs', () => {
    test('the dialogs the caller occupies, most recent activity first, with occupants, owner and last message', async () => {
      const t = await seed();
      const second = await memberDialog(service, t);
      const occupants = [t.owner.id, t.member.id].sort((a, b) => a - b);
      expect(value(await surface.dialogs(t.as.owner))).toEqual({
        total: 2,
        dialogs: [
          {
            id: second.dialogId,
            name: null,
            type: 2,
            ownerId: t.member.id,
            occupantIds: occupants,
            lastMessage: 'member owns this',
            lastMessageUserId: t.member.id,
          },
          { id: t.dialogId, name: null, type: 2, ownerId: t.owner.id, occupantIds: occupants, lastMessage: 'three', lastMessageUserId: t.owner.id },
        ],
      });
      expect(value(await surface.dialogs(t.as.owner, { limit: 1, skip: 1 })).dialogs.map((d) => d.id)).toEqual([t.dialogId]);
      // The outsider occupies none.
      expect(value(await surface.dialogs(t.as.outsider))).toEqual({ total: 0, dialogs: [] });
      // An API key acting for the member sees the member's.
      expect(value(await surface.dialogs(t.as.onBehalfOf(t.member.id))).total).toBe(2);
    });

    test("the last message is the newest of the caller's history: a hide changes it for the caller only", async () => {
      const t = await seed();
      value(await surface.deleteMessages(t.as.member, [t.messageIds[2]!]));
      expect(value(await surface.dialogs(t.as.member)).dialogs[0]!.lastMessage).toBe('two');
      expect(value(await surface.dialogs(t.as.owner)).dialogs[0]!.lastMessage).toBe('three');
    });
  });

  describe('histories after deletes', () => {
    test("FOR_ME: the caller's history loses the message, the other occupant's keeps it", async () => {
      const t = await seed();
      const [m0, m1, m2] = t.messageIds as [string, string, string];
      value(await surface.deleteMessages(t.as.member, [m1]));
      expect(ids(value(await surface.history(t.as.member, t.dialogId)))).toEqual([m0, m2]);
      expect(ids(value(await surface.history(t.as.owner, t.dialogId)))).toEqual([m0, m1, m2]);
    });

    test("FOR_EVERYONE: every occupant's history loses it, and the dialog's last message follows", async () => {
      const t = await seed();
      const [m0, m1, m2] = t.messageIds as [string, string, string];
      value(await surface.deleteMessages(t.as.owner, [m2], true));
      for (const who of [t.as.owner, t.as.member]) {
        expect(ids(value(await surface.history(who, t.dialogId)))).toEqual([m0, m1]);
        expect(value(await surface.dialogs(who)).dialogs[0]!.lastMessage).toBe('two');
      }
    });

    test('the newest first, as a screen opens a dialog: the last n, in the order sent', async () => {
      const t = await seed();
      expect(value(await surface.history(t.as.member, t.dialogId, 2))).toEqual([
        { id: t.messageIds[1], body: 'two', senderId: t.owner.id },
        { id: t.messageIds[2], body: 'three', senderId: t.owner.id },
      ]);
    });
  });

  describe('sending', () => {
    test("an occupant sends: the message ends every occupant's history", async () => {
      const t = await seed();
      const sent = value(await surface.sendMessage(t.as.member, t.dialogId, 'hi 👋'));
      if (!('message' in sent)) throw new Error(`refused: ${sent.refused}`);
      expect(sent.message).toEqual({ id: expect.stringMatching(/^[0-9a-f]{24}$/), body: 'hi 👋', senderId: t.member.id });
      for (const who of [t.as.owner, t.as.member]) expect(value(await surface.history(who, t.dialogId, 1))).toEqual([sent.message]);
      // And by an API key acting for the owner.
      expect(value(await surface.sendMessage(t.as.onBehalfOf(t.owner.id), t.dialogId, 'from the key'))).toEqual({
        message: expect.objectContaining({ senderId: t.owner.id }),
      });
    });

    test.each([
      ['a user outside the dialog', (t: Tenant): Send => [t.as.outsider, t.dialogId, 'hi'], 'DIALOG_NOT_FOUND'],
      ['an unknown dialog', (t: Tenant): Send => [t.as.owner, UNKNOWN, 'hi'], 'DIALOG_NOT_FOUND'],
      ['a blank body', (t: Tenant): Send => [t.as.owner, t.dialogId, ' \n '], 'BODY_BLANK'],
      ['a body of 10,001 characters', (t: Tenant): Send => [t.as.owner, t.dialogId, 'x'.repeat(10_001)], 'BODY_TOO_LONG'],
    ] as const)('%s is refused and nothing is stored', async (_what, args, refused) => {
      const t = await seed();
      const [headers, dialogId, body] = args(t);
      expect(value(await surface.sendMessage(headers, dialogId, body))).toEqual({ refused });
      expect(await stored(t.dialogId)).toBe(3);
    });

    test('a body of 10,000 characters is taken', async () => {
      const t = await seed();
      expect(value(await surface.sendMessage(t.as.owner, t.dialogId, '😀'.repeat(10_000)))).toEqual({
        message: expect.objectContaining({ body: '😀'.repeat(10_000) }),
      });
    });
  });

  test("another application's dialog is invisible everywhere: lists, histories, sending (even through that application's user id)", async () => {
    const t = await seed();
    const other = await seed();
    expect(value(await surface.dialogs(t.as.owner)).dialogs.map((d) => d.id)).toEqual([t.dialogId]);
    const history = await surface.history(t.as.owner, other.dialogId);
    expect(history.ok ? 'answered' : history.failure.status).toBe(404);
    expect(value(await surface.sendMessage(t.as.owner, other.dialogId, 'hi'))).toEqual({ refused: 'DIALOG_NOT_FOUND' });
    expect(await stored(other.dialogId)).toBe(3);
  });

  describe('credentials', () => {
    const CHAT_REFUSALS = [
      ...REFUSED_CREDENTIALS,
      ['an API key without On-Behalf-Of (no user)', (t: Tenant) => t.as.apiKey, 'FORBIDDEN', MESSAGES.needUser],
    ] as const;
    test.each(CHAT_REFUSALS)('%s: refused on the list, the history and the send, nothing stored', async (_what, headers, code, message) => {
      const t = await seed();
      surface.expectFailure(await surface.dialogs(headers(t)), code, message);
      surface.expectFailure(await surface.history(headers(t), t.dialogId), code, message);
      const sent = await surface.sendMessage(headers(t), t.dialogId, 'hi');
      surface.expectFailure(sent, code, message);
      expect(await stored(t.dialogId)).toBe(3);
    });
  });
});
