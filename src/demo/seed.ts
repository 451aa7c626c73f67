// The demo data set of a fresh embedded database, and the ready-to-paste
// commands printed at start. Secrets are stored hashed, so each start mints a
// fresh session for the demo user and a fresh API key for the demo
// application: the printed commands always carry working credentials.
import type { Provisioning } from '../provisioning';
import type { Services } from '../services';
import { SecretsKeyMismatch } from '../services/secrets';

export const DEMO_APP_NAME = 'Demo application';

const USERS = [
  { login: 'alice', fullName: 'Alice Example', phone: '+15550000001', externalUserId: 1001, email: 'alice@example.com' },
  { login: 'bob', fullName: 'Bob Example', phone: '+15550000002', externalUserId: 1002, email: 'bob@example.com' },
  { login: 'carol', fullName: 'Carol Example', phone: '+15550000003', externalUserId: 1003, email: 'carol@example.com' },
  { login: 'dave', fullName: 'Dave Example', phone: '+15550000004', externalUserId: 1004, email: 'dave@example.com' },
] as const;

export interface DemoCredentials {
  applicationId: number;
  apiKey: string;
  /** What an SDK app signs session requests with. */
  authKey: string;
  authSecret: string;
  userToken: string;
  /** alice: owner of the demo dialog. */
  userId: number;
  /** bob: an occupant who does not own the dialog. */
  otherUserId: number;
  messageIds: string[];
  externalUserId: number;
  seeded: boolean;
}

export async function prepareDemo(provisioning: Provisioning, services: Services): Promise<DemoCredentials> {
  let appId = await provisioning.applications.idByName(DEMO_APP_NAME);
  const seeded = appId === null;
  if (appId === null) appId = await seedDemo(provisioning, services);
  const alice = await demoUser(provisioning, appId, 'alice');
  const bob = await demoUser(provisioning, appId, 'bob');
  const dialogId = await provisioning.chat.dialogOwnedBy(appId, alice.id);
  if (dialogId === null) throw new Error("the demo application has no dialog of alice's");
  // Earlier runs may have deleted the demo messages: keep three to delete.
  let history = await services.chat.history(dialogId, alice.id);
  for (let i = history.length; i < 3; i++) {
    await provisioning.chat.createMessage({ dialogId, senderId: bob.id, body: `Demo message ${i + 1}` });
  }
  history = await services.chat.history(dialogId, alice.id);

  const { apiKey } = await provisioning.applications.rotateApiKey(appId);
  const { token } = await provisioning.applications.createSession(appId, alice.id);
  // A demo application seeded before applications had auth credentials gets them now.
  // A secret sealed under another key (the key file was deleted, or another
  // process with its own key made the demo application) is re-issued: the demo
  // prints working credentials whatever happened to the old ones.
  const auth =
    (await provisioning.applications.authCredentials(appId).catch((error: unknown) => {
      if (error instanceof SecretsKeyMismatch) return null;
      throw error;
    })) ?? (await provisioning.applications.rotateAuth(appId));
  return {
    applicationId: appId,
    apiKey,
    ...auth,
    userToken: token,
    userId: alice.id,
    otherUserId: bob.id,
    messageIds: history.slice(-3).map((m) => m.id),
    externalUserId: 1002,
    seeded,
  };
}

/** The demo application, its users, a dialog with messages and alice's address book; returns the application's id. */
async function seedDemo(provisioning: Provisioning, services: Services): Promise<number> {
  const appId = (await provisioning.applications.create(DEMO_APP_NAME)).application.id;
  const users = [];
  for (const user of USERS) {
    users.push(await provisioning.users.create({ applicationId: appId, password: 'demo-password', ...user }));
  }
  const [alice, bob, carol] = users as [(typeof users)[0], (typeof users)[0], (typeof users)[0]];
  const dialog = await provisioning.chat.createDialog({
    applicationId: appId,
    ownerId: alice.id,
    occupantIds: [bob.id, carol.id],
    type: 2,
  });
  for (const [sender, body] of [
    [alice, 'Hi both!'],
    [bob, 'Hello Alice'],
    [carol, 'Hey there'],
  ] as const) {
    await provisioning.chat.createMessage({ dialogId: dialog.id, senderId: sender.id, body });
  }
  const aliceCaller = { kind: 'user', applicationId: appId, userId: alice.id, via: 'session' } as const;
  await services.addressBook.upload(
    aliceCaller,
    [
      { name: 'Bob', phone: '+15550000002' },
      { name: 'Carol', phone: '+15550000003' },
      { name: 'Not registered', phone: '+15559999999' },
    ],
    null,
    false,
  );
  return appId;
}

async function demoUser(provisioning: Provisioning, applicationId: number, login: string) {
  const user = await provisioning.users.byLogin(applicationId, login);
  if (user === null) throw new Error(`the demo application has no user ${login}`);
  return user;
}

export function demoInstructions(base: string, demo: DemoCredentials): string {
  const [m1, m2, m3] = demo.messageIds;
  const token = `-H 'SVC-Token: ${demo.userToken}'`;
  const apiKey = `-H 'Authorization: ApiKey ${demo.apiKey}'`;
  const gql = (query: string) => `curl -s ${base}/graphql -H 'Content-Type: application/json' ${token} \\\n     -d '${JSON.stringify({ query })}'`;
  return [
    `Demo data ${demo.seeded ? 'seeded' : 'present'}: application ${demo.applicationId}, user alice (id ${demo.userId}) owns a dialog with bob and carol.`,
    '',
    '# REST: user by external id',
    `curl -s ${base}/users/external/${demo.externalUserId}.json ${token}`,
    `curl -s ${base}/users/external/${demo.externalUserId}.json ${apiKey}`,
    "# REST: registered users of alice's address book (full, then compact)",
    `curl -s '${base}/address_book/registered_users.json' ${token}`,
    `curl -s '${base}/address_book/registered_users.json?compact=1' ${token}`,
    '# REST: delete a message for alice only, then one for everyone (alice owns the dialog)',
    `curl -s -X DELETE ${base}/chat/Message/${m1},ffffffffffffffffffffffff.json ${token}`,
    `curl -s -X DELETE ${base}/chat/Message/${m2}.json ${token} -H 'Content-Type: application/json' -d '{"force":1}'`,
    '# REST: delete for bob only, through the API key',
    `curl -s -X DELETE ${base}/chat/Message/${m3}.json ${apiKey} -H 'On-Behalf-Of: ${demo.otherUserId}'`,
    '',
    '# GraphQL',
    gql(`{ userByExternalId(externalUserId: ${demo.externalUserId}) { id fullName phone externalUserId } }`),
    gql('{ registeredUsers { id fullName phone } }'),
    gql(`mutation { deleteMessages(ids: ["${m3}"]) { successfullyDeleted notFound } }`),
    '',
    '# A session as QuickBlox SDK apps create one: signed with the auth secret (HMAC-SHA1 of the sorted parameters)',
    `ts=$(date +%s); nonce=$RANDOM; sig=$(printf 'application_id=${demo.applicationId}&auth_key=${demo.authKey}&nonce=%s&timestamp=%s&user[login]=alice&user[password]=demo-password' "$nonce" "$ts" | openssl dgst -sha1 -hmac '${demo.authSecret}' | awk '{print $NF}')`,
    `curl -s ${base}/session.json -d application_id=${demo.applicationId} -d auth_key=${demo.authKey} -d timestamp=$ts -d nonce=$nonce -d signature=$sig -d 'user[login]=alice' -d 'user[password]=demo-password'`,
    '# QuickBlox JavaScript SDK (it always calls https://: put TLS in front, or set TLS_CERT_FILE/TLS_KEY_FILE; see the README)',
    `QB.init(${demo.applicationId}, '${demo.authKey}', '${demo.authSecret}', { endpoints: { api: '<host:port>' } })`,
  ].join('\n');
}
