// Behind a shared HTTP cache, every caller gets their own answer. Debian's
// Varnish with its default configuration (it stores any 200 that does not
// forbid it, for 120 s, keyed by URL and Host; it passes requests that carry
// Authorization or a cookie) in front of a real service: alice, bob (same
// application), carol (another application) and an anonymous caller ask the
// same URLs over REST and over GraphQL GET, in turns, and each answer is the
// one the service gives that caller. The public documents are served from the
// cache. Without /usr/sbin/varnishd the suite is skipped and says so
// (`apt-get install varnish`, which .ci/run does; a failure under CI=true).
//
// The headers behind this, route by route: test/security/cache-headers.test.ts.
import { resolve } from 'node:path';
import { needProgram, requires } from '../support/requires';
import { fetchResult, type HttpResult, startService, useService } from '../support/service';
import { seedTenant, type Tenant } from '../support/seed';
import { startVarnish, type Varnish, VARNISHD, wasHit } from '../support/varnish';

const withVarnish = requires(needProgram(VARNISHD, "Debian's Varnish: apt-get install varnish"));

withVarnish.describe('behind Varnish with its default configuration', () => {
  let varnish: Varnish;
  let one: Tenant;
  let two: Tenant;

  // Declared before the service: Varnish stops before the service closes.
  afterAll(async () => {
    await varnish?.stop();
  });
  const service = useService();
  beforeAll(async () => {
    one = await seedTenant(service.app.provisioning);
    two = await seedTenant(service.app.provisioning);
    // alice (one's owner) has bob (one's member) in her book; bob has one's
    // outsider; carol (two's owner) has two's member.
    for (const [t, token, phone] of [
      [one, one.ownerToken, one.member.phone],
      [one, one.memberToken, one.outsider.phone],
      [two, two.ownerToken, two.member.phone],
    ] as const) {
      const res = await service.rest('POST', '/address_book.json', {
        headers: { 'SVC-Token': token },
        body: { contacts: [{ name: `for ${t.applicationId}`, phone }] },
      });
      expect(res.status).toBe(200);
    }
    varnish = await startVarnish(service.port);
  }, 60_000);

  const viaCache = (path: string, headers: Record<string, string> = {}): Promise<HttpResult> => fetchResult(`${varnish.baseUrl}${path}`, { headers });

  interface Caller {
    name: string;
    headers: Record<string, string>;
  }
  const callers = (): Caller[] => [
    { name: 'alice', headers: { 'SVC-Token': one.ownerToken } },
    { name: 'bob', headers: { 'SVC-Token': one.memberToken } },
    { name: 'anonymous', headers: {} },
    { name: 'carol', headers: { 'QB-Token': two.ownerToken } },
    { name: 'alice', headers: { 'SVC-Token': one.ownerToken } },
    { name: 'bob', headers: { 'SVC-Token': one.memberToken } },
  ];

  /** What each caller must be told: its status and who the answer is about. */
  interface Case {
    path: string;
    /** Extra request headers every caller sends (GraphQL's CSRF preflight header for the anonymous one). */
    headers?: Record<string, string>;
    expected(caller: string): { status: number; about: unknown };
    about(res: HttpResult): unknown;
  }

  const ids = (list: { id: number }[] | undefined) => (list ?? []).map((u) => u.id).sort();
  const matches = (caller: string): number[] =>
    caller === 'alice' ? [one.member.id] : caller === 'bob' ? [one.outsider.id] : caller === 'carol' ? [two.member.id] : [];

  const CASES = (): Case[] => [
    {
      path: '/address_book/registered_users.json?compact=1',
      expected: (caller) => (caller === 'anonymous' ? { status: 401, about: [] } : { status: 200, about: matches(caller) }),
      about: (res) => ids(res.body?.items?.map((item: { user: { id: number } }) => item.user)),
    },
    {
      path: '/address_book.json',
      expected: (caller) =>
        caller === 'anonymous'
          ? { status: 401, about: [] }
          : { status: 200, about: [caller === 'alice' ? one.member.phone : caller === 'bob' ? one.outsider.phone : two.member.phone] },
      about: (res) => (Array.isArray(res.body) ? res.body.map((c: { phone: string }) => c.phone) : []),
    },
    {
      path: '/users/external/102.json',
      expected: (caller) =>
        caller === 'anonymous' ? { status: 401, about: null } : { status: 200, about: caller === 'carol' ? two.member.id : one.member.id },
      about: (res) => res.body?.user?.id ?? null,
    },
    {
      path: '/session.json',
      expected: (caller) =>
        caller === 'anonymous'
          ? { status: 401, about: null }
          : { status: 200, about: caller === 'alice' ? one.owner.id : caller === 'bob' ? one.member.id : two.owner.id },
      about: (res) => res.body?.session?.user_id ?? null,
    },
    {
      path: `/graphql?query=${encodeURIComponent('{ registeredUsers { id phone } }')}`,
      headers: { 'apollo-require-preflight': '1' },
      expected: (caller) => (caller === 'anonymous' ? { status: 200, about: 'UNAUTHENTICATED' } : { status: 200, about: matches(caller) }),
      about: (res) => res.body?.errors?.[0]?.extensions?.code ?? ids(res.body?.data?.registeredUsers),
    },
    {
      path: `/graphql?query=${encodeURIComponent('{ userByExternalId(externalUserId: 102) { id } }')}`,
      headers: { 'apollo-require-preflight': '1' },
      expected: (caller) =>
        caller === 'anonymous' ? { status: 200, about: 'UNAUTHENTICATED' } : { status: 200, about: caller === 'carol' ? two.member.id : one.member.id },
      about: (res) => res.body?.errors?.[0]?.extensions?.code ?? res.body?.data?.userByExternalId?.id ?? null,
    },
  ];

  test.each(
    [
      '/address_book/registered_users.json?compact=1',
      '/address_book.json',
      '/users/external/102.json',
      '/session.json',
      'GET /graphql registeredUsers',
      'GET /graphql userByExternalId',
    ].map((name, i) => [name, i] as const),
  )('%s: alice, bob, an anonymous caller and carol, in turns, each get their own answer', async (_name, index) => {
    const c = CASES()[index]!;
    const seen: string[] = [];
    for (const caller of callers()) {
      const res = await viaCache(c.path, { ...c.headers, ...caller.headers });
      const expected = c.expected(caller.name);
      seen.push(`${caller.name}: ${res.status} ${JSON.stringify(c.about(res))} (X-Varnish: ${res.headers.get('x-varnish')})`);
      expect([seen.at(-1), res.status, c.about(res)]).toEqual([seen.at(-1), expected.status, expected.about]);
      expect([seen.at(-1), wasHit(res.headers)]).toEqual([seen.at(-1), false]);
    }
  });

  test('an API key with On-Behalf-Of gets its own answer too (Varnish passes Authorization; the answer says private all the same)', async () => {
    const res = await viaCache('/address_book/registered_users.json?compact=1', one.as.onBehalfOf(one.member.id));
    expect(res.status).toBe(200);
    expect(ids(res.body.items.map((item: { user: { id: number } }) => item.user))).toEqual([one.outsider.id]);
    expect(res.headers.get('cache-control')).toBe('private, no-store');
  });

  test.each(['/openapi.json', '/schema.graphql', '/playground'])('%s is served from the cache, with the validators of the service', async (path) => {
    const first = await viaCache(path);
    expect(first.status).toBe(200);
    const second = await viaCache(path, { 'SVC-Token': one.ownerToken });
    expect(second.status).toBe(200);
    expect(second.text).toBe(first.text);
    expect([path, wasHit(second.headers)]).toEqual([path, true]);
    const etag = second.headers.get('etag');
    expect(etag).toMatch(/^"[\w+/=-]+"$/);
    const revalidated = await viaCache(path, { 'if-none-match': etag! });
    expect(revalidated.status).toBe(304);
    expect(revalidated.text).toBe('');
  });

  test('with CACHE_PRIVATE_MAX_AGE_S=60 (browsers may keep answers) the cache still keeps none: alice and bob get their own', async () => {
    const lenient = await startService({ caching: { privateMaxAgeSeconds: 60 } });
    const cache = await startVarnish(lenient.port);
    try {
      const t = await seedTenant(lenient.app.provisioning);
      await lenient.rest('POST', '/address_book.json', { headers: t.as.owner, body: { contacts: [{ name: 'm', phone: t.member.phone }] } });
      const path = '/address_book/registered_users.json?compact=1';
      const alice = await fetchResult(`${cache.baseUrl}${path}`, { headers: t.as.owner });
      expect([alice.status, alice.headers.get('cache-control')]).toEqual([200, 'private, max-age=60']);
      expect(ids(alice.body.items.map((item: { user: { id: number } }) => item.user))).toEqual([t.member.id]);
      const bob = await fetchResult(`${cache.baseUrl}${path}`, { headers: t.as.member });
      expect([bob.status, wasHit(bob.headers), bob.body.items]).toEqual([200, false, []]);
    } finally {
      await cache.stop();
      await lenient.close();
    }
  });

  test("the README's per-credential VCL keeps alice's and bob's answers apart, serves each one's repeat from the cache, and keeps no error", async () => {
    const cache = await startVarnish(service.port, resolve(__dirname, '../../examples/varnish/per-credential.vcl'));
    try {
      const get = (path: string, headers: Record<string, string> = {}) => fetchResult(`${cache.baseUrl}${path}`, { headers });
      const path = '/address_book/registered_users.json?compact=1';
      const alice = { 'SVC-Token': one.ownerToken };
      const bob = { 'QB-Token': one.memberToken };
      const seen = [];
      for (const [name, headers, expected] of [
        ['alice', alice, [one.member.id]],
        ['bob', bob, [one.outsider.id]],
        ['alice', alice, [one.member.id]],
        ['bob', bob, [one.outsider.id]],
      ] as const) {
        const res = await get(path, headers);
        seen.push([name, res.status, ids(res.body.items.map((item: { user: { id: number } }) => item.user)), wasHit(res.headers)]);
        expect(ids(res.body.items.map((item: { user: { id: number } }) => item.user))).toEqual(expected);
      }
      // The repeats came from the cache; each first request did not.
      expect(seen.map(([name, , , hit]) => `${String(name)} ${hit ? 'hit' : 'miss'}`)).toEqual(['alice miss', 'bob miss', 'alice hit', 'bob hit']);
      for (let i = 0; i < 2; i++) {
        const anonymous = await get(path);
        expect([anonymous.status, wasHit(anonymous.headers)]).toEqual([401, false]);
      }
      const graphql = `/graphql?query=${encodeURIComponent('{ registeredUsers { id } }')}`;
      expect(ids((await get(graphql, alice)).body.data.registeredUsers)).toEqual([one.member.id]);
      const bobs = await get(graphql, bob);
      expect([ids(bobs.body.data.registeredUsers), wasHit(bobs.headers)]).toEqual([[one.outsider.id], false]);
    } finally {
      await cache.stop();
    }
  });

  test.each(['/healthz', '/readyz', '/metrics'])('%s is never served from the cache: it reports the instance as it is now', async (path) => {
    await viaCache(path);
    const second = await viaCache(path);
    expect(second.status).toBe(200);
    expect([path, wasHit(second.headers)]).toEqual([path, false]);
  });
});
