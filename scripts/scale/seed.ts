// The proofs' data, written straight to the primary before the load: one
// application, N users with a session each, a dialog per user with 200
// messages, and each user's partner (the next user), whose phone the load's
// uploads list and unlist.
import { randomBytes } from 'node:crypto';
import { openDatabase } from '../../src/db';
import { createProvisioning } from '../../src/provisioning';
import { createServices } from '../../src/services';

export interface VirtualUser {
  id: number;
  externalUserId: number;
  token: string;
  busy: boolean;
  /** Whether the partner's phone is in this user's book, as their last acknowledged upload left it. */
  partnerListed: boolean;
  partnerId: number;
  partnerPhone: string;
  /** Messages of theirs still to delete. */
  messageIds: string[];
}

export interface Seeded {
  applicationId: number;
  users: VirtualUser[];
  /** The key sealing auth secrets: every instance gets it. */
  secretsKey: Buffer;
}

const phoneOf = (i: number) => `+1200000${String(i).padStart(4, '0')}`;

/** Migrates the database at `url` and writes the data set. */
export async function seed(url: string, count: number): Promise<Seeded> {
  const secretsKey = randomBytes(32);
  const db = await openDatabase({ url, migrate: true, poolMax: 4 });
  const services = createServices(db, { auth: { cacheMs: 0 }, secretsKey });
  const provisioning = createProvisioning(db, { secretsKey, services });
  try {
    const { application } = await provisioning.applications.create('scale proof');
    const users: VirtualUser[] = [];
    for (let i = 0; i < count; i++) {
      const user = await provisioning.users.create({
        applicationId: application.id,
        login: `user${i}`,
        password: 'password123',
        fullName: `User ${i}`,
        phone: phoneOf(i),
        externalUserId: 10_000 + i,
      });
      const { token } = await provisioning.applications.createSession(application.id, user.id);
      users.push({ id: user.id, externalUserId: 10_000 + i, token, busy: false, partnerListed: false, partnerId: 0, partnerPhone: '', messageIds: [] });
    }
    for (const [i, user] of users.entries()) {
      const partner = users[(i + 1) % users.length]!;
      user.partnerId = partner.id;
      user.partnerPhone = phoneOf((i + 1) % users.length);
      const dialog = await provisioning.chat.createDialog({ applicationId: application.id, ownerId: user.id, occupantIds: [partner.id] });
      const bodies = Array.from({ length: 200 }, (_, k) => `m${k}`);
      user.messageIds = await services.chat.createMany({ dialogId: dialog.id, senderId: user.id, bodies });
    }
    return { applicationId: application.id, users, secretsKey };
  } finally {
    await services.close();
    await db.close();
  }
}
