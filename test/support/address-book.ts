// Stored address books, for the address-book tests of both surfaces (REST and GraphQL).
import type { Tenant } from './seed';
import type { TestService } from './service';
import { prismaOf } from '../../src/provisioning/client';

export interface Contact {
  name: string;
  phone: string;
}

/** The stored book of a user (global when udid is ""), ordered by phone. */
export async function bookOf(service: TestService, userId: number, udid = ''): Promise<Contact[]> {
  const rows = await prismaOf(service.db).contact.findMany({ where: { userId, udid }, orderBy: { phone: 'asc' } });
  return rows.map(({ name, phone }) => ({ name, phone }));
}

/** How many contacts the tenant's users have stored, in all their books. */
export const contactCount = (service: TestService, t: Tenant): Promise<number> =>
  prismaOf(service.db).contact.count({ where: { user: { applicationId: t.applicationId } } });

/** The seeded users' phones (see seed.ts): owner, member, outsider — the same in every tenant. */
export const OWNER_PHONE = '+10000000101';
export const MEMBER_PHONE = '+10000000102';
export const OUTSIDER_PHONE = '+10000000103';
/** A valid phone that no seeded user has. */
export const STRANGER_PHONE = '+19999999999';

/** Why a contact is rejected (docs/decisions.md: Uploads). */
export const PHONE_RULE = 'phone must be 10 to 15 digits, optionally with a leading "+" and spaces, dashes, dots or parentheses (at most 32 characters)';
export const NAME_RULE = 'name must be 1 to 255 characters';

/** `count` valid contacts with distinct phones that no seeded user has. */
export const manyContacts = (count: number): Contact[] =>
  Array.from({ length: count }, (_, i) => ({ name: `c${i}`, phone: `+1555${String(i).padStart(7, '0')}` }));

/** The contacts ordered by phone, as `bookOf` lists a book. */
export const byPhone = (contacts: readonly Contact[]): Contact[] => [...contacts].sort((a, b) => a.phone.localeCompare(b.phone));
