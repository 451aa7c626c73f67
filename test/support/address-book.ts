// Stored address books, for the address-book tests of both surfaces (REST and GraphQL).
import type { Tenant } from './seed';
import type { TestService } from './service';

export interface Contact {
  name: string;
  phone: string;
}

/** The stored book of a user (global when udid is ""), ordered by phone. */
export async function bookOf(service: TestService, userId: number, udid = ''): Promise<Contact[]> {
  const rows = await service.db.prisma.contact.findMany({ where: { userId, udid }, orderBy: { phone: 'asc' } });
  return rows.map(({ name, phone }) => ({ name, phone }));
}

/** How many contacts the tenant's users have stored, in all their books. */
export const contactCount = (service: TestService, t: Tenant): Promise<number> =>
  service.db.prisma.contact.count({ where: { user: { applicationId: t.applicationId } } });

/** The seeded users' phones (see seed.ts): owner, member, outsider — the same in every tenant. */
export const OWNER_PHONE = '+10000000101';
export const MEMBER_PHONE = '+10000000102';
export const OUTSIDER_PHONE = '+10000000103';
/** A valid phone that no seeded user has. */
export const STRANGER_PHONE = '+19999999999';
