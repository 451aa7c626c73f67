// Dialogs and single messages: what the admin CLI, the demo seed and the tests
// create (bulk imports are one statement of the service's: ChatService.createMany).
import type { Database } from '../db';
import { badInput } from '../errors';
import type { ChatService } from '../services/chat';
import { newObjectId } from '../services/object-id';
import { type PrismaClient, prismaOf } from './client';

export const DIALOG_TYPES = [1, 2, 3] as const;

export class ChatProvisioning {
  constructor(
    /** Prisma's client is made on the first use (client.ts). */
    private readonly database: Database,
    /** The rule a sender must meet, as bulk imports meet it. */
    private readonly messages: ChatService,
  ) {}

  private get prisma(): PrismaClient {
    return prismaOf(this.database);
  }

  /** Creates a dialog; the owner is always one of its occupants. */
  async createDialog(input: { applicationId: number; ownerId: number; occupantIds: number[]; type?: number; name?: string }) {
    const type = input.type ?? 2;
    if (!DIALOG_TYPES.includes(type as 1 | 2 | 3)) throw badInput('type', 'type must be 1, 2 or 3');
    const occupantIds = [...new Set([input.ownerId, ...input.occupantIds])];
    const members = await this.prisma.user.count({
      where: { applicationId: input.applicationId, id: { in: occupantIds } },
    });
    if (members !== occupantIds.length) {
      throw badInput('occupantIds', 'owner and occupants must be users of the application');
    }
    const dialog = await this.prisma.dialog.create({
      data: {
        id: newObjectId(),
        applicationId: input.applicationId,
        ownerId: input.ownerId,
        type,
        name: input.name ?? null,
        occupants: { create: occupantIds.map((userId) => ({ userId })) },
      },
    });
    return { id: dialog.id, ownerId: dialog.ownerId, occupantIds, type: dialog.type };
  }

  /** Creates a message from an occupant of the dialog. */
  async createMessage(input: { dialogId: string; senderId: number; body: string }) {
    await this.messages.assertOccupant(input.dialogId, input.senderId);
    return this.prisma.message.create({
      data: { id: newObjectId(), dialogId: input.dialogId, senderId: input.senderId, body: input.body },
      select: { id: true, senderId: true, body: true },
    });
  }

  /** The first dialog `ownerId` owns in the application (the demo's), or null. */
  async dialogOwnedBy(applicationId: number, ownerId: number): Promise<string | null> {
    return (await this.prisma.dialog.findFirst({ where: { applicationId, ownerId }, select: { id: true } }))?.id ?? null;
  }
}
