// Applications and sessions: what the admin CLI and the demo seed create.
import type { PrismaClient } from '../db';
import { badInput } from '../errors';
import { SESSION_TTL_SECONDS } from './auth';
import { hashSecret, newSecret } from './secrets';

export class ApplicationsService {
  constructor(private readonly prisma: PrismaClient) {}

  /** Creates an application; its API key is returned here and never again. */
  async create(name: string): Promise<{ application: { id: number; name: string }; apiKey: string }> {
    if (name.trim() === '' || name.length > 255) throw badInput('name', 'name must be 1 to 255 characters');
    const apiKey = newSecret();
    const application = await this.prisma.application.create({
      data: { name, apiKeyHash: hashSecret(apiKey) },
      select: { id: true, name: true },
    });
    return { application, apiKey };
  }

  /** A user session when userId is given, else an application session. */
  async createSession(applicationId: number, userId?: number): Promise<{ token: string; expiresAt: Date }> {
    if (userId !== undefined) {
      const user = await this.prisma.user.findFirst({ where: { id: userId, applicationId }, select: { id: true } });
      if (!user) throw badInput('userId', `user ${userId} is not a user of application ${applicationId}`);
    } else {
      const app = await this.prisma.application.findUnique({ where: { id: applicationId }, select: { id: true } });
      if (!app) throw badInput('applicationId', `application ${applicationId} does not exist`);
    }
    const token = newSecret();
    const expiresAt = new Date(Date.now() + SESSION_TTL_SECONDS * 1000);
    await this.prisma.session.create({
      data: { tokenHash: hashSecret(token), applicationId, userId: userId ?? null, expiresAt },
    });
    return { token, expiresAt };
  }
}
