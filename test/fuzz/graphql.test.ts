// Property-based fuzzing of /graphql: random documents built from the schema's
// real fields (random arguments, variables of the wrong types, aliases,
// directives, fragments, deep selections, huge strings), random garbage, the
// documented limits' neighbourhoods (depth, aliases, directives, tokens),
// batched arrays, wrong content types, GET with query strings, every method,
// valid and invalid credentials of two applications. For EVERY response: a
// documented status (README: 200 for results and operation errors, 400 for
// malformed GraphQL requests as Apollo Server answers them, 413/415 for
// bodies, 404 for a method /graphql does not serve), a GraphQL-shaped JSON
// body whose error codes are ones a client may cause, no stack trace, a
// bounded time, the process still healthy, no user of another application,
// and the database unchanged unless a mutation succeeded (and then only its
// own tables).
//
// The session operations are among them: createSession with inputs signed
// as QuickBlox SDKs sign them, right and wrong (test/support/fuzz/
// session-requests.ts sessionSpecArbitrary), as literals and as variables (the latter answered
// exactly as README documents), session, endSession, login and logout (on a
// disposable session of the same kind in place of a tenant's shared token),
// and addressBook.
import fc from 'fast-check';
import { type DocumentNode, Kind, parse, type SelectionSetNode } from 'graphql';
import { changedTables } from '../support/digest';
import { LONG, recordFigures } from '../support/figures';
import {
  arb,
  check,
  checkGraphQLErrors,
  checkListError,
  credentialArbitraries,
  type Credentials,
  assertRequests,
  DigestTracker,
  disposableSessions,
  type DisposableSessions,
  excerpt,
  expectHealthy,
  fitHeaders,
  GRAPHQL_STATUSES,
  MAX_RESPONSE_MS,
  Outcomes,
  type RawRequest,
  type RawResponse,
  send,
  sessionInput,
  type SessionRequestParts,
  sessionRequestParts,
  stackTraceIn,
  SERVICE_START_TIMEOUT_MS,
} from '../support/fuzz';
import { seedTenant, type Tenant } from '../support/seed';
import { useService } from '../support/service';
import { type AnyOp, type Doc, join, type SessionOp } from './graphql/documents';
import { documentArbitraries } from './graphql/operations';

let port: number;
let tenants: [Tenant, Tenant];
let useDisposableSessions: DisposableSessions;

// Per address unbounded (every request comes from one); per login small and short, so 429 comes and goes.
const service = useService(
  { sessions: { loginAttempts: { perLogin: 4, perAddress: 1_000_000, windowMs: 3_000 } }, database: 'isolated' },
  { timeoutMs: SERVICE_START_TIMEOUT_MS },
);
beforeAll(async () => {
  port = Number(new URL(service.baseUrl).port);
  tenants = [await seedTenant(service.app.provisioning), await seedTenant(service.app.provisioning)];
  useDisposableSessions = disposableSessions(service, tenants);
}, SERVICE_START_TIMEOUT_MS);

// ---------------------------------------------------------------------------
// Requests.

type Transport =
  | { kind: 'post-json'; payload: 'object' | 'batch' | 'scalar' | 'invalid' | 'deep' | 'large'; contentType: string; extra: Record<string, unknown> }
  | { kind: 'post-form'; preflight: boolean }
  | { kind: 'post-other'; contentType: string | undefined }
  | { kind: 'get'; guard: 'preflight' | 'content-type' | 'none'; variablesText: string | undefined }
  | { kind: 'method'; method: 'PUT' | 'DELETE' | 'PATCH' };

interface GraphQLRequest {
  doc: Doc;
  /** The operation type the generator meant; undefined for garbage. */
  kind: 'query' | 'mutation' | undefined;
  variables: unknown;
  operationName: unknown;
  transport: Transport;
  credentials: Credentials;
  accept: string | undefined;
  /** A createSession signed when sent (SessionOp). */
  session?: Required<SessionOp>;
}

function requestArbitrary(ts: [Tenant, Tenant]): fc.Arbitrary<GraphQLRequest> {
  const docs = documentArbitraries(ts);
  const { credentials } = credentialArbitraries(ts);
  const variables = fc.oneof(
    { weight: 4, arbitrary: fc.constant(undefined) },
    { weight: 4, arbitrary: fc.record({ v: arb.jsonJunk(), b: fc.oneof(fc.boolean(), arb.jsonJunk()) }, { requiredKeys: [] }) },
    {
      weight: 1,
      arbitrary: fc.record({
        v: fc.constantFrom([ts[0].messageIds[0]], 101, 'phone-1', [{ name: 'x', phone: '+10000000102' }], { name: 'x', phone: '+10000000102' }),
      }),
    },
    { weight: 1, arbitrary: arb.jsonJunk() },
  );
  const operationName = fc.oneof(
    { weight: 6, arbitrary: fc.constant(undefined) },
    { weight: 1, arbitrary: fc.constantFrom('Op', 'Other', '', null, 5, ['Op']) },
  );
  // Mostly JSON; the others answer 415 (documented) and are a small share.
  const jsonContentType = fc.oneof(
    { weight: 12, arbitrary: fc.constantFrom('application/json', 'application/json; charset=utf-8') },
    { weight: 1, arbitrary: fc.constantFrom('application/graphql-response+json', 'APPLICATION/JSON', 'application/json; charset=latin1') },
  );
  const transport: fc.Arbitrary<Transport> = fc.oneof(
    {
      weight: 12,
      arbitrary: fc.record({
        kind: fc.constant('post-json' as const),
        payload: fc.oneof(
          { weight: 12, arbitrary: fc.constant('object' as const) },
          { weight: 1, arbitrary: fc.constantFrom('batch' as const, 'scalar' as const, 'invalid' as const, 'deep' as const, 'large' as const) },
        ),
        contentType: jsonContentType,
        extra: fc.oneof(
          { weight: 6, arbitrary: fc.constant({}) },
          // persistedQuery extensions: the explicit test below and test/graphql/trusted-documents.test.ts.
          {
            weight: 1,
            arbitrary: fc.constantFrom<Record<string, unknown>>({ extensions: {} }, { extensions: 5 }, { extensions: { x: 1 } }, { foo: 1 }, { query: null }),
          },
        ),
      }),
    },
    { weight: 1, arbitrary: fc.record({ kind: fc.constant('post-form' as const), preflight: fc.boolean() }) },
    {
      weight: 1,
      arbitrary: fc.record({
        kind: fc.constant('post-other' as const),
        contentType: fc.constantFrom(undefined, 'text/plain', 'application/graphql', 'multipart/form-data; boundary=x', 'application/xml', ''),
      }),
    },
    {
      weight: 3,
      arbitrary: fc.record({
        kind: fc.constant('get' as const),
        guard: fc.constantFrom('preflight' as const, 'preflight' as const, 'content-type' as const, 'none' as const),
        variablesText: fc.option(fc.oneof(fc.constantFrom('{"v":101}', '{', 'null', '[]', '{"v":"x"}'), fc.json({ maxDepth: 2 })), { nil: undefined }),
      }),
    },
    // OPTIONS and HEAD are left out: a known bug (405), pinned below.
    { weight: 1, arbitrary: fc.record({ kind: fc.constant('method' as const), method: fc.constantFrom('PUT' as const, 'DELETE' as const, 'PATCH' as const) }) },
  );
  // Only JSON-accepting values: an Accept without JSON answers 406, a known bug pinned below.
  const accept = fc.constantFrom(
    undefined,
    undefined,
    'application/json',
    'application/graphql-response+json',
    '*/*',
    'application/*',
    'application/json, text/html;q=0.5',
    '',
  );
  return fc
    .record({
      // Each assertion alone is redundant (ESLint says so); together they make fc.oneof's result the union.
      /* eslint-disable @typescript-eslint/no-unnecessary-type-assertion */
      op: fc.oneof(
        { weight: 5, arbitrary: docs.query as fc.Arbitrary<AnyOp> },
        { weight: 4, arbitrary: docs.mutation as fc.Arbitrary<AnyOp> },
        { weight: 4, arbitrary: docs.withVariables as fc.Arbitrary<AnyOp> },
        { weight: 2, arbitrary: docs.limits as fc.Arbitrary<AnyOp> },
        { weight: 2, arbitrary: docs.garbage as fc.Arbitrary<AnyOp> },
      ),
      /* eslint-enable @typescript-eslint/no-unnecessary-type-assertion */
      variables,
      operationName,
      transport,
      credentials,
      accept,
    })
    .map(({ op, transport: t, ...rest }): GraphQLRequest => {
      // A GET or HEAD never carries a mutation (405, known bug): such a draw is sent as a POST.
      const mayMutate = op.kind === 'mutation' || (op.kind === undefined && /mutation/i.test(join(op.doc)));
      const mutationOverGet = mayMutate && t.kind === 'get';
      const safe: Transport = mutationOverGet ? { kind: 'post-json', payload: 'object', contentType: 'application/json', extra: {} } : t;
      return {
        doc: op.doc,
        kind: op.kind,
        transport: safe,
        ...rest,
        ...(op.variables === undefined ? {} : { variables: op.variables }),
        ...(op.spec === undefined ? {} : { session: { spec: op.spec, numbers: op.numbers ?? false } }),
      };
    });
}

function toRequest(r: GraphQLRequest): RawRequest {
  // Paths of GET requests stay under 40,000 characters (below): room left for headers.
  const headers = fitHeaders(r.credentials.headers, 40_000);
  if (r.accept !== undefined) headers.Accept = r.accept;
  const query = join(r.doc);
  const payload: Record<string, unknown> = { query };
  if (r.variables !== undefined) payload.variables = r.variables;
  if (r.operationName !== undefined) payload.operationName = r.operationName;
  const t = r.transport;
  switch (t.kind) {
    case 'post-json': {
      Object.assign(payload, t.extra);
      const body = {
        object: () => JSON.stringify(payload),
        batch: () => JSON.stringify([payload, payload]),
        scalar: () => JSON.stringify(query),
        invalid: () => JSON.stringify(payload).slice(0, -1),
        // Everything the other payloads send (operationName included: the
        // plan reads it), with variables nested 20,000 deep in place of the
        // generated ones.
        deep: () => `${JSON.stringify({ ...payload, variables: undefined }).slice(0, -1)},"variables":${'{"v":'.repeat(20_000)}1${'}'.repeat(20_000)}}`,
        large: () => JSON.stringify({ ...payload, pad: 'x'.repeat(2 * 1024 * 1024 - query.length) }),
      }[t.payload]();
      return { method: 'POST', path: '/graphql', headers: { ...headers, 'Content-Type': t.contentType }, body };
    }
    case 'post-form': {
      const form = new URLSearchParams({ query });
      // eslint-disable-next-line @typescript-eslint/no-base-to-string -- a fuzzed operationName can be any value: the form carries its String()
      if (r.operationName !== undefined) form.set('operationName', String(r.operationName));
      return {
        method: 'POST',
        path: '/graphql',
        headers: { ...headers, 'Content-Type': 'application/x-www-form-urlencoded', ...(t.preflight ? { 'Apollo-Require-Preflight': '1' } : {}) },
        body: form.toString(),
      };
    }
    case 'post-other':
      return {
        method: 'POST',
        path: '/graphql',
        headers: { ...headers, ...(t.contentType === undefined ? {} : { 'Content-Type': t.contentType }) },
        body: query,
      };
    case 'get': {
      const params = new URLSearchParams({ query });
      if (t.variablesText !== undefined) params.set('variables', t.variablesText);
      if (typeof r.operationName === 'string') params.set('operationName', r.operationName);
      const guard: Record<string, string> =
        t.guard === 'preflight' ? { 'Apollo-Require-Preflight': 'true' } : t.guard === 'content-type' ? { 'Content-Type': 'application/json' } : {};
      // Queries longer than the request line allows are sent as POST (the 431 limit is the REST fuzz's).
      const path = `/graphql?${params.toString()}`;
      if (path.length > 40_000) return toRequest({ ...r, transport: { kind: 'post-json', payload: 'object', contentType: 'application/json', extra: {} } });
      return { method: 'GET', path, headers: { ...headers, ...guard } };
    }
    case 'method':
      return { method: t.method, path: '/graphql', headers: { ...headers, 'Content-Type': 'application/json' }, body: JSON.stringify(payload) };
  }
}

// ---------------------------------------------------------------------------
// Reading the document back: which operation ran, and where user ids are.

/** Tables each writing root field may write (bookkeeping columns are outside the digest). */
const WRITES: Record<string, readonly string[]> = {
  // live_events: the triggers' record of each delete (issue 33), written in the same transaction.
  deleteMessages: ['messages', 'message_hides', 'live_events'],
  messagesDelete: ['messages', 'message_hides', 'live_events'],
  messageSend: ['messages', 'live_events'],
  uploadAddressBook: ['contacts', 'address_book_matches'],
  createSession: ['sessions', 'session_nonces'],
  endSession: ['sessions'],
  login: ['sessions'],
  logout: ['sessions'],
};

/** Root fields that end or change the request's own session: sent with a disposable one. */
const CHANGES_SESSION = new Set(['endSession', 'login', 'logout']);

interface Plan {
  kind: 'query' | 'mutation' | 'subscription' | undefined;
  /** The root fields that write (WRITES), by response key. */
  writing: { key: string; field: string }[];
  /** Response keys of root fields returning users, with the response keys of their `id` selections. */
  userFields: { key: string; idKeys: string[] }[];
}

function idKeysOf(selectionSet: SelectionSetNode | undefined): string[] {
  const keys: string[] = [];
  for (const selection of selectionSet?.selections ?? []) {
    if (selection.kind === Kind.FIELD && selection.name.value === 'id') keys.push(selection.alias?.value ?? 'id');
    if (selection.kind === Kind.INLINE_FRAGMENT) keys.push(...idKeysOf(selection.selectionSet));
  }
  return keys;
}

function planOf(source: string, operationName: unknown): Plan {
  let document: DocumentNode;
  try {
    document = parse(source, { maxTokens: 10_000 });
  } catch {
    return { kind: undefined, writing: [], userFields: [] };
  }
  const operations = document.definitions.filter((d) => d.kind === Kind.OPERATION_DEFINITION);
  const operation = typeof operationName === 'string' && operationName !== '' ? operations.find((o) => o.name?.value === operationName) : operations[0];
  if (!operation) return { kind: undefined, writing: [], userFields: [] };
  const writing = operation.selectionSet.selections.flatMap((s) =>
    s.kind === Kind.FIELD && s.name.value in WRITES ? [{ key: s.alias?.value ?? s.name.value, field: s.name.value }] : [],
  );
  const userFields = operation.selectionSet.selections.flatMap((s) =>
    s.kind === Kind.FIELD && ['userByExternalId', 'registeredUsers', 'login'].includes(s.name.value)
      ? [{ key: s.alias?.value ?? s.name.value, idKeys: idKeysOf(s.selectionSet) }]
      : [],
  );
  return { kind: operation.operation, writing, userFields };
}

// ---------------------------------------------------------------------------
// The property.

const outcomes = new Outcomes();
const codes: Record<string, number> = {};
let failuresChecked = 0;
let mutationsApplied = 0;

const isObject = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);

/** `<application>:<timestamp>:<nonce>` of the sessions createSession made: the same pair again is a replay. */
const usedPairs = new Set<string>();
/** Answers to signed createSession variables, by what they were. */
const sessionAnswers: Record<string, number> = {};

/**
 * A createSession of signed variables got README's answer: its expected one;
 * NONCE_REUSED where the pair was used already (`reused`, decided before it
 * was sent); 429 in place of a password check while that login is over its
 * failed-password budget. The session made is the one asked for.
 */
function checkSessionAnswer(parts: SessionRequestParts, body: { data?: any; errors?: { extensions?: { code?: string } }[] }, reused: boolean): void {
  const created = body.data?.createSession;
  const answer = created ? 'created' : String(body.errors?.[0]?.extensions?.code);
  const expected = reused ? 'NONCE_REUSED' : parts.expected;
  const checksPassword = Object.keys(parts.parameters).some((k) => k.startsWith('user[')) && ['created', 'UNAUTHENTICATED', 'NONCE_REUSED'].includes(expected);
  sessionAnswers[answer] = (sessionAnswers[answer] ?? 0) + 1;
  check(answer === expected || (checksPassword && answer === 'TOO_MANY_REQUESTS'), `createSession expected to be answered ${expected} was answered ${answer}`);
  if (!created) return;
  const { timestamp, nonce } = parts.parameters as { timestamp: string; nonce: string };
  check(
    created.applicationId === parts.applicationId &&
      created.userId === parts.userId &&
      created.nonce === nonce &&
      Date.parse(created.signedAt) / 1000 === Number(timestamp),
    `not the session asked for: ${excerpt(created)}`,
  );
}

/**
 * Whether an answer holds a session createSession made (a batch: in any of
 * its results). Read before any check, whatever the transport: a request that
 * created a session has used its pair even when a check then fails (the case
 * fast-check shrinks, whose shrunk copies are sent within the same second) or
 * when its transport is not the plain POST whose answer is checked.
 */
function madeSession(json: unknown): boolean {
  return (Array.isArray(json) ? json : [json]).some((result) => isObject(result) && isObject(result.data) && isObject(result.data.createSession));
}

async function property(r: GraphQLRequest, tracker: DigestTracker): Promise<void> {
  const parts = r.session && sessionRequestParts(r.session.spec, tenants);
  const req = toRequest(parts ? { ...r, variables: { i: sessionInput(parts.parameters, r.session!.numbers) } } : r);
  // What will run, read from the document as sent.
  const source = req.method === 'GET' || req.method === 'HEAD' ? (new URLSearchParams(req.path.split('?')[1]).get('query') ?? '') : join(r.doc);
  const plan = planOf(source, r.operationName);
  if (plan.kind === 'mutation' && plan.writing.some((w) => CHANGES_SESSION.has(w.field))) await useDisposableSessions(req, tracker);
  const reused = parts !== undefined && parts.expected === 'created' && usedPairs.has(parts.pair);
  const res: RawResponse = await send(port, req);
  if (parts && madeSession(res.json)) usedPairs.add(parts.pair);
  const { diff, before, after } = await tracker.advance();
  const kind = req.method === 'POST' ? `POST ${r.transport.kind === 'post-json' ? r.transport.payload : r.transport.kind}` : req.method;
  outcomes.record(kind, res.status, res.ms);
  const where = `${req.method} ${excerpt(req.path, 100)} ${excerpt(typeof req.body === 'string' ? req.body : '', 200)} → ${res.status} ${excerpt(res.text, 400)}`;

  check((GRAPHQL_STATUSES as readonly number[]).includes(res.status), `undocumented status: ${where}`);
  check(res.ms < MAX_RESPONSE_MS, `took ${Math.round(res.ms)} ms: ${where}`);
  const trace = stackTraceIn(res.text);
  check(trace === undefined, `stack trace text (${trace}) in: ${where}`);

  if (req.method === 'HEAD') {
    check(res.text === '', `a HEAD answer has no body: ${where}`);
  } else {
    check(res.json !== undefined && /^application\/(?:graphql-response\+)?json/.test(res.headers['content-type'] ?? ''), `not a JSON answer: ${where}`);
    const body = res.json as Record<string, unknown>;
    if (res.status === 404) {
      // README: unknown path or method, the REST row (its GraphQL column is "—").
      check(r.transport.kind === 'method', `404 for a method /graphql serves: ${where}`);
      checkListError(404, body);
    } else {
      try {
        if (res.status === 200 && !('errors' in body)) {
          check(isObject(body) && Object.keys(body).join() === 'data' && isObject(body.data), `a result is {data}: ${where}`);
        } else {
          // Operation errors (200) may come with data; request errors (400, 413, 415) do not.
          checkGraphQLErrors(body, res.status === 200);
          if (res.status === 200) check('data' in body, `a 200 with errors also has data: ${where}`);
        }
      } catch (error) {
        throw new Error(`${(error as Error).message}\n  in: ${where}`, { cause: error });
      }
      for (const error of (Array.isArray(body.errors) ? body.errors : []) as { extensions?: Record<string, unknown> }[]) {
        const code = String(error.extensions?.code);
        codes[code] = (codes[code] ?? 0) + 1;
        check(error.extensions?.stacktrace === undefined && error.extensions?.exception === undefined, `error extensions carry a stack: ${where}`);
      }
      if (res.status === 413) check((body.errors as { extensions: { code: string } }[])[0]?.extensions.code === 'PAYLOAD_TOO_LARGE', `413 code: ${where}`);
      if (res.status === 415) check((body.errors as { extensions: { code: string } }[])[0]?.extensions.code === 'UNSUPPORTED_MEDIA_TYPE', `415 code: ${where}`);
    }
  }

  const data = isObject(res.json) && isObject(res.json.data) ? res.json.data : undefined;

  // No user of another application, wherever the document put user ids.
  if (data) {
    const caller = r.credentials.tenant === undefined ? undefined : tenants[r.credentials.tenant];
    const own = new Set(caller ? [caller.owner.id, caller.member.id, caller.outsider.id] : []);
    for (const { key, idKeys } of plan.userFields) {
      const value = data[key];
      for (const user of (Array.isArray(value) ? value : value ? [value] : []) as Record<string, unknown>[]) {
        for (const idKey of idKeys) {
          if (typeof user[idKey] === 'number')
            check(own.has(user[idKey]), `user ${user[idKey]} is not of the caller's application (${r.credentials.label}): ${where}`);
        }
      }
    }
  }

  // The database: unchanged unless a writing root field of a mutation ran
  // without error. Not "unless data is not null": the mutation fields are
  // non-null, so one failing field nulls the whole data, also when a field
  // before it has written (a known bug, pinned below).
  const errored = new Set(
    ((res.json as { errors?: { path?: unknown[] }[] } | undefined)?.errors ?? []).map((e) => (Array.isArray(e.path) ? String(e.path[0]) : '')),
  );
  const applied = res.status === 200 && plan.kind === 'mutation' ? plan.writing.filter((w) => !errored.has(w.key)) : [];
  // The signed variables' answer, where the request is the plain JSON POST that runs it.
  const plainPost =
    r.transport.kind === 'post-json' &&
    r.transport.payload === 'object' &&
    /^application\/json(?:; charset=utf-8)?$/.test(r.transport.contentType) &&
    Object.keys(r.transport.extra).length === 0;
  if (parts && plainPost && r.operationName === undefined) {
    try {
      checkSessionAnswer(parts, res.json as never, reused);
    } catch (error) {
      throw new Error(`${(error as Error).message}\n  in: ${where}`, { cause: error });
    }
  }
  if (applied.length > 0) {
    mutationsApplied++;
    const changed = changedTables(before, after);
    const allowed = new Set(applied.flatMap((w) => WRITES[w.field]!));
    check(
      changed.every((t) => allowed.has(t)),
      `a mutation of ${applied.map((w) => w.field).join(', ')} wrote ${changed.join(', ')}: ${where}`,
    );
  } else {
    if (res.status >= 400 || (res.json as { errors?: unknown })?.errors) failuresChecked++;
    check(diff === '', `the database changed (${diff}) for a request that ran no mutation: ${where}`);
  }
  await expectHealthy(port);
}

// Default: ~10 s of requests on an idle machine (embedded database; two to
// three times that when the CPUs are shared); RELIABILITY_LONG=1 runs three times as many.
const RUNS = 1_500;

test(
  'every /graphql request gets a documented status and GraphQL-shaped body, fast, with no stack trace, and writes only through mutations',
  async () => {
    const figures = await assertRequests(service.db.pool, outcomes, RUNS, requestArbitrary(tenants), property);
    recordFigures('fuzz-graphql', {
      ...figures,
      byTransport: outcomes.byKind,
      errorCodes: codes,
      sessionVariablesAnswers: sessionAnswers,
      mutationsApplied,
      failedRequestsDigestChecked: failuresChecked,
      // Cases the generator leaves out, each covered by an explicit test below.
      excludedFromGenerator: [
        'GET with a mutation: 405',
        'OPTIONS and HEAD /graphql: 405',
        'Accept without a JSON type: 406',
        'subscriptions (400 GRAPHQL_VALIDATION_FAILED)',
        'persistedQuery extensions (test/graphql/trusted-documents.test.ts)',
        'several mutations with one failing (data null; README: one mutation per request)',
      ],
    });
    for (const status of [200, 400, 404, 413, 415]) expect(outcomes.byStatus[status] ?? 0).toBeGreaterThan(0);
    for (const answer of ['created', 'INVALID_SIGNATURE', 'BAD_USER_INPUT'])
      expect({ answer, reached: (sessionAnswers[answer] ?? 0) > 0 }).toEqual({ answer, reached: true });
  },
  LONG ? 3_600_000 : 600_000,
);

// ---------------------------------------------------------------------------
// Answers of /graphql outside the property's inputs, each documented in the
// README (the GraphQL-over-HTTP statuses 405/406, subscriptions, persisted
// queries, several mutations in one request).

describe('the rarer answers of /graphql, as documented', () => {
  const post = (body: unknown, headers: Record<string, string> = {}) =>
    send(port, {
      method: 'POST',
      path: '/graphql',
      headers: { ...tenants[0].as.owner, 'Content-Type': 'application/json', ...headers },
      body: JSON.stringify(body),
    });

  function expectDocumented(res: RawResponse): void {
    expect(GRAPHQL_STATUSES).toContain(res.status);
    checkGraphQLErrors(res.json, res.status === 200);
  }

  // The mutation results are non-null (DeleteMessagesResult!,
  // AddressBookUploadResult!): one failing field nulls the whole `data`, though
  // an earlier field of the same request committed. README: send one mutation
  // per request.
  test('a failing mutation field nulls data; an earlier one in the same request still committed', async () => {
    // A tenant of its own: the property's owners' books hold whatever its random uploads left.
    const t = await seedTenant(service.app.provisioning);
    const res = await post(
      {
        query: `mutation {
        ok: uploadAddressBook(contacts: [{name: "Member", phone: "+10000000102"}], udid: "partial") { created }
        bad: uploadAddressBook(contacts: [{name: "x", phone: "+10000000103"}], udid: "${'u'.repeat(65)}") { created }
      }`,
      },
      t.as.owner,
    );
    expect(res.status).toBe(200);
    expect(res.json).toMatchObject({ data: null, errors: [expect.objectContaining({ extensions: expect.objectContaining({ code: 'BAD_USER_INPUT' }) })] });
    const again = await post({ query: 'query { registeredUsers(udid: "partial") { phone } }' }, t.as.owner);
    expect(again.json).toMatchObject({ data: { registeredUsers: [{ phone: '+10000000102' }] } });
  });

  // GraphQL-over-HTTP: a mutation over GET is 405.
  test('a mutation sent with GET answers 405', async () => {
    const query = encodeURIComponent('mutation { deleteMessages(ids: ["ffffffffffffffffffffffff"]) { notFound } }');
    const res = await send(port, { method: 'GET', path: `/graphql?query=${query}`, headers: { ...tenants[0].as.owner, 'Apollo-Require-Preflight': '1' } });
    expect(res.status).toBe(405);
  });

  // Apollo owns OPTIONS and HEAD /graphql (Fastify routes HEAD to the GET
  // route) and answers 405 "Apollo Server supports only GET/POST requests."
  // (400 CSRF without a Content-Type); README: an unknown method is 404.
  test.each([
    ['OPTIONS', '/graphql', '{"query":"{ __typename }"}'],
    ['HEAD', `/graphql?query=${encodeURIComponent('{ __typename }')}`, undefined],
  ])('%s %s answers 405', async (method, path, body) => {
    const res = await send(port, { method, path, headers: { 'Content-Type': 'application/json' }, ...(body === undefined ? {} : { body }) });
    expect(res.status).toBe(405);
  });

  // GraphQL-over-HTTP: an Accept header naming no JSON type is 406.
  test('an Accept header without a JSON type answers 406', async () => {
    expect((await post({ query: '{ __typename }' }, { Accept: 'text/html' })).status).toBe(406);
  });

  // Refused in validation (src/app.ts noSubscriptions), not at execution as INTERNAL_SERVER_ERROR.
  test('a subscription operation answers a client-error code, not INTERNAL_SERVER_ERROR', async () => {
    expectDocumented(await post({ query: 'subscription { __typename }' }));
  });

  // A hash beside a query that is not its SHA-256, or another protocol version:
  // BAD_REQUEST (src/graphql/trusted-documents.ts), not Apollo's code-less INTERNAL_SERVER_ERROR.
  test.each([[{ version: 1, sha256Hash: 'a'.repeat(64) }], [{ version: 2, sha256Hash: 'a'.repeat(64) }]])(
    'a persistedQuery extension %j next to a query answers a client-error code',
    async (persistedQuery) => {
      expectDocumented(await post({ query: '{ __typename }', extensions: { persistedQuery } }));
    },
  );
});
