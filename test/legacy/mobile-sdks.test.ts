// QuickBlox's Android and iOS SDKs, as their own request logs (posted in
// QuickBlox's public issue trackers) show them, sent raw over HTTP byte for
// byte as those logs describe: the headers (QuickBlox-REST-API-Version 0.1.1,
// QB-SDK, QB-OS, a QB-Token left over from an earlier session), the parameter
// names and order, form encoding (Android) or JSON with numbers (iOS), negative
// nonces, login and email together, and the doubled slash of a base URL ending
// in "/". Signed as the SDKs sign: HMAC-SHA1 of the sorted `k=v` pairs joined
// by "&", unencoded. Then every operation through a session opened that way,
// and an address book as a phone holds it.
//
// Sources (request logs): quickblox-android-sdk issues #529 (Android 3.5.0,
// POST https://…//session.json), #782 (Android 3.9.13: user[email] and
// user[login] together, a JWT QB-Token, nonce -1569037671), #418 (Android
// 3.3.1: POST /login.json with login and email), #38 (Android 2.4: 202 from
// /login.json); quickblox-ios-sdk #326 (iOS 2.6.6: JSON body, numbers,
// QB-OS "iOS 9.2").
import { createHmac } from 'node:crypto';
import { request as httpRequest } from 'node:http';
import { seedTenant, type Tenant } from '../support/seed';
import { useService } from '../support/service';

let port: number;
let t: Tenant;

const service = useService();
beforeAll(async () => {
  port = Number(new URL(service.baseUrl).port);
  t = await seedTenant(service.app.provisioning);
});

interface Raw {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  body: any;
}

/** One request exactly as given: path (doubled slashes kept), headers in order, body bytes. */
function send(method: string, path: string, headers: [string, string][], body?: string): Promise<Raw> {
  return new Promise((resolve, reject) => {
    const req = httpRequest(
      {
        host: '127.0.0.1',
        port,
        method,
        path,
        headers: [['Host', `127.0.0.1:${port}`], ...headers, ...(body === undefined ? [] : [['Content-Length', String(Buffer.byteLength(body))]])].flat(),
      },
      (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (chunk: Buffer) => chunks.push(chunk));
        res.on('end', () => {
          const text = Buffer.concat(chunks).toString('utf8');
          let parsed: unknown = text;
          try {
            parsed = text === '' ? undefined : JSON.parse(text);
          } catch {
            // not JSON: kept as text
          }
          resolve({ status: res.statusCode!, headers: res.headers, body: parsed });
        });
      },
    );
    req.on('error', reject);
    req.end(body);
  });
}

/** The SDKs' signature: HMAC-SHA1 over the sorted parameters as `k=v` joined by "&", values unencoded. */
function sign(parameters: [string, string][], secret: string): string {
  const text = [...parameters]
    .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))
    .map(([k, v]) => `${k}=${v}`)
    .join('&');
  return createHmac('sha1', secret).update(text).digest('hex');
}

const form = (parameters: [string, string][]): string => parameters.map(([k, v]) => `${encodeURIComponent(k)}=${encodeURIComponent(v)}`).join('&');

/** A negative 32-bit nonce, as the Android SDK's Random.nextInt() gives them. */
const androidNonce = () => String(-Math.floor(1 + Math.random() * 2_000_000_000));
const now = () => String(Math.floor(Date.now() / 1000));

const ANDROID: [string, string][] = [
  ['QuickBlox-REST-API-Version', '0.1.1'],
  ['QB-SDK', 'Android 3.9.13'],
];

/** Android 3.9.13's session request: application_id, auth_key, nonce, timestamp, user[email], user[login], user[password], signature; form-encoded. */
function androidSession(user: { login: string; email: string; password: string }, secret = t.authSecret): string {
  const parameters: [string, string][] = [
    ['application_id', String(t.applicationId)],
    ['auth_key', t.authKey],
    ['nonce', androidNonce()],
    ['timestamp', now()],
    ['user[email]', user.email],
    ['user[login]', user.login],
    ['user[password]', user.password],
  ];
  return form([...parameters, ['signature', sign(parameters, secret)]]);
}

const FORM: [string, string] = ['Content-Type', 'application/x-www-form-urlencoded; charset=UTF-8'];

describe('sessions as the Android SDK opens them', () => {
  test('login and email together, a leftover QB-Token, a base URL ending in "/": 201 and a user session that does every operation', async () => {
    const res = await send(
      'POST',
      '//session.json',
      // The JWT-looking token QuickBlox had issued before, sent again with the new request.
      [...ANDROID, ['QB-Token', 'eyJhbGciOiJIUzUxMiJ9.eyJhcHBsaWNhdGlvbl9pZCI6MX0.c2lnbmF0dXJl'], FORM],
      androidSession({ login: 'owner', email: 'owner@example.com', password: 'password123' }),
    );
    expect([res.status, res.body.session?.user_id]).toEqual([201, t.owner.id]);
    expect(res.headers['qb-token-expirationdate']).toEqual(expect.any(String));
    const token: string = res.body.session.token;
    const as: [string, string][] = [...ANDROID, ['QB-Token', token]];

    // Every operation, with the same headers and the same doubled slash.
    const session = await send('GET', '//session.json', as);
    expect([session.status, session.body.session.user_id]).toEqual([200, t.owner.id]);
    const user = await send('GET', '//users/external/102.json', as);
    expect([user.status, user.body.user.id]).toEqual([200, t.member.id]);
    const upload = await send(
      'POST',
      '//address_book.json',
      [...as, ['Content-Type', 'application/json; charset=UTF-8']],
      JSON.stringify({ contacts: [{ name: 'Member', phone: '+1 (000) 000-0102' }], udid: 'android-1' }),
    );
    expect([upload.status, upload.body]).toEqual([200, { created: 1, updated: 0, deleted: 0 }]);
    const registered = await send('GET', '//address_book/registered_users.json?udid=android-1&compact=1', as);
    expect([registered.status, registered.body]).toEqual([200, { items: [{ user: { id: t.member.id, phone: '+10000000102' } }] }]);
    const book = await send('GET', '//address_book.json?udid=android-1', as);
    expect([book.status, book.body]).toEqual([200, [{ name: 'Member', phone: '+1 (000) 000-0102' }]]);
    const deleted = await send('DELETE', `//chat/Message/${t.messageIds[0]}.json`, as);
    expect([deleted.status, deleted.body.SuccessfullyDeleted?.ids]).toEqual([200, [t.messageIds[0]]]);
    const ended = await send('DELETE', '//session.json', as);
    expect(ended.status).toBe(200);
    expect((await send('GET', '/session.json', as)).status).toBe(401);
  });

  test('an email beside the login that is another user’s is refused as a wrong password, and so is one of no one', async () => {
    for (const email of ['member@example.com', 'nobody@example.com']) {
      const res = await send('POST', '/session.json', [...ANDROID, FORM], androidSession({ login: 'owner', email, password: 'password123' }));
      expect([res.status, res.body]).toEqual([401, { errors: { base: ['Unauthorized'] } }]);
    }
  });

  test('a signature that leaves user[email] out is refused: both are inside the signature', async () => {
    const parameters: [string, string][] = [
      ['application_id', String(t.applicationId)],
      ['auth_key', t.authKey],
      ['nonce', androidNonce()],
      ['timestamp', now()],
      ['user[login]', 'owner'],
      ['user[password]', 'password123'],
    ];
    const body = form([...parameters.slice(0, 4), ['user[email]', 'owner@example.com'], ...parameters.slice(4), ['signature', sign(parameters, t.authSecret)]]);
    const res = await send('POST', '/session.json', [...ANDROID, FORM], body);
    expect([res.status, res.body]).toEqual([422, { errors: { base: ['Unexpected signature'] } }]);
  });

  test('POST /login.json with login and email (Android 3.3.1) on an application session logs the user in', async () => {
    const parameters: [string, string][] = [
      ['application_id', String(t.applicationId)],
      ['auth_key', t.authKey],
      ['nonce', androidNonce()],
      ['timestamp', now()],
    ];
    const app = await send('POST', '//session.json', [...ANDROID, FORM], form([...parameters, ['signature', sign(parameters, t.authSecret)]]));
    expect([app.status, app.body.session.user_id]).toEqual([201, 0]);
    const login = await send(
      'POST',
      '//login.json',
      [...ANDROID, ['QB-Token', app.body.session.token], FORM],
      form([
        ['login', 'member'],
        ['email', 'member@example.com'],
        ['password', 'password123'],
      ]),
    );
    // 200 here, 202 at QuickBlox (README: differences from QuickBlox): the SDKs take any 2xx.
    expect([login.status, login.body.user.id]).toEqual([200, t.member.id]);
  });
});

describe('sessions as the iOS SDK opens them', () => {
  const IOS: [string, string][] = [
    ['Content-Type', 'application/json'],
    ['QB-OS', 'iOS 9.2'],
    ['QB-SDK', 'iOS 2.6.6'],
    ['QuickBlox-REST-API-Version', '0.1.1'],
  ];

  test('a JSON body with numbers (application_id, nonce, timestamp) and a user: 201, and the book as the phone holds it', async () => {
    const nonce = Math.floor(Math.random() * 1_000_000);
    const timestamp = Math.floor(Date.now() / 1000);
    const user = { login: 'outsider', password: 'password123' };
    const signature = sign(
      [
        ['application_id', String(t.applicationId)],
        ['auth_key', t.authKey],
        ['nonce', String(nonce)],
        ['timestamp', String(timestamp)],
        ['user[login]', user.login],
        ['user[password]', user.password],
      ],
      t.authSecret,
    );
    const res = await send(
      'POST',
      '/session.json',
      IOS,
      JSON.stringify({ application_id: t.applicationId, auth_key: t.authKey, nonce, signature, timestamp, user }),
    );
    expect([res.status, res.body.session?.user_id]).toEqual([201, t.outsider.id]);
    const as: [string, string][] = [...IOS, ['QB-Token', res.body.session.token]];
    // Contacts as an iPhone's address book holds them: national and formatted numbers.
    const upload = await send(
      'POST',
      '/address_book.json',
      as,
      JSON.stringify({
        contacts: [
          { name: 'Owner', phone: '+1 000-000-0101' },
          { name: 'Member', phone: '+1 000.000.0102' },
          { name: 'Short', phone: '555-0100' },
        ],
        force: 1,
      }),
    );
    expect([upload.status, upload.body]).toEqual([
      200,
      { created: 2, updated: 0, deleted: 0, rejected: { '2': [expect.stringMatching(/^phone must be 10 to 15 digits/)] } },
    ]);
    const full = await send('GET', '/address_book/registered_users.json', as);
    expect(full.body.items.map((i: { user: { id: number; phone: string } }) => [i.user.id, i.user.phone])).toEqual([
      [t.owner.id, '+10000000101'],
      [t.member.id, '+10000000102'],
    ]);
  });
});
