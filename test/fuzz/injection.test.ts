// Classic SQL injection strings in every input of every operation, on both
// surfaces: path ids, external ids, udid, compact/force flags, contact names
// and phones, credential headers, GraphQL variables, inline string literals
// and operation names; the session requests' login, email, password, nonce,
// auth key and signature, login's login, and the udid of an address-book read
// (as a query string and in the JSON-object form QuickBlox's SDK sends). For
// each request: a documented status and shape, the
// correct result where the input is valid data (the string is stored and
// read back as itself), no user or message of the other application, no
// change to the database when the request fails (and only the expected table
// when it succeeds), no table lost and no count changed but by the contacts
// and sessions the requests made, and no request that takes long (a pg_sleep
// that ran would show). A login with a string is answered as the user whose
// login is that string, a user made for it: data, matched exactly.
import { changedTables, type Digest, digest } from '../support/digest';
import { LONG, recordFigures } from '../support/figures';
import {
  check,
  checkGraphQLErrors,
  checkListError,
  checkObjectError,
  DigestTracker,
  disposableSessions,
  type DisposableSessions,
  excerpt,
  expectHealthy,
  GRAPHQL_STATUSES,
  latin1Header,
  type RawRequest,
  type RawResponse,
  REST_STATUSES,
  sdkCanSend,
  sdkQuery,
  send,
  SESSION_STATUSES,
  sessionAnswer,
  stackTraceIn,
  tokenHash,
  SERVICE_START_TIMEOUT_MS,
} from '../support/fuzz';
import { seedTenant, type Tenant } from '../support/seed';
import { useService } from '../support/service';
import { restForm, type SignedRequest, signedSessionRequest } from '../support/sessions';
import { PHONE_PATTERN, phoneKey } from '../../src/services/phones';
import { hashPassword } from '../../src/services/secrets';
import { LIMITS } from '../../src/services/validate';

/** Classic injection strings, and characters that mean something to SQL, LIKE, JSON, GraphQL or a shell. */
const INJECTIONS: readonly string[] = [
  "' OR 1=1 --",
  "' OR '1'='1",
  "1' OR '1'='1' --",
  "' OR 1=1#",
  "'; DROP TABLE users; --",
  '"; DROP TABLE users; --',
  '1; DROP TABLE messages',
  "'; DELETE FROM contacts; --",
  "'; UPDATE users SET login = 'pwned'; --",
  "'; TRUNCATE sessions CASCADE; --",
  "' UNION SELECT token_hash FROM sessions --",
  '1 UNION SELECT id, phone FROM users',
  "admin'--",
  '101 OR 1=1',
  '101;',
  '101--',
  '101/**/OR/**/1=1',
  '1; SELECT pg_sleep(5)',
  "'; SELECT pg_sleep(5); --",
  "1' AND pg_sleep(5) IS NULL --",
  '(SELECT pg_sleep(5))',
  "'||pg_sleep(5)||'",
  '$$; SELECT pg_sleep(5); $$',
  "$tag$'$tag$",
  "E'\\x27'",
  "U&'\\0027'",
  '\\',
  "\\'",
  "''",
  "'",
  '"',
  '`',
  ';',
  '--',
  '/*',
  '$1',
  '$1::text',
  '%',
  '_',
  '%_%',
  '*',
  '\u0000',
  'a\u0000b',
  '\u2019 OR 1=1 --',
  '\u02bc OR \u02bc1\u02bc=\u02bc1',
  '\uff07 OR 1=1 --',
  '\u00e9\u00e8\u00ea',
  '\u{1F4A9}',
  '{"$gt": ""}',
  '[]',
  '{}',
  'null',
  'NaN',
  '../../etc/passwd',
  '<script>alert(1)</script>',
  '${7*7}',
  '{{7*7}}',
  '\r\nX-Injected: 1',
  '\n',
  '%00',
  '%27',
  '\\u0027',
  "+10000000102' OR '1'='1",
  '+10000000102--',
  'x'.repeat(300),
];

let port: number;
/** The caller's application, and another one whose data must never show. */
let caller: Tenant;
let other: Tenant;
let tracker: DigestTracker;
let initial: Digest;
let useDisposableSessions: DisposableSessions;
/** Users of the caller's application whose login is an injection string (every one a login can be), by that string. */
const loginUsers = new Map<string, number>();
const LOGIN_PASSWORD = 'injection-password';

// Declared before useService: Jest runs a block's afterAll hooks in the order
// they were declared, and the end state is read from the service's database.
afterAll(checkEndState);
// Failed-password budgets out of the way: the strings are tried as logins many
// times, from one address; and the device-book cap (5 a user): every string is
// tried as a udid, each a book of its own.
const service = useService(
  { sessions: { loginAttempts: { perLogin: 1e9, perAddress: 1e9 } }, addressBooks: { maxDeviceBooks: 1e6 }, database: 'isolated' },
  { timeoutMs: SERVICE_START_TIMEOUT_MS },
);
beforeAll(async () => {
  port = Number(new URL(service.baseUrl).port);
  caller = await seedTenant(service.app.provisioning);
  other = await seedTenant(service.app.provisioning);
  useDisposableSessions = disposableSessions(service, [caller, other]);
  // One import, one password hash for all (hashing is deliberately slow); NUL and over 255 characters are no logins.
  const logins = INJECTIONS.filter((s) => !s.includes('\u0000') && [...s].length <= 255);
  const passwordHash = hashPassword(LOGIN_PASSWORD);
  await service.app.services.users.createMany(
    caller.applicationId,
    logins.map((login) => ({ login, passwordHash })),
  );
  const { rows } = await service.db.pool.query<{ id: number; login: string }>('SELECT id, login FROM users WHERE application_id = $1 AND login = ANY($2)', [
    caller.applicationId,
    logins,
  ]);
  for (const { id, login } of rows) loginUsers.set(login, id);
  expect(loginUsers.size).toBe(logins.length);
  // Both applications have users with the same phones (seed.ts), and both
  // books list them: a match across applications would show at once.
  for (const t of [caller, other]) {
    const res = await service.call('POST', '/address_book.json', {
      headers: t.as.owner,
      body: {
        contacts: [
          { name: 'Member', phone: '+10000000102' },
          { name: 'Outsider', phone: '+10000000103' },
        ],
      },
    });
    expect(res.status).toBe(200);
  }
  tracker = new DigestTracker(service.db.pool);
  initial = await tracker.baseline();
}, SERVICE_START_TIMEOUT_MS);

// ---------------------------------------------------------------------------
// One request, every check.

/** Generous, and well under the 5 s a pg_sleep(5) would take. */
const MAX_MS = 4_000;

const byStatus: Record<string, number> = {};
let requests = 0;
let contactsCreated = 0;
/** Sessions the requests created, and those made to be ended or changed (disposable): the sessions table's growth. */
let sessionsCreated = 0;
let disposablesMade = 0;
const slowest = { ms: 0, input: '' };

type Family = 'list' | 'object' | 'session' | 'graphql';

interface Expectation {
  /** Tables a successful request may write. */
  writes?: readonly string[];
  /** The exact outcome where the input is valid data. */
  then?: (res: RawResponse, change: { before: Digest; after: Digest }) => void;
}

const enc = (s: string): string => encodeURIComponent(s).replace(/[!'()*]/g, (c) => `%${c.charCodeAt(0).toString(16).toUpperCase()}`);

/** Header values node:http cannot send (CR, LF, NUL) are not inputs a client can make. */
// eslint-disable-next-line no-control-regex -- NUL is what it looks for
const sendableHeader = (s: string): boolean => !/[\r\n\u0000]/.test(s);

const callerUserIds = () => new Set([caller.owner.id, caller.member.id, caller.outsider.id, ...loginUsers.values()]);

/**
 * Every numeric `id` anywhere in the body is a user of the caller's
 * application (user records are the only objects with one, besides sessions,
 * which have a token), and no message of the other application is reported
 * as deleted.
 */
function checkNoOtherTenant(body: unknown, where: string): void {
  const own = callerUserIds();
  const walk = (value: unknown): void => {
    if (Array.isArray(value)) value.forEach(walk);
    else if (value && typeof value === 'object') {
      const record = value as Record<string, unknown>;
      if (typeof record.id === 'number' && !('token' in record)) check(own.has(record.id), `user ${record.id} of another application in the answer: ${where}`);
      Object.values(record).forEach(walk);
    }
  };
  walk(body);
  const b = body as { SuccessfullyDeleted?: { ids?: unknown }; data?: { deleteMessages?: { successfullyDeleted?: unknown } } };
  const deleted = [b?.SuccessfullyDeleted?.ids, b?.data?.deleteMessages?.successfullyDeleted].flatMap((ids) => (Array.isArray(ids) ? ids : []));
  for (const id of deleted) check(!other.messageIds.includes(id as string), `another application's message ${id} was deleted: ${where}`);
}

async function exercise(input: string, s: string, req: RawRequest, family: Family, expectation: Expectation = {}): Promise<RawResponse> {
  const res = await send(port, req);
  const { diff, before, after } = await tracker.advance();
  requests++;
  byStatus[res.status] = (byStatus[res.status] ?? 0) + 1;
  if (res.ms > slowest.ms) Object.assign(slowest, { ms: Math.round(res.ms), input: `${input}: ${JSON.stringify(s)}` });
  const where = `${input} with ${JSON.stringify(s)}: ${req.method} ${excerpt(req.path, 120)} → ${res.status} ${excerpt(res.text, 300)}`;

  const statuses: readonly number[] = family === 'graphql' ? GRAPHQL_STATUSES : family === 'session' ? [...REST_STATUSES, ...SESSION_STATUSES] : REST_STATUSES;
  check(statuses.includes(res.status), `undocumented status: ${where}`);
  check(res.ms < MAX_MS, `took ${Math.round(res.ms)} ms: ${where}`);
  check(stackTraceIn(res.text) === undefined, `stack trace text in: ${where}`);
  check(res.json !== undefined, `not JSON: ${where}`);
  const body = res.json as Record<string, unknown>;
  try {
    if (family === 'graphql') {
      if (res.status !== 200 || 'errors' in body) checkGraphQLErrors(body, res.status === 200);
    } else if (res.status >= 400) {
      if (family === 'list') checkListError(res.status, body);
      else checkObjectError(res.status, body, family === 'session' ? 'session' : 'lookup');
    }
  } catch (error) {
    throw new Error(`${(error as Error).message}\n  in: ${where}`, { cause: error });
  }
  checkNoOtherTenant(body, where);

  const data = family === 'graphql' && body.data && typeof body.data === 'object' ? (body.data as Record<string, unknown>) : undefined;
  const failed = res.status >= 400 || (family === 'graphql' && (!data || Object.values(data).every((v) => v === null)));
  if (failed) {
    check(diff === '', `a failed request changed the database (${diff}): ${where}`);
  } else {
    const changed = changedTables(before, after);
    check(
      changed.every((t) => (expectation.writes ?? []).includes(t)),
      `wrote ${changed.join(', ')} (${diff}): ${where}`,
    );
  }
  try {
    expectation.then?.(res, { before, after });
  } catch (error) {
    throw new Error(`${(error as Error).message}\n  in: ${where}`, { cause: error });
  }
  return res;
}

// ---------------------------------------------------------------------------
// What a correct answer is, where the input is data.

/** The ids a delete names, as the service splits them. */
const pieces = (s: string) => s.split(',');

function expectDeleteResult(res: RawResponse, named: string[]): void {
  if (named.some((id) => id === '')) {
    expect(res.status).toBe(422);
    return;
  }
  expect(res.status).toBe(200);
  const body = res.json as { SuccessfullyDeleted: { ids: string[] }; NotFound: { ids: string[] } };
  // None of these strings is a message of the caller's: every one is not found, each once.
  expect(body.SuccessfullyDeleted.ids).toEqual([]);
  expect([...body.NotFound.ids].sort()).toEqual([...new Set(named)].sort());
}

/** udid: up to 64 characters (code points, as PostgreSQL counts them), no NUL; the empty string is the global book. */
const validUdid = (s: string) => [...s].length <= 64 && !s.includes('\u0000');
/** Text an input takes: no NUL, at most `max` characters (code points: docs/operation.md, Limits). */
const validText = (s: string, max: number) => !s.includes('\u0000') && [...s].length <= max;
/** Characters are code points (docs/operation.md, Limits). */
const validName = (s: string) => s.length >= 1 && [...s].length <= 255 && !s.includes('\u0000');
/** A phone as the rule takes it (docs/decisions.md: Decisions, "Phones"): some payloads are ("+10000000102--"), and are stored as given. */
const validPhone = (s: string) => PHONE_PATTERN.test(s);
const NAME_RULE = 'name must be 1 to 255 characters';
/** Why a contact with this name is not taken (an upload stores the others and reports these). */
const nameRejection = (s: string) => (s.length >= 1 && [...s].length <= 255 ? 'name must not contain NUL characters' : NAME_RULE);
const PHONE_RULE = 'phone must be 10 to 15 digits, optionally with a leading "+" and spaces, dashes, dots or parentheses (at most 32 characters)';

/** Path external ids: an integer 1…2147483647; the seed gives the caller 101, 102 and 103. */
function expectLookup(res: RawResponse, s: string): void {
  const n = /^-?[0-9]{1,10}$/.test(s) ? Number(s) : NaN;
  if (!(n >= 1 && n <= 2_147_483_647)) {
    expect(res.status).toBe(422);
    expect(res.json).toEqual({ errors: { external_user_id: ['must be an integer between 1 and 2147483647'] } });
  } else if ([101, 102, 103].includes(n)) {
    expect(res.status).toBe(200);
  } else {
    expect(res.json).toEqual({ code: 'NOT_FOUND', message: 'User not found' });
  }
}

// ---------------------------------------------------------------------------
// The inputs.

interface Input {
  name: string;
  run(s: string, i: number): Promise<unknown>;
}

const rest = (method: string, path: string, headers: Record<string, string>, body?: unknown, form = false): RawRequest => ({
  method,
  path,
  headers: { ...headers, ...(body === undefined ? {} : { 'Content-Type': form ? 'application/x-www-form-urlencoded' : 'application/json' }) },
  ...(body === undefined ? {} : { body: form ? new URLSearchParams(body as Record<string, string>).toString() : JSON.stringify(body) }),
});

const gql = (query: string, variables?: Record<string, unknown>, headers: Record<string, string> = caller.as.owner, operationName?: string): RawRequest => ({
  method: 'POST',
  path: '/graphql',
  headers: { ...headers, 'Content-Type': 'application/json' },
  body: JSON.stringify({ query, ...(variables ? { variables } : {}), ...(operationName === undefined ? {} : { operationName }) }),
});

/** A GraphQL string literal: JSON's escapes are GraphQL's. */
const lit = (s: string) => JSON.stringify(s);

const gqlData = (res: RawResponse) => (res.json as { data?: Record<string, any> }).data;

/**
 * The caller owner's books as the uploads left them (udid → phone → name):
 * what a read must answer. beforeAll put member and outsider in the global book.
 */
const books = new Map<string, Map<string, string>>([
  [
    '',
    new Map([
      ['+10000000102', 'Member'],
      ['+10000000103', 'Outsider'],
    ]),
  ],
]);

function uploaded(udid: string | null | undefined, contacts: { name: string; phone: string }[], force: boolean): void {
  const key = udid ?? '';
  const book = force ? new Map<string, string>() : (books.get(key) ?? new Map<string, string>());
  for (const c of contacts) book.set(c.phone, c.name);
  books.set(key, book);
}

/** The caller's users whose phone is in the book of `udid`, by id. */
function matches(udid: string): { id: number; phone: string }[] {
  const phones = books.get(udid) ?? new Map();
  // The same phone, or the same number (the tenants have no region: keys read without one).
  const keys = new Set([...phones.keys()].map((p: string) => phoneKey(p, null)));
  return [caller.owner, caller.member, caller.outsider]
    .filter((u) => phones.has(u.phone!) || keys.has(phoneKey(u.phone!, null)))
    .sort((a, b) => a.id - b.id)
    .map((u) => ({ id: u.id, phone: u.phone! }));
}

/** The users of the caller's book of device `udid`, compact, by REST. */
async function bookMatches(udid: string): Promise<unknown> {
  const res = await send(port, rest('GET', `/address_book/registered_users.json?compact=1&udid=${enc(udid)}`, caller.as.owner));
  expect(res.status).toBe(200);
  return res.json;
}

const compactItems = (udid: string) => ({ items: matches(udid).map((user) => ({ user })) });

/** The caller owner's book of `udid` as the uploads left it, as GET /address_book.json answers it. */
const bookOf = (udid: string) => [...(books.get(udid) ?? new Map<string, string>())].map(([phone, name]) => ({ name, phone }));

/** README: 1 to 64 printable ASCII characters. */
const validNonce = (s: string) => /^[\x21-\x7e]{1,64}$/.test(s);

/**
 * A signed session request's timestamp, distinct per input string and surface
 * (one nonce, used on both). Counted back from one instant fixed when the suite
 * starts: counted from each request's own clock, the REST request of input i
 * and the GraphQL one a second later landed on the same timestamp (a replay).
 */
const SIGNED_FROM = Math.floor(Date.now() / 1000);
const timestampFor = (i: number, surface: 0 | 1) => SIGNED_FROM - 2 * i - surface;

const createSession = (input: SignedRequest) =>
  gql('mutation ($i: SessionRequestInput!) { createSession(input: $i) { token userId nonce } }', { i: input }, {});

/** createSession's answer: 'created', or the error's code. */
const created = (res: RawResponse) =>
  gqlData(res)?.createSession ? 'created' : (res.json as { errors?: { extensions: { code: string } }[] }).errors?.[0]?.extensions.code;

/** The nonce stored with the session of this token: the string itself (not executed, not altered). */
async function expectStoredNonce(token: string, s: string): Promise<void> {
  sessionsCreated++;
  const { rows } = await service.db.pool.query('SELECT nonce FROM sessions WHERE token_hash = $1', [tokenHash(token)]);
  expect(rows).toEqual([{ nonce: s }]);
}

const INPUTS: Input[] = [
  // -- REST: DELETE /chat/Message/{ids}.json ---------------------------------
  {
    name: 'REST delete: an id',
    run: (s) =>
      exercise('REST delete id', s, rest('DELETE', `/chat/Message/${enc(s)}.json`, caller.as.owner), 'list', {
        then: (res) => expectDeleteResult(res, pieces(s)),
      }),
  },
  {
    name: "REST delete: an id next to the other application's message, with force",
    run: (s) =>
      exercise('REST delete id + foreign id', s, rest('DELETE', `/chat/Message/${enc(s)},${other.messageIds[0]}.json`, caller.as.owner, { force: 1 }), 'list', {
        // Another application's message is not the caller's to see: with force=1 it is not found, like the injected string (a 403 would tell that it exists).
        then: (res) => (pieces(s).some((p) => p === '') ? expect(res.status).toBe(422) : expectDeleteResult(res, [...pieces(s), other.messageIds[0]!])),
      }),
  },
  {
    name: 'REST delete: an id by API key (deletes for everyone within its application)',
    run: (s) =>
      exercise('REST delete id by API key', s, rest('DELETE', `/chat/Message/${enc(s)}.json`, caller.as.apiKey), 'list', {
        then: (res) => expectDeleteResult(res, pieces(s)),
      }),
  },
  {
    name: 'REST delete: force in the query string',
    run: (s) =>
      exercise('REST delete ?force', s, rest('DELETE', `/chat/Message/${other.messageIds[0]}.json?force=${enc(s)}`, caller.as.owner), 'list', {
        then: (res) => expect(res.status).toBe(422),
      }),
  },
  {
    name: 'REST delete: force in a JSON body',
    run: (s) =>
      exercise('REST delete body force', s, rest('DELETE', `/chat/Message/${other.messageIds[0]}.json`, caller.as.owner, { force: s }), 'list', {
        then: (res) => expect(res.status).toBe(422),
      }),
  },
  {
    name: 'REST delete: force in a form body',
    run: (s) =>
      exercise('REST delete form force', s, rest('DELETE', `/chat/Message/${other.messageIds[0]}.json`, caller.as.owner, { force: s }, true), 'list', {
        then: (res) => expect(res.status).toBe(422),
      }),
  },
  // -- REST: GET /address_book/registered_users.json -------------------------
  {
    name: 'REST registered users: udid',
    run: (s) =>
      exercise('REST registered ?udid', s, rest('GET', `/address_book/registered_users.json?udid=${enc(s)}`, caller.as.owner), 'list', {
        // The book of that device (as the uploads left it), or the documented 422.
        then: (res) =>
          validUdid(s)
            ? expect(res.json).toEqual({ items: matches(s).map(({ id }) => ({ user: expect.objectContaining({ id }) })) })
            : expect(res.status).toBe(422),
      }),
  },
  {
    name: 'REST registered users: compact and force',
    run: async (s) => {
      await exercise('REST registered ?compact', s, rest('GET', `/address_book/registered_users.json?compact=${enc(s)}`, caller.as.owner), 'list', {
        then: (res) => expect(res.status).toBe(422),
      });
      await exercise('REST registered ?force', s, rest('GET', `/address_book/registered_users.json?force=${enc(s)}`, caller.as.owner), 'list', {
        then: (res) => expect(res.status).toBe(422),
      });
    },
  },
  {
    name: 'REST registered users: a query key',
    run: (s) =>
      exercise('REST registered ?<key>', s, rest('GET', `/address_book/registered_users.json?${enc(s)}=1&compact=1`, caller.as.owner), 'list', {
        // An unknown key is ignored: the caller's global book.
        then: (res) => (['udid', 'compact', 'force'].includes(s) ? undefined : expect(res.json).toEqual(compactItems(''))),
      }),
  },
  // -- REST: POST /address_book.json ------------------------------------------
  {
    name: 'REST upload: a contact name, read back',
    run: async (s, i) => {
      const udid = `rest-name-${i}`;
      await exercise(
        'REST upload name',
        s,
        rest('POST', '/address_book.json', caller.as.owner, { contacts: [{ name: s, phone: '+10000000102' }], udid }),
        'list',
        {
          writes: ['contacts', 'address_book_matches'],
          then: (res, { before, after }) => {
            if (!validName(s)) {
              // Not taken, reported by index; nothing stored.
              expect(res.json).toEqual({ created: 0, updated: 0, deleted: 0, rejected: { '0': [nameRejection(s)] } });
              return expect(after.contacts!.rows).toBe(before.contacts!.rows);
            }
            expect(res.json).toEqual({ created: 1, updated: 0, deleted: 0 });
            expect(after.contacts!.rows - before.contacts!.rows).toBe(1);
            contactsCreated++;
            uploaded(udid, [{ name: s, phone: '+10000000102' }], false);
          },
        },
      );
      if (validName(s)) {
        expect(await bookMatches(udid)).toEqual(compactItems(udid));
        const [row] = (await service.db.pool.query('SELECT name FROM contacts WHERE user_id = $1 AND udid = $2', [caller.owner.id, udid])).rows;
        // Stored as itself: not executed, not altered, not escaped twice.
        expect(row?.name).toBe(s);
      }
    },
  },
  {
    name: 'REST upload: a contact phone',
    run: (s, i) =>
      exercise(
        'REST upload phone',
        s,
        rest('POST', '/address_book.json', caller.as.owner, { contacts: [{ name: 'x', phone: s }], udid: `rest-phone-${i}` }),
        'list',
        {
          ...(validPhone(s) ? { writes: ['contacts', 'address_book_matches'] } : {}),
          then: (res, { before, after }) => {
            expect(res.status).toBe(200);
            if (validPhone(s)) {
              expect(res.json).toEqual({ created: 1, updated: 0, deleted: 0 });
              expect(after.contacts!.rows).toBe(before.contacts!.rows + 1);
              contactsCreated++;
              uploaded(`rest-phone-${i}`, [{ name: 'x', phone: s }], false);
              return;
            }
            expect(res.json).toEqual({ created: 0, updated: 0, deleted: 0, rejected: { '0': [PHONE_RULE] } });
            expect(after.contacts!.rows).toBe(before.contacts!.rows);
          },
        },
      ),
  },
  {
    name: 'REST upload: udid, read back',
    run: async (s) => {
      // force=1 replaces that device's book, so a string already used (e.g. by the name input) changes nothing twice.
      await exercise(
        'REST upload udid',
        s,
        rest('POST', '/address_book.json', caller.as.owner, { contacts: [{ name: 'o', phone: '+10000000103' }], udid: s, force: 1 }),
        'list',
        {
          writes: ['contacts', 'address_book_matches'],
          then: (res, { before, after }) => {
            if (!validUdid(s)) return expect(res.status).toBe(422);
            expect(res.status).toBe(200);
            const created = (res.json as { created: number }).created;
            expect(after.contacts!.rows - before.contacts!.rows).toBe(created - (res.json as { deleted: number }).deleted);
            contactsCreated += created;
            uploaded(s, [{ name: 'o', phone: '+10000000103' }], true);
          },
        },
      );
      if (validUdid(s)) expect(await bookMatches(s)).toEqual(compactItems(s));
    },
  },
  {
    name: 'REST upload: force and contacts of the wrong type',
    run: async (s) => {
      await exercise('REST upload force', s, rest('POST', '/address_book.json', caller.as.owner, { contacts: [], force: s }), 'list', {
        then: (res) => expect(res.status).toBe(422),
      });
      await exercise('REST upload contacts', s, rest('POST', '/address_book.json', caller.as.owner, { contacts: s }), 'list', {
        then: (res) => expect(res.status).toBe(422),
      });
    },
  },
  // -- REST: GET /users/external/{id}.json -------------------------------------
  {
    name: 'REST lookup: external id',
    run: async (s) => {
      await exercise('REST lookup', s, rest('GET', `/users/external/${enc(s)}.json`, caller.as.owner), 'object', { then: (res) => expectLookup(res, s) });
      await exercise('REST lookup by API key', s, rest('GET', `/users/external/${enc(s)}.json`, caller.as.apiKey), 'object', {
        then: (res) => expectLookup(res, s),
      });
    },
  },
  // -- REST: credential headers --------------------------------------------------
  {
    name: 'headers: SVC-Token, Authorization, On-Behalf-Of',
    run: async (s) => {
      if (!sendableHeader(s)) return;
      const h = latin1Header(s);
      const path = '/address_book/registered_users.json';
      await exercise('SVC-Token', s, rest('GET', path, { 'SVC-Token': h }), 'list', { then: (res) => expect(res.status).toBe(401) });
      await exercise('Authorization: ApiKey', s, rest('GET', '/users/external/101.json', { Authorization: `ApiKey ${h}` }), 'object', {
        then: (res) => expect(res.status).toBe(401),
      });
      await exercise('Authorization', s, rest('GET', '/users/external/101.json', { Authorization: h }), 'object', {
        then: (res) => expect(res.status).toBe(401),
      });
      await exercise('On-Behalf-Of', s, rest('GET', path, { ...caller.as.apiKey, 'On-Behalf-Of': h }), 'list', { then: (res) => expect(res.status).toBe(403) });
      await exercise('X-Request-Id', s, rest('GET', path, { ...caller.as.owner, 'X-Request-Id': h }), 'list', { then: (res) => expect(res.status).toBe(200) });
    },
  },
  // -- GraphQL: variables ------------------------------------------------------------
  {
    name: 'GraphQL variables: ids, udid, externalUserId, force',
    run: async (s) => {
      await exercise(
        'GraphQL $ids',
        s,
        gql('mutation ($ids: [ID!]!) { deleteMessages(ids: $ids) { successfullyDeleted notFound } }', { ids: [s, other.messageIds[1]] }),
        'graphql',
        {
          then: (res) => {
            if (s === '') return expect((res.json as any).errors[0].extensions.code).toBe('BAD_USER_INPUT');
            // No comma splitting in GraphQL: the string is one id.
            expect(gqlData(res)).toEqual({ deleteMessages: { successfullyDeleted: [], notFound: [s, other.messageIds[1]] } });
          },
        },
      );
      await exercise('GraphQL $udid', s, gql('query ($udid: String) { registeredUsers(udid: $udid) { id } }', { udid: s }), 'graphql', {
        then: (res) =>
          validUdid(s)
            ? expect(gqlData(res)).toEqual({ registeredUsers: matches(s).map(({ id }) => ({ id })) })
            : expect((res.json as any).errors[0].extensions.code).toBe('BAD_USER_INPUT'),
      });
      await exercise('GraphQL $externalUserId', s, gql('query ($v: Int!) { userByExternalId(externalUserId: $v) { id } }', { v: s }), 'graphql', {
        then: (res) => expect(res.status).toBe(400),
      });
      await exercise('GraphQL $force', s, gql('mutation ($f: Boolean) { deleteMessages(ids: ["x"], force: $f) { notFound } }', { f: s }), 'graphql', {
        then: (res) => expect(res.status).toBe(400),
      });
    },
  },
  {
    name: 'GraphQL variables: contact name and phone, udid of an upload, read back',
    run: async (s, i) => {
      const udid = `gql-name-${i}`;
      const upload =
        'mutation ($c: [ContactInput!]!, $u: String, $f: Boolean) { uploadAddressBook(contacts: $c, udid: $u, force: $f) { created updated deleted rejected { index reasons } } }';
      await exercise('GraphQL $contacts name', s, gql(upload, { c: [{ name: s, phone: '+10000000102' }], u: udid }), 'graphql', {
        writes: ['contacts', 'address_book_matches'],
        then: (res) => {
          if (!validName(s)) {
            return expect(gqlData(res)).toEqual({
              uploadAddressBook: { created: 0, updated: 0, deleted: 0, rejected: [{ index: 0, reasons: [nameRejection(s)] }] },
            });
          }
          expect(gqlData(res)).toEqual({ uploadAddressBook: { created: 1, updated: 0, deleted: 0, rejected: [] } });
          contactsCreated++;
          uploaded(udid, [{ name: s, phone: '+10000000102' }], false);
        },
      });
      if (validName(s)) {
        const res = await exercise('GraphQL read back', s, gql(`{ registeredUsers(udid: ${lit(udid)}) { id } }`), 'graphql');
        expect(gqlData(res)).toEqual({ registeredUsers: matches(udid).map(({ id }) => ({ id })) });
      }
      await exercise('GraphQL $contacts phone', s, gql(upload, { c: [{ name: 'x', phone: s }], u: udid }), 'graphql', {
        ...(validPhone(s) ? { writes: ['contacts', 'address_book_matches'] } : {}),
        then: (res) => {
          if (!validPhone(s))
            return expect(gqlData(res)).toEqual({ uploadAddressBook: { created: 0, updated: 0, deleted: 0, rejected: [{ index: 0, reasons: [PHONE_RULE] }] } });
          contactsCreated += gqlData(res)!.uploadAddressBook.created;
          uploaded(udid, [{ name: 'x', phone: s }], false);
        },
      });
      await exercise('GraphQL $udid upload', s, gql(upload, { c: [{ name: 'o', phone: '+10000000103' }], u: s, f: true }), 'graphql', {
        writes: ['contacts', 'address_book_matches'],
        then: (res) => {
          if (!validUdid(s)) return expect((res.json as any).errors[0].extensions.code).toBe('BAD_USER_INPUT');
          contactsCreated += gqlData(res)!.uploadAddressBook.created;
          uploaded(s, [{ name: 'o', phone: '+10000000103' }], true);
        },
      });
    },
  },
  // -- GraphQL: inline literals and names -------------------------------------------------
  {
    name: 'GraphQL inline string literals',
    run: async (s) => {
      await exercise('GraphQL inline ids', s, gql(`mutation { deleteMessages(ids: [${lit(s)}]) { successfullyDeleted notFound } }`), 'graphql', {
        then: (res) => (s === '' ? undefined : expect(gqlData(res)).toEqual({ deleteMessages: { successfullyDeleted: [], notFound: [s] } })),
      });
      await exercise('GraphQL inline udid', s, gql(`{ registeredUsers(udid: ${lit(s)}) { id phone } }`), 'graphql', {
        then: (res) =>
          validUdid(s)
            ? expect(gqlData(res)).toEqual({ registeredUsers: matches(s) })
            : expect((res.json as any).errors[0].extensions.code).toBe('BAD_USER_INPUT'),
      });
      await exercise(
        'GraphQL inline name',
        s,
        gql(`mutation { uploadAddressBook(contacts: [{name: ${lit(s)}, phone: ${lit(s)}}]) { created rejected { index } } }`),
        'graphql',
        {
          // A string that is a phone and a name is taken (into the global book); any other is not.
          ...(validPhone(s) && validName(s) ? { writes: ['contacts', 'address_book_matches'] } : {}),
          then: (res) => {
            if (!(validPhone(s) && validName(s))) return expect(gqlData(res)).toEqual({ uploadAddressBook: { created: 0, rejected: [{ index: 0 }] } });
            const { created } = gqlData(res)!.uploadAddressBook;
            contactsCreated += created;
            uploaded('', [{ name: s, phone: s }], false);
          },
        },
      );
      await exercise('GraphQL inline block string', s, gql(`{ registeredUsers(udid: """${s.replace(/"""/g, '\\"""')}""") { id } }`), 'graphql');
    },
  },
  {
    name: 'GraphQL raw text in the document, operation names and headers',
    run: async (s) => {
      // The string spliced into the document as raw text: a parse or validation error, never execution of anything else.
      await exercise('GraphQL raw externalUserId', s, gql(`{ userByExternalId(externalUserId: ${s}) { id } }`), 'graphql', {
        then: (res) => (/^[0-9]+$/.test(s) ? undefined : expect(res.status).toBe(400)),
      });
      await exercise('GraphQL operationName', s, gql('query Op { __typename }', undefined, caller.as.owner, s), 'graphql', {
        then: (res) => (s === 'Op' || s === '' ? undefined : expect(res.status).toBe(400)),
      });
      if (sendableHeader(s)) {
        await exercise('GraphQL SVC-Token', s, gql('{ registeredUsers { id } }', undefined, { 'SVC-Token': latin1Header(s) }), 'graphql', {
          then: (res) => expect((res.json as any).errors[0].extensions.code).toBe('UNAUTHENTICATED'),
        });
        await exercise(
          'GraphQL On-Behalf-Of',
          s,
          gql('{ registeredUsers { id } }', undefined, { ...caller.as.apiKey, 'On-Behalf-Of': latin1Header(s) }),
          'graphql',
          {
            then: (res) => expect((res.json as any).errors[0].extensions.code).toBe('FORBIDDEN'),
          },
        );
      }
    },
  },
  // -- Sessions: POST /session.json, createSession, login --------------------------
  {
    name: 'REST session: a login, with its user’s password',
    run: (s) =>
      exercise(
        'REST session user[login]',
        s,
        rest('POST', '/session.json', {}, restForm(signedSessionRequest(caller, { login: s, password: LOGIN_PASSWORD })), true),
        'session',
        {
          writes: ['sessions', 'session_nonces'],
          then: (res) => {
            const userId = loginUsers.get(s);
            if (userId === undefined)
              return expect(sessionAnswer(res.status, res.json)).toBe(validText(s, LIMITS.loginLength) ? 'UNAUTHENTICATED' : 'BAD_USER_INPUT login');
            // Exactly the user whose login is this string.
            expect([res.status, (res.json as { session: { user_id: number } }).session.user_id]).toEqual([201, userId]);
            sessionsCreated++;
          },
        },
      ),
  },
  {
    name: 'REST session: an email, and the same string as password',
    run: (s) =>
      exercise('REST session user[email]', s, rest('POST', '/session.json', {}, restForm(signedSessionRequest(caller, { email: s, password: s }))), 'session', {
        then: (res) => expect(sessionAnswer(res.status, res.json)).toBe(validText(s, LIMITS.emailLength) ? 'UNAUTHENTICATED' : 'BAD_USER_INPUT email'),
      }),
  },
  {
    name: 'REST session: nonce (stored as itself), auth key, signature',
    run: async (s, i) => {
      const res = await exercise(
        'REST session nonce',
        s,
        rest('POST', '/session.json', {}, restForm(signedSessionRequest(caller, undefined, { nonce: s, timestamp: timestampFor(i, 0) }))),
        'session',
        {
          writes: ['sessions', 'session_nonces'],
          then: (res) => expect(sessionAnswer(res.status, res.json)).toBe(validNonce(s) ? 'created' : 'BAD_USER_INPUT nonce'),
        },
      );
      if (res.status === 201) await expectStoredNonce((res.json as { session: { token: string } }).session.token, s);
      await exercise(
        'REST session auth_key',
        s,
        rest('POST', '/session.json', {}, restForm(signedSessionRequest(caller, undefined, { authKey: s })), true),
        'session',
        {
          then: (res) =>
            expect(sessionAnswer(res.status, res.json)).toBe(validText(s, LIMITS.authKeyLength) ? 'UNKNOWN_APPLICATION' : 'BAD_USER_INPUT auth_key'),
        },
      );
      await exercise('REST session signature', s, rest('POST', '/session.json', {}, { ...restForm(signedSessionRequest(caller)), signature: s }), 'session', {
        then: (res) =>
          expect(sessionAnswer(res.status, res.json)).toBe([...s].length <= LIMITS.signatureLength ? 'INVALID_SIGNATURE' : 'BAD_USER_INPUT signature'),
      });
    },
  },
  {
    name: 'GraphQL createSession: nonce (stored as itself), auth key, signature',
    run: async (s, i) => {
      const res = await exercise(
        'GraphQL createSession $nonce',
        s,
        createSession(signedSessionRequest(caller, undefined, { nonce: s, timestamp: timestampFor(i, 1) })),
        'graphql',
        {
          writes: ['sessions', 'session_nonces'],
          then: (res) => expect(created(res)).toBe(validNonce(s) ? 'created' : 'BAD_USER_INPUT'),
        },
      );
      if (created(res) === 'created') await expectStoredNonce(gqlData(res)!.createSession.token, s);
      await exercise('GraphQL createSession $authKey', s, createSession(signedSessionRequest(caller, undefined, { authKey: s })), 'graphql', {
        then: (res) => expect(created(res)).toBe(validText(s, LIMITS.authKeyLength) ? 'UNKNOWN_APPLICATION' : 'BAD_USER_INPUT'),
      });
      await exercise('GraphQL createSession $signature', s, createSession({ ...signedSessionRequest(caller), signature: s }), 'graphql', {
        then: (res) => expect(created(res)).toBe([...s].length <= LIMITS.signatureLength ? 'INVALID_SIGNATURE' : 'BAD_USER_INPUT'),
      });
    },
  },
  {
    name: 'GraphQL login: a login, with its user’s password, on an application session',
    run: async (s) => {
      const req = gql('mutation ($l: String, $p: String) { login(login: $l, password: $p) { id login } }', { l: s, p: LOGIN_PASSWORD }, caller.as.app);
      // The login changes the request's session: a new one of its kind stands in for the tenant's shared one.
      if (await useDisposableSessions(req, tracker)) disposablesMade++;
      await exercise('GraphQL login $login', s, req, 'graphql', {
        writes: ['sessions'],
        then: (res) => {
          const userId = loginUsers.get(s);
          if (userId === undefined)
            return expect((res.json as any).errors[0].extensions.code).toBe(validText(s, LIMITS.loginLength) ? 'UNAUTHENTICATED' : 'BAD_USER_INPUT');
          expect(gqlData(res)).toEqual({ login: { id: userId, login: s } });
        },
      });
    },
  },
  // -- The address book read back (after the uploads above) -------------------------
  {
    name: 'REST and GraphQL address book: udid, as a query string and as the SDK sends it',
    run: async (s, i) => {
      const expectBook = (res: RawResponse) => (validUdid(s) ? expect(res.json).toEqual(bookOf(s)) : expect(res.status).toBe(422));
      await exercise('REST GET /address_book.json ?udid', s, rest('GET', `/address_book.json?udid=${enc(s)}`, caller.as.owner), 'list', { then: expectBook });
      if (sdkCanSend(s)) {
        // As a browser's fetch or, under Node, the SDK's node-fetch writes it (every other string).
        const client = i % 2 === 0 ? 'fetch' : 'node-fetch';
        await exercise(
          `REST GET /address_book.json ?{"udid"} (${client})`,
          s,
          rest('GET', `/address_book.json${sdkQuery({ udid: s }, client)}`, caller.as.owner),
          'list',
          { then: expectBook },
        );
      }
      await exercise('GraphQL addressBook $udid', s, gql('query ($u: String) { addressBook(udid: $u) { name phone } }', { u: s }), 'graphql', {
        then: (res) =>
          validUdid(s) ? expect(gqlData(res)).toEqual({ addressBook: bookOf(s) }) : expect((res.json as any).errors[0].extensions.code).toBe('BAD_USER_INPUT'),
      });
    },
  },
];

describe.each(INPUTS.map((input) => [input.name, input] as const))('%s', (_name, input) => {
  // RELIABILITY_LONG=1 sends the whole set twice: the second round meets a
  // warm credential cache and books that already hold the first round's
  // contacts (each round uploads to books of its own).
  test.each(INJECTIONS.map((s, i) => [JSON.stringify(s).slice(0, 60), s, i] as const))('%s', async (_label, s, i) => {
    for (let round = 0; round < (LONG ? 2 : 1); round++) await input.run(s, i + round * INJECTIONS.length);
  });
});

/**
 * The end state: every table still there, every count as it was but the
 * contacts the uploads created (with the matches they made: uploads store
 * seeded users' phones) and the sessions (and their nonces) made.
 */
async function checkEndState(): Promise<void> {
  if (!initial) return; // the service or its seeding did not start: nothing to compare
  const final = await digest(service.db.pool);
  expect(Object.keys(final)).toEqual(Object.keys(initial));
  const made = ['contacts', 'address_book_matches', 'sessions', 'session_nonces'];
  for (const table of Object.keys(initial)) {
    if (made.includes(table)) continue;
    expect({ table, rows: final[table]!.rows }).toEqual({ table, rows: initial[table]!.rows });
  }
  expect(final.contacts!.rows).toBeGreaterThanOrEqual(initial.contacts!.rows);
  expect(final.address_book_matches!.rows).toBeGreaterThanOrEqual(initial.address_book_matches!.rows);
  expect(final.sessions!.rows).toBe(initial.sessions!.rows + sessionsCreated + disposablesMade);
  expect(final.session_nonces!.rows).toBe(initial.session_nonces!.rows + sessionsCreated);
  // Nothing else changed at all, in any other table (bookkeeping columns aside).
  expect(changedTables(initial, final).filter((t) => !made.includes(t))).toEqual([]);
  await expectHealthy(port);
  recordFigures('injection', {
    inputs: INJECTIONS.length,
    inputKinds: INPUTS.length,
    requests,
    byStatus,
    contactsCreated,
    sessionsCreated,
    slowestMs: slowest.ms,
    slowestInput: slowest.input,
    maxAllowedMs: MAX_MS,
  });
}
