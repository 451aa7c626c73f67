// What the database holds for a tenant's messages, for the delete-messages
// tests of both surfaces (REST and GraphQL).
import { historyIds, type Tenant } from './seed';
import type { TestService } from './service';
import { prismaOf } from '../../src/provisioning/client';

/** Well-formed (24 lower-case hex) but names no message. */
export const UNKNOWN = 'ffffffffffffffffffffffff';

/** Distinct well-formed ids that name no message (their leading "f"s are far in the future). */
export function unknownIds(count: number): string[] {
  return Array.from({ length: count }, (_, i) => `ffffffff${i.toString(16).padStart(16, '0')}`);
}

export const sorted = (ids: readonly string[]): string[] => [...ids].sort();

/** Ids of the messages `userId` sees in the dialog, sorted. */
export const history = (service: TestService, dialogId: string, userId: number): Promise<string[]> =>
  historyIds(service.app.services, dialogId, userId).then(sorted);

/** Ids among `ids` that are deleted for everyone (deletedAt set). */
export async function deletedForEveryone(service: TestService, ids: readonly string[]): Promise<string[]> {
  const rows = await prismaOf(service.db).message.findMany({
    where: { id: { in: [...ids] }, deletedAt: { not: null } },
    select: { id: true },
  });
  return sorted(rows.map((r) => r.id));
}

/** "messageId:userId" for every hide of `ids`. */
export async function hides(service: TestService, ids: readonly string[]): Promise<string[]> {
  const rows = await prismaOf(service.db).messageHide.findMany({ where: { messageId: { in: [...ids] } } });
  return rows.map((r) => `${r.messageId}:${r.userId}`).sort();
}

/** Nothing deleted and nothing hidden: every occupant still sees every message. */
export async function expectUntouched(service: TestService, t: Tenant, extraIds: readonly string[] = []): Promise<void> {
  expect(await history(service, t.dialogId, t.owner.id)).toEqual(sorted(t.messageIds));
  expect(await history(service, t.dialogId, t.member.id)).toEqual(sorted(t.messageIds));
  const all = [...t.messageIds, ...extraIds];
  expect(await deletedForEveryone(service, all)).toEqual([]);
  expect(await hides(service, all)).toEqual([]);
}

/** A second dialog of the tenant, owned by the member (the tenant's owner is an occupant), with one message. */
export async function memberDialog(service: TestService, t: Tenant): Promise<{ dialogId: string; messageId: string }> {
  const { provisioning } = service.app;
  const dialog = await provisioning.chat.createDialog({ applicationId: t.applicationId, ownerId: t.member.id, occupantIds: [t.owner.id] });
  const message = await provisioning.chat.createMessage({ dialogId: dialog.id, senderId: t.member.id, body: 'member owns this' });
  return { dialogId: dialog.id, messageId: message.id };
}
