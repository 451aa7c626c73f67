// The REST fuzz test's requests (test/fuzz/http.test.ts): a route of one of
// the families (chat.ts, users.ts, address-book.ts, sessions.ts) or an
// unknown path, any method now and then, query strings, credentials of two
// tenants and every kind of wrong one, extra headers, and bodies of every
// kind and size.
import fc from 'fast-check';
import { arb, credentialArbitraries, latin1Header, type Repeat } from '../../support/fuzz';
import type { Tenant } from '../../support/seed';
import { addressBookArbitraries } from './address-book';
import { deleteIdsSegment } from './chat';
import { type Body, enc, jsonSuffix, METHODS, NOT_REST, partText, type PathPart, type RequestDescriptor, ROUTES, SPECIAL_SEGMENTS } from './descriptors';
import { sessionPathBodies } from './sessions';
import { lookupSegmentArbitrary } from './users';

export function requestArbitrary(ts: [Tenant, Tenant]): fc.Arbitrary<RequestDescriptor> {
  const realIds = ts.flatMap((t) => t.messageIds);
  const { credentials, randomValue } = credentialArbitraries(ts);

  // -- paths ----------------------------------------------------------------
  const idsSegment = deleteIdsSegment(realIds);
  const lookupSegment = lookupSegmentArbitrary();
  const unknownPath: fc.Arbitrary<string> = fc
    .oneof(
      fc.array(fc.oneof(arb.anyString(12).map(enc), fc.constantFrom(...SPECIAL_SEGMENTS)), { minLength: 0, maxLength: 5 }).map((s) => `/${s.join('/')}`),
      fc.constantFrom(
        '/chat/Message',
        '/chat/Message/',
        '/chat/message/a.json',
        '/CHAT/Message/a.json',
        '/chat/Message/a/b.json',
        '/address_book',
        '/address_book/',
        '/address_book/registered_users',
        '/address_book/registered_users.json/',
        '/address_book.JSON',
        '/users/external/',
        '/users/external',
        '/users/external/1/2.json',
        '/users/external/1.json/x',
        '/users/1.json',
        '/users/external/../1.json',
        '/session',
        '/session.JSON',
        '/session.json/',
        '/sessions.json',
        '/login',
        '/login.json/x',
        '/logout.json',
        '/address_book.json/1',
        '/chat/Message/../../users/external/101.json',
        '/',
        '/%2E%2E/%2E%2E/etc/passwd',
        '/index.html',
        '/.env',
        '/graphqlx',
        '/graphql.json',
      ),
    )
    // Doubled slashes are the same path as single ones (Fastify's ignoreDuplicateSlashes, for SDKs whose base URL
    // ends in "/"): such a path may be a real route, so none is generated as unknown (test/legacy covers them).
    .filter((p) => !NOT_REST.test(p) && !p.includes('//'));

  const path = fc.oneof(
    { weight: 3, arbitrary: fc.tuple(idsSegment, jsonSuffix).map(([ids, suffix]) => ({ route: 'delete' as const, path: ['/chat/Message/', ...ids, suffix] })) },
    { weight: 2, arbitrary: fc.constant({ route: 'registered' as const, path: ['/address_book/registered_users.json'] }) },
    { weight: 3, arbitrary: fc.constant({ route: 'upload' as const, path: ['/address_book.json'] }) },
    { weight: 2, arbitrary: fc.tuple(lookupSegment, jsonSuffix).map(([id, suffix]) => ({ route: 'lookup' as const, path: ['/users/external/', id, suffix] })) },
    { weight: 2, arbitrary: fc.constant({ route: 'addressBook' as const, path: ['/address_book.json'] }) },
    { weight: 5, arbitrary: fc.constant({ route: 'createSession' as const, path: ['/session.json'] }) },
    { weight: 2, arbitrary: fc.constant({ route: 'session' as const, path: ['/session.json'] }) },
    { weight: 2, arbitrary: fc.constant({ route: 'endSession' as const, path: ['/session.json'] }) },
    { weight: 3, arbitrary: fc.constant({ route: 'login' as const, path: ['/login.json'] }) },
    { weight: 3, arbitrary: fc.constant({ route: 'logout' as const, path: ['/login.json'] }) },
    { weight: 1, arbitrary: unknownPath.map((p) => ({ route: 'unknown' as const, path: [p] })) },
  );

  // -- query strings ----------------------------------------------------------
  const queryValue: fc.Arbitrary<string> = fc.oneof(
    fc.constantFrom('0', '1', '', '2', '-1', 'true', 'false', '01', ' 1', '1 ', '1.0', 'null', '[1]', '%', '%zz', '%00', '\u0000'),
    arb.anyString(20),
    fc.integer({ min: 0, max: 80 }).map((n) => 'u'.repeat(n)),
    fc.integer({ min: 60, max: 70 }).map((n) => 'é'.repeat(n)),
  );
  const queryPair = fc.tuple(
    fc.oneof({ weight: 4, arbitrary: fc.constantFrom('force', 'compact', 'udid') }, { weight: 1, arbitrary: arb.anyString(8) }),
    queryValue,
    fc.constantFrom('encoded', 'encoded', 'encoded', 'no-value'),
  );
  const query: fc.Arbitrary<string> = fc.oneof(
    {
      weight: 6,
      arbitrary: fc
        .array(queryPair, { maxLength: 4 })
        .map((pairs) =>
          pairs.map(([k, v, how]) => (how === 'no-value' ? enc(k) : `${enc(k)}=${v === '%' || v === '%zz' || v === '%00' ? v : enc(v)}`)).join('&'),
        ),
    },
    {
      weight: 1,
      arbitrary: fc.constantFrom(
        '&',
        '=',
        '&&=&',
        '?',
        'a[b]=1',
        'udid[]=1',
        'compact[0]=1',
        'compact=1&compact=1',
        'force=1&force=0',
        'udid=a&udid=b',
        '__proto__=1',
      ),
    },
  );

  // -- headers ----------------------------------------------------------------
  const extraHeader: fc.Arbitrary<[string, string | Repeat]> = fc.oneof(
    fc.tuple(fc.constant('Accept'), fc.constantFrom('application/json', '*/*', 'text/html', 'application/xml', '', 'garbage')),
    fc.tuple(fc.constant('X-Request-Id'), fc.oneof(fc.constantFrom('abc', 'a'.repeat(200)), arb.anyString(30).map(latin1Header))),
    fc.tuple(fc.stringMatching(/^X-[A-Za-z0-9-]{1,20}$/), randomValue),
  );

  // -- bodies -----------------------------------------------------------------
  const contentType: fc.Arbitrary<string | undefined> = fc.oneof(
    { weight: 6, arbitrary: fc.constant('application/json') },
    {
      weight: 3,
      arbitrary: fc.constantFrom(
        undefined,
        'application/json; charset=utf-8',
        'application/x-www-form-urlencoded',
        'text/plain',
        'application/xml',
        'multipart/form-data; boundary=x',
        'application/octet-stream',
        '',
        'APPLICATION/JSON',
        'application/json;;;',
        'application/vnd.api+json',
        'application/graphql',
      ),
    },
    { weight: 1, arbitrary: arb.anyString(30).map(latin1Header) },
  );
  const { validUpload, jsonObject, bookQuery } = addressBookArbitraries();
  const body: fc.Arbitrary<Body> = fc.oneof(
    { weight: 4, arbitrary: fc.constant<Body>({ kind: 'none' }) },
    {
      weight: 8,
      arbitrary: fc
        .tuple(fc.oneof({ weight: 3, arbitrary: validUpload }, { weight: 5, arbitrary: jsonObject }, { weight: 1, arbitrary: arb.jsonJunk() }), contentType)
        .map(([value, ct]): Body => ({ kind: 'json', value, contentType: ct })),
    },
    {
      weight: 2,
      arbitrary: fc
        .tuple(
          fc.oneof(
            arb.anyString(60),
            fc.constantFrom('{', '{"contacts":', '{"force":1,}', "{'force':1}", 'NaN', '\u0000', '\ufeff{}', '[]', '""', '1', 'null', 'true'),
          ),
          contentType,
        )
        .map(([text, ct]): Body => ({ kind: 'text', text, contentType: ct })),
    },
    {
      weight: 1,
      arbitrary: fc
        .tuple(fc.array(fc.integer({ min: 0, max: 255 }), { maxLength: 64 }), contentType)
        .map(([bytes, ct]): Body => ({ kind: 'bytes', bytes, contentType: ct })),
    },
    {
      weight: 2,
      arbitrary: fc
        .tuple(
          fc.array(
            fc.tuple(fc.constantFrom('force', 'contacts', 'udid', 'contacts[0][name]', 'x'), fc.oneof(fc.constantFrom('0', '1', '2', ''), arb.anyString(20))),
            { maxLength: 4 },
          ),
          fc.constantFrom<string | undefined>('application/x-www-form-urlencoded', 'application/x-www-form-urlencoded; charset=latin1', undefined),
        )
        .map(([pairs, ct]): Body => ({ kind: 'form', pairs, contentType: ct })),
    },
    {
      weight: 1,
      arbitrary: fc.record({
        kind: fc.constant('deep' as const),
        depth: fc.oneof(fc.integer({ min: 1, max: 200 }), fc.constantFrom(10_000, 50_000)),
        open: fc.constantFrom('[' as const, '{"a":' as const),
        at: fc.constantFrom('top' as const, 'contacts' as const, 'force' as const, 'udid' as const, 'name' as const),
        contentType: fc.constantFrom<string | undefined>('application/json', 'application/json', 'application/x-www-form-urlencoded'),
      }),
    },
    {
      weight: 1,
      // Around the 2 MiB body limit.
      arbitrary: fc.record({
        kind: fc.constant('large' as const),
        size: fc.oneof(fc.integer({ min: 2 * 1024 * 1024 - 64, max: 2 * 1024 * 1024 + 64 }), fc.integer({ min: 1_900_000, max: 2_300_000 })),
        json: fc.boolean(),
        contentType,
      }),
    },
    {
      weight: 1,
      // Around the 10,000-contact limit.
      arbitrary: fc.record({
        kind: fc.constant('manyContacts' as const),
        count: fc.integer({ min: 9_995, max: 10_005 }),
        contentType: fc.constant<string | undefined>('application/json'),
      }),
    },
  );
  const bodyFor = sessionPathBodies(body);

  return path
    .chain((target) =>
      fc.record({
        target: fc.constant(target),
        wrongMethod: fc.oneof({ weight: 4, arbitrary: fc.constant(undefined) }, { weight: 1, arbitrary: fc.constantFrom(...METHODS) }),
        query: fc.oneof({ weight: 1, arbitrary: fc.constant('') }, { weight: 1, arbitrary: query }),
        book:
          target.route === 'addressBook'
            ? fc.oneof({ weight: 4, arbitrary: bookQuery }, { weight: 1, arbitrary: fc.constant(undefined) })
            : fc.constant(undefined),
        credentials,
        extraHeaders: fc.array(extraHeader, { maxLength: 3 }),
        body: bodyFor(target.route),
      }),
    )
    .map(({ target, wrongMethod, query: q, book, credentials: c, extraHeaders, body: b }): RequestDescriptor => {
      let method: string = wrongMethod ?? (target.route === 'unknown' ? 'GET' : ROUTES[target.route].method);
      // Known src bug, pinned below: a request target the HTTP parser refuses
      // gets a 400 with a body even for HEAD, which an HTTP client cannot read.
      if (method === 'HEAD' && target.path.some((p) => typeof p === 'string' && /[\u0080-\u00ff]/.test(p))) method = 'GET';
      // Covered by an explicit test below (a src bug once): on a path with no route
      // for its method, a body that fails to parse (or is too large, or of
      // another type) goes to the error handler, which picks the shape by
      // prefix ('/graphql…' → GraphQL's) and ignores the lookup's: such
      // requests answer the wrong family. Not generated here, so that the
      // property keeps checking everything else.
      const misreadPrefix = /^\/(?:users\/external\/|graphql)/.test(partText(target.path[0])) && method !== 'GET' && method !== 'HEAD';
      return {
        route: target.route,
        method,
        path: [...target.path] as PathPart[],
        query: book ? '' : q,
        ...(book ? { book } : {}),
        credentials: c,
        extraHeaders,
        body: misreadPrefix ? { kind: 'none' } : b,
      };
    });
}
