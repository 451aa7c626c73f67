// Credentials: valid ones of two tenants (so requests reach validation and
// the operations, not only authentication), and every kind of wrong one.
import fc from 'fast-check';
import type { Tenant } from '../seed';
import { type HeaderValue, latin1Header } from './requests';
import { arb, type Repeat } from './values';

export interface Credentials {
  label: string;
  /** Index of the tenant whose credential decides who the caller is (undefined: none or invalid). */
  tenant?: 0 | 1;
  /** The user the caller acts as, where the credential names one for sure. */
  userId?: number;
  headers: [string, HeaderValue | Repeat][];
}

export function credentialArbitraries(ts: [Tenant, Tenant]): { credentials: fc.Arbitrary<Credentials>; randomValue: fc.Arbitrary<string | Repeat> } {
  const [a, b] = ts;
  const userIds = ts.flatMap((t) => [t.owner.id, t.member.id, t.outsider.id]);
  const headerCase = (name: string) => fc.constantFrom(name, name.toLowerCase(), name.toUpperCase());
  const valid: Credentials[] = ts.flatMap((t, i) => {
    const tenant = i as 0 | 1;
    return [
      { label: 'owner token', tenant, userId: t.owner.id, headers: [['SVC-Token', t.ownerToken]] },
      { label: 'member token', tenant, userId: t.member.id, headers: [['SVC-Token', t.memberToken]] },
      { label: 'outsider token', tenant, userId: t.outsider.id, headers: [['SVC-Token', t.outsiderToken]] },
      { label: 'application token', tenant, headers: [['SVC-Token', t.appToken]] },
      // QuickBlox SDKs send the token as QB-Token: the same rules.
      { label: 'owner QB-Token', tenant, userId: t.owner.id, headers: [['QB-Token', t.ownerToken]] },
      { label: 'application QB-Token', tenant, headers: [['qb-token', t.appToken]] },
      { label: 'api key', tenant, headers: [['Authorization', `ApiKey ${t.apiKey}`]] },
      // HTTP drops whitespace around a header value: still the key.
      { label: 'api key with a trailing space', tenant, headers: [['Authorization', `ApiKey ${t.apiKey} `]] },
      {
        label: 'api key on behalf of owner',
        tenant,
        userId: t.owner.id,
        headers: [
          ['Authorization', `ApiKey ${t.apiKey}`],
          ['On-Behalf-Of', String(t.owner.id)],
        ],
      },
      {
        label: 'api key on behalf of member',
        tenant,
        userId: t.member.id,
        headers: [
          ['Authorization', `ApiKey ${t.apiKey}`],
          ['On-Behalf-Of', String(t.member.id)],
        ],
      },
    ] satisfies Credentials[];
  });
  const tokenHeader = fc.constantFrom('SVC-Token', 'QB-Token');
  const randomValue: fc.Arbitrary<string | Repeat> = fc.oneof(
    { weight: 4, arbitrary: arb.anyString(80).map(latin1Header) },
    { weight: 1, arbitrary: fc.record({ repeat: fc.constantFrom('a', 'é', 'A1_-', ' '), times: fc.integer({ min: 1_000, max: 60_000 }) }) },
  );
  const authorization: fc.Arbitrary<string | Repeat> = fc.oneof(
    randomValue,
    fc.constantFrom(
      'ApiKey',
      'ApiKey ',
      'apikey x',
      'APIKEY x',
      'Bearer x',
      'Basic dXNlcjpwYXNz',
      'ApiKey  x',
      ' ApiKey x',
      'ApiKey x y',
      `ApiKey ${a.apiKey}x`,
      `apikey ${a.apiKey}`,
      `Bearer ${a.apiKey}`,
      `ApiKey ${'k'.repeat(513)}`,
      `ApiKey ${b.ownerToken}`,
    ),
    fc.string({ maxLength: 40 }).map((s) => `ApiKey ${latin1Header(s)}`),
  );
  const onBehalfOf: fc.Arbitrary<string | Repeat> = fc.oneof(
    fc.constantFrom('0', '-1', '1.0', '01', '2147483647', '2147483648', '99999999999', ' 1', '1 ', '0x1', '1e2', 'abc', ''),
    fc.constantFrom(...userIds.map(String)),
    randomValue,
  );
  const credentials: fc.Arbitrary<Credentials> = fc.oneof(
    { weight: 10, arbitrary: fc.constantFrom(...valid) },
    { weight: 1, arbitrary: fc.constant<Credentials>({ label: 'none', headers: [] }) },
    { weight: 2, arbitrary: fc.tuple(tokenHeader.chain(headerCase), randomValue).map(([n, v]): Credentials => ({ label: 'random token', headers: [[n, v]] })) },
    {
      weight: 1,
      // Two session-token headers at once: 400, whatever their values (docs/operation.md, Credentials: exactly one).
      arbitrary: fc.tuple(fc.constantFrom(a, b), fc.constantFrom('same', 'other', 'random'), fc.boolean()).map(([t, which, svcFirst]): Credentials => {
        const other = which === 'same' ? t.ownerToken : which === 'other' ? t.memberToken : 'nonsense';
        const pair: [string, string][] = [
          ['SVC-Token', t.ownerToken],
          ['QB-Token', other],
        ];
        return { label: 'SVC-Token and QB-Token', headers: svcFirst ? pair : pair.reverse() };
      }),
    },
    {
      weight: 2,
      arbitrary: fc.tuple(headerCase('Authorization'), authorization).map(([n, v]): Credentials => ({ label: 'odd authorization', headers: [[n, v]] })),
    },
    {
      weight: 1,
      arbitrary: fc
        .tuple(fc.constantFrom(...valid.filter((c) => /token$/i.test(c.label))), authorization)
        .map(([c, v]): Credentials => ({ label: 'both', headers: [...c.headers, ['Authorization', v]] })),
    },
    {
      weight: 1,
      arbitrary: fc.tuple(fc.constantFrom(a, b), onBehalfOf).map(([t, v]): Credentials => ({
        label: 'token with on-behalf-of',
        headers: [
          ['SVC-Token', t.ownerToken],
          ['On-Behalf-Of', v],
        ],
      })),
    },
    {
      weight: 2,
      arbitrary: fc.tuple(fc.constantFrom(0, 1), onBehalfOf).map(([i, v]): Credentials => ({
        label: 'api key with odd on-behalf-of',
        // Valid user ids of the same tenant make this a valid caller of that tenant; of the other, a 403.
        tenant: i,
        headers: [
          ['Authorization', `ApiKey ${ts[i].apiKey}`],
          ['On-Behalf-Of', v],
        ],
      })),
    },
    {
      weight: 1,
      // A header line sent twice: Node joins the values ("a, b"), which names no session.
      arbitrary: fc.tuple(fc.constantFrom(0, 1), fc.boolean()).map(([i, validFirst]): Credentials => ({
        label: 'token sent twice',
        headers: [['SVC-Token', validFirst ? [ts[i].memberToken, 'nonsense'] : ['nonsense', ts[i].memberToken]]],
      })),
    },
  );

  return { credentials, randomValue };
}
