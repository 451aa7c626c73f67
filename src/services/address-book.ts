// Address books: uploads, and the registered users they match.
//
// A user has one global book (udid "") and one per device udid. The matches
// between books and registered users are a table that database triggers keep
// up to date as contacts and users change (the migration …_address_book_matches;
// docs/decisions.md: Decisions), so reading them is one index range scan, and the upload
// is one statement in a transaction that first locks the book: a forced upload replaces a book atomically, so a concurrent
// read sees the old book or the new one, never a mix, and concurrent uploads
// to one book apply one after the other. The number of statements does not
// grow with the number of contacts (contacts travel as two array parameters).
import type { Pool } from 'pg';
import { callerKey, readQuery, type ReadReplicas } from '../scale/replicas';
import { query, run, send, transaction } from '../db/sql';
import { REGION } from '../db/statements/phones';
import {
  BOOK_LIMITS,
  BOOK_SIZE,
  CONTACTS,
  LOCK_BOOK,
  LOCK_DEVICE_BOOKS,
  NEW_PHONES,
  REGISTERED_USER_PHONES,
  REGISTERED_USERS,
  REGISTERED_USERS_PAGE,
  REGISTERED_USERS_PAGE_BACK,
  UPLOAD,
} from '../db/statements/address-book';
import type { UserRecord } from '../db/statements/users';
import { type AppError, RateLimitedError, badInput } from '../errors';
import type { SharedRedis } from '../scale/redis';
import { ADDRESS_BOOK_DEFAULTS } from './address-book-limits';
import { type CountBudget, LocalCountBudget, SharedCountBudget } from './discovery-budget';

export { ADDRESS_BOOK_DEFAULTS };
import { requireUser } from './auth';
import type { Caller } from './caller';
import { type PageArgs, type PageInfo, pageInfo, pageRequest } from './paging';
import { phoneKey } from './phones';
import * as validate from './validate';

/** A contact of an upload. Name and phone may be missing: such a contact is rejected, not the upload. */
export interface ContactInput {
  name?: string | null;
  phone?: string | null;
  /** Remove this phone from the book (QuickBlox's `destroy: 1`); the name is then not needed. */
  destroy?: boolean | null;
}

/** A contact of an upload that was not taken, by its index in the upload, with why. */
export interface RejectedContact {
  index: number;
  reasons: string[];
}

export interface UploadResult {
  created: number;
  updated: number;
  deleted: number;
  rejected: RejectedContact[];
}

type UploadCounts = Omit<UploadResult, 'rejected'>;

export interface StoredContact {
  name: string;
  phone: string;
}

/** A registered user in the compact form: id, and the phone that matched. */
export type UserPhone = Pick<UserRecord, 'id'> & { phone: string };

/** One page of registered users, and where the next one starts. */
export interface RegisteredUsersPage {
  users: UserRecord[];
  /** The cursor of each user of `users`, in order. */
  cursors: string[];
  pageInfo: PageInfo;
}

/**
 * Cursors are opaque to clients: "u:<user id>" in base64url. Keyset paging by
 * user id: a page is the book's matches after that id in the primary key's
 * order, so a page costs the same wherever it starts, and users added or
 * removed between pages neither repeat nor skip the others.
 */
export const encodeCursor = (userId: number): string => Buffer.from(`u:${userId}`).toString('base64url');

function decodeCursor(cursor: string, field: 'after' | 'before' = 'after'): number {
  // One longer than any cursor is not decoded at all.
  const match = cursor.length <= validate.LIMITS.cursorLength ? /^u:([1-9][0-9]{0,9})$/.exec(Buffer.from(cursor, 'base64url').toString('latin1')) : null;
  const id = match ? Number(match[1]) : NaN;
  // base64url decoding ignores stray characters: only the exact encoding is a cursor.
  if (!(id <= validate.INT32_MAX) || encodeCursor(id) !== cursor) {
    throw badInput(field, `${field} must be a cursor that registeredUsersConnection returned`);
  }
  return id;
}

export interface AddressBookOptions {
  /** Contacts one book may hold (ADDRESS_BOOK_MAX_CONTACTS). */
  maxContacts?: number;
  /** Device books (udids) one user may hold besides the global book (ADDRESS_BOOK_MAX_DEVICE_BOOKS). */
  maxDeviceBooks?: number;
  /** Phone numbers new to all of a user's books that their uploads may add in a day (CONTACT_DISCOVERY_PER_DAY). */
  discoveryPerDay?: number;
  /** Count the discovery budget in Redis, shared by every instance. */
  redis?: SharedRedis | undefined;
}

export class AddressBookService {
  private readonly maxContacts: number;
  private readonly maxDeviceBooks: number;
  private readonly discoveryPerDay: number;
  private readonly discovery: CountBudget;

  constructor(
    private readonly pool: Pool,
    /** Read replicas (DATABASE_READ_URL) for registered users; undefined: the primary. */
    private readonly reads?: ReadReplicas,
    options: AddressBookOptions = {},
  ) {
    this.maxContacts = options.maxContacts ?? ADDRESS_BOOK_DEFAULTS.maxContacts;
    this.maxDeviceBooks = options.maxDeviceBooks ?? ADDRESS_BOOK_DEFAULTS.maxDeviceBooks;
    this.discoveryPerDay = options.discoveryPerDay ?? ADDRESS_BOOK_DEFAULTS.discoveryPerDay;
    this.discovery = options.redis ? new SharedCountBudget(options.redis, this.discoveryPerDay) : new LocalCountBudget(this.discoveryPerDay);
  }

  /** Users of the caller's application whose phone is a contact's phone in the caller's book (as written, or the same number). */
  async registeredUsers(caller: Caller, udid: string | null | undefined): Promise<UserRecord[]> {
    const user = requireUser(caller);
    const context = validate.udidContext(udid);
    return readQuery(this.reads, this.pool, caller, REGISTERED_USERS, [user.applicationId, user.userId, context]);
  }

  /** The same users as `registeredUsers`, as their id and phone only (the compact form): the matches alone are read. */
  async registeredUserPhones(caller: Caller, udid: string | null | undefined): Promise<UserPhone[]> {
    const user = requireUser(caller);
    const context = validate.udidContext(udid);
    return readQuery(this.reads, this.pool, caller, REGISTERED_USER_PHONES, [user.userId, context]);
  }

  /**
   * The same users as `registeredUsers`, `first` at a time (1 to
   * LIMITS.registeredUsersPerPage), after the cursor `after` (none: from the start).
   */
  async registeredUsersPage(caller: Caller, udid: string | null | undefined, args: PageArgs): Promise<RegisteredUsersPage> {
    const user = requireUser(caller);
    const context = validate.udidContext(udid);
    const request = pageRequest(args, validate.LIMITS.registeredUsersPerPage, 100, decodeCursor);
    // One more than asked: whether there is a next page, without a count.
    const limit = request.count + 1;
    let users: UserRecord[];
    let more: boolean;
    if (request.direction === 'forward') {
      const rows = await query(this.pool, REGISTERED_USERS_PAGE, [user.applicationId, user.userId, context, request.from ?? 0, limit]);
      users = rows.slice(0, request.count);
      more = rows.length > request.count;
    } else {
      // Answered by id ascending: the extra row, when there is one, is the first.
      const rows = await query(this.pool, REGISTERED_USERS_PAGE_BACK, [user.applicationId, user.userId, context, request.from, limit]);
      more = rows.length > request.count;
      users = more ? rows.slice(1) : rows;
    }
    const cursors = users.map((u) => encodeCursor(u.id));
    return { users, cursors, pageInfo: pageInfo(request, more, cursors) };
  }

  /** How many users `registeredUsers` would list and how many contacts `addressBook` would, without reading them. */
  async bookSize(caller: Caller, udid: string | null | undefined): Promise<{ registeredUsers: number; contacts: number }> {
    const user = requireUser(caller);
    const [size] = await readQuery(this.reads, this.pool, caller, BOOK_SIZE, [user.userId, validate.udidContext(udid)]);
    return size ?? { registeredUsers: 0, contacts: 0 };
  }

  /** The contacts of the caller's book (global, or the device's), in upload order. */
  async contacts(caller: Caller, udid: string | null | undefined): Promise<StoredContact[]> {
    const user = requireUser(caller);
    return query(this.pool, CONTACTS, [user.userId, validate.udidContext(udid), this.maxContacts]);
  }

  /**
   * Adds contacts (matched by phone; a known phone with a new name is renamed),
   * removes those marked `destroy`, and with `force` replaces the book with
   * exactly the contacts kept. A phone listed twice counts once, as its last
   * entry says. Contacts that fail validation are reported in `rejected` (by
   * index) and the others are stored, as QuickBlox does; only an upload that
   * is wrong as a whole (its udid, its size) is refused.
   */
  async upload(caller: Caller, contacts: readonly ContactInput[], udid: string | null | undefined, force: boolean): Promise<UploadResult> {
    const user = requireUser(caller);
    const context = validate.udidContext(udid);
    if (contacts.length > validate.LIMITS.contactsPerUpload) {
      throw badInput('contacts', `at most ${validate.LIMITS.contactsPerUpload} contacts per upload`);
    }
    // phone → its name, or null to destroy it: the last entry for a phone wins.
    const byPhone = new Map<string, string | null>();
    const rejected: RejectedContact[] = [];
    contacts.forEach((contact, index) => {
      const reasons = contactProblems(contact);
      if (reasons.length > 0) rejected.push({ index, reasons });
      else byPhone.set(contact.phone!, contact.destroy ? null : contact.name!);
    });
    const phones: string[] = [];
    const names: string[] = [];
    const destroyed: string[] = [];
    for (const [phone, name] of byPhone) {
      if (name === null) destroyed.push(phone);
      else {
        phones.push(phone);
        names.push(name);
      }
    }
    // One writer per book at a time. The upload statement's snapshot is taken
    // when it starts, so it must start after the previous writer committed:
    // otherwise a forced upload would not delete the contacts a concurrent
    // one just inserted (the book would end as a mix of both lists), and two
    // uploads inserting the same phones in different orders could deadlock.
    // Readers take no lock.
    // Phone keys are computed here, at write time (never per read), in the
    // region read after the lock that keeps it from changing meanwhile.
    //
    // The bounds (issue 31) are checked inside the transaction, after the
    // upload: one that would pass them is rolled back, nothing stored.
    const device = context !== '';
    // A refusal is answered by the callback, not thrown through it: the
    // transaction layer wraps what it throws as a failed statement.
    const outcome = await transaction(this.pool, UPLOAD.name, async (client): Promise<{ counts: UploadCounts } | { refused: AppError }> => {
      await run(client, LOCK_BOOK, [user.userId, context, user.applicationId]);
      if (device) await run(client, LOCK_DEVICE_BOOKS, [user.userId]);
      const region = (await run(client, REGION, [user.applicationId]))[0]?.phoneRegion ?? null;
      const keys = phones.map((phone) => phoneKey(phone, region));
      const [added] = keys.length === 0 ? [{ phones: 0 }] : await run(client, NEW_PHONES, [user.userId, keys]);
      // What a refusal below rolls back to (the locks stay: they are the transaction's).
      await send(client, 'SAVEPOINT upload');
      const result = await run(client, UPLOAD, [user.userId, context, phones, names, force, destroyed, keys]);
      const [limits] = await run(client, BOOK_LIMITS, [user.userId, context, device]);
      const { created, deleted } = result[0]!;
      // A book over the cap from before it existed may still shrink.
      let refused: AppError | undefined;
      if (limits!.contacts > this.maxContacts && created > deleted) {
        refused = badInput('contacts', `an address book holds at most ${this.maxContacts} contacts: this upload would make it ${limits!.contacts}`);
      } else if (limits!.deviceBooks > this.maxDeviceBooks) {
        refused = badInput('udid', `at most ${this.maxDeviceBooks} device address books (udids) per user besides the global one`);
      } else {
        // Last: a refused upload spends nothing.
        const wait = await this.discovery.take(`${user.userId}`, added!.phones);
        if (wait > 0) {
          refused = new RateLimitedError(
            wait,
            `at most ${this.discoveryPerDay} phone numbers new to your address books a day (this upload adds ${added!.phones})`,
          );
        }
      }
      if (refused === undefined) return { counts: result[0]! };
      await send(client, 'ROLLBACK TO SAVEPOINT upload');
      return { refused };
    });
    if ('refused' in outcome) throw outcome.refused;
    const counts = outcome.counts;
    // The caller's next reads, on whatever instance, wait for a replica to have this.
    await this.reads?.wrote(callerKey(caller));
    return { ...counts, rejected };
  }
}

/** Why a contact of an upload cannot be taken (none: it can). */
function contactProblems(contact: ContactInput): string[] {
  const reasons: string[] = [];
  if (typeof contact.phone !== 'string' || !validate.PHONE_PATTERN.test(contact.phone)) reasons.push(validate.PHONE_RULE);
  if (!contact.destroy) {
    const { name } = contact;
    if (typeof name !== 'string' || name.length === 0 || !validate.atMostCharacters(name, validate.LIMITS.contactNameLength)) {
      reasons.push(`name must be 1 to ${validate.LIMITS.contactNameLength} characters`);
    } else if (name.includes('\u0000')) {
      reasons.push('name must not contain NUL characters');
    }
  }
  return reasons;
}
