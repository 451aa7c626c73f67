// The benchmark's baseline: what the bare database allows. A plain node:http
// server with pg, no framework, answering the REST paths the benchmark drives
// with the service's exact JSON shapes, in ONE named prepared statement per
// request: the session-token check fused (as a CTE) with the operation.
//
// Not a second implementation of the service: it accepts only SVC-Token
// session tokens (no API keys, no On-Behalf-Of), reads `force` of a delete
// from the query string only, and answers only the paths below.
//
//   GET    /users/external/{external_user_id}.json
//   GET    /address_book/registered_users.json?udid=&compact=0|1
//   DELETE /chat/Message/{ids}.json?force=0|1
//   GET    /__history?chat_dialog_id=&limit=[&before_at=ms&before_id=]
//                                → {"items":[…]}, the caller's newest `limit` messages
//                                  (before the position given), newest first
//   GET    /__statements        → {"statements": n}, statements sent so far
//   GET    /healthz
//
// Environment: DATABASE_URL (required), PORT (0: any free port), HOST
// (127.0.0.1), DB_POOL_MAX (10), BASELINE_SESSION_WRITES (1: the token check
// also slides the session's expiry and stamps the user's last_request_at, as
// the service's sessions promise; default 0: a read-only check).
// Prints one JSON line {"msg":"listening","address":"http://host:port"}.
import { createHash } from 'node:crypto';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { Pool, type QueryConfig } from 'pg';

const env = process.env;
if (!env.DATABASE_URL) {
  process.stderr.write('baseline: DATABASE_URL is required\n');
  process.exit(1);
}
const pool = new Pool({ connectionString: env.DATABASE_URL, max: Number(env.DB_POOL_MAX || 10) });
pool.on('error', () => {});
/**
 * The hide's connections: sequential scans off, as the service's hide
 * function runs (migration hide_generic_plans). A prepared statement's generic
 * plan is kept as long as the statistics it was made from: made while
 * message_hides was nearly empty (the first deletes of a run), its purge read
 * every hide for every message once they were many, and the bare statement
 * fell from 259 to 154 requests a second within the scenario. Every table of
 * the hide is reached by key, whose plan does not depend on the statistics.
 */
const keyedPool = new Pool({ connectionString: env.DATABASE_URL, max: Number(env.DB_POOL_MAX || 10), options: '-c enable_seqscan=off' });
keyedPool.on('error', () => {});

let statements = 0;
async function run<Row>(name: string, text: string, values: unknown[], on: Pool = pool): Promise<Row[]> {
  statements++;
  const config: QueryConfig = { name, text, values };
  return (await on.query(config)).rows as Row[];
}

/** The live session of token hash $1: read-only, or sliding its expiry and stamping its user. */
const SESSION =
  env.BASELINE_SESSION_WRITES === '1'
    ? `s AS (
         UPDATE sessions SET expires_at = now() + interval '2 hours'
          WHERE token_hash = $1 AND expires_at > now()
         RETURNING application_id, user_id
       ), touched AS (
         UPDATE users SET last_request_at = now() WHERE id = (SELECT user_id FROM s) RETURNING 1
       )`
    : `s AS (
         SELECT application_id, user_id FROM sessions WHERE token_hash = $1 AND expires_at > now()
       )`;

const LOOKUP = `
  WITH ${SESSION}
  SELECT s.user_id AS caller, u.id, u.full_name, u.email, u.login, u.phone, u.website,
         u.created_at, u.updated_at, u.last_request_at, u.external_user_id, u.facebook_id,
         u.twitter_id, u.blob_id, u.custom_data, u.age_over16, u.allow_statistics_analysis,
         u.allow_sales_activities, u.parents_contacts, u.user_tags
    FROM s
    LEFT JOIN users u
      ON s.user_id IS NOT NULL AND u.application_id = s.application_id AND u.external_user_id = $2`;

const iso = (column: string) => `to_char(u.${column} AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"')`;
const COMPACT_RECORD = `json_build_object('id', u.id, 'phone', u.phone)`;
const FULL_RECORD = `json_build_object(
  'id', u.id, 'full_name', u.full_name, 'email', u.email, 'login', u.login, 'phone', u.phone,
  'website', u.website, 'created_at', ${iso('created_at')}, 'updated_at', ${iso('updated_at')},
  'last_request_at', ${iso('last_request_at')}, 'external_user_id', u.external_user_id,
  'facebook_id', u.facebook_id, 'twitter_id', u.twitter_id, 'blob_id', u.blob_id,
  'custom_data', u.custom_data, 'age_over16', u.age_over16,
  'allow_statistics_analysis', u.allow_statistics_analysis,
  'allow_sales_activities', u.allow_sales_activities,
  'parents_contacts', u.parents_contacts, 'user_tags', u.user_tags)`;

/**
 * The items array is built by PostgreSQL, ordered by user id. The book's
 * phones go to the users index as one array (`= ANY(ARRAY(…))`): one index
 * scan over (application_id, phone) whatever the book's size. The same match
 * written `phone IN (SELECT …)` is planned, against 1,000,000 users of one
 * application, as a parallel sequential scan of every user and a hash join
 * (~0.3–0.6 s for 10,000 contacts instead of ~20 ms).
 */
const registeredUsers = (record: string) => `
  WITH ${SESSION}
  SELECT s.user_id AS caller,
         (SELECT coalesce(json_agg(json_build_object('user', ${record}) ORDER BY u.id), '[]'::json)
            FROM users u
           WHERE s.user_id IS NOT NULL AND u.application_id = s.application_id
             AND u.phone = ANY (ARRAY(SELECT c.phone FROM contacts c WHERE c.user_id = s.user_id AND c.udid = $2))
         )::text AS items
    FROM s`;
const REGISTERED_COMPACT = registeredUsers(COMPACT_RECORD);
const REGISTERED_FULL = registeredUsers(FULL_RECORD);

/**
 * Spec rule 1: visible to the caller (an occupant; not deleted) → hidden for
 * them; a message every occupant has then hidden loses its text, as the
 * service's does. In the statement's own snapshot only: the service's hide
 * function first locks the messages' rows, so that two occupants hiding one
 * message at once cannot both miss the other's hide (its price: the locks,
 * and a statement each for the lock, the hide and the purge, in one call).
 */
const HIDE = `
  WITH ${SESSION}, visible AS (
    SELECT m.id, s.user_id
      FROM messages m
      JOIN dialogs d ON d.id = m.dialog_id
      JOIN s ON s.application_id = d.application_id
      JOIN dialog_occupants o ON o.dialog_id = m.dialog_id AND o.user_id = s.user_id
     WHERE m.id = ANY($2::text[]) AND m.deleted_at IS NULL
  ), hidden AS (
    INSERT INTO message_hides (message_id, user_id)
    SELECT id, user_id FROM visible
    ON CONFLICT DO NOTHING
    RETURNING message_id, user_id
  ), purged AS (
    UPDATE messages m SET body = NULL
      FROM hidden h
     WHERE m.id = h.message_id AND m.body IS NOT NULL
       AND NOT EXISTS (
         SELECT 1 FROM dialog_occupants o
          WHERE o.dialog_id = m.dialog_id AND o.user_id <> h.user_id
            AND NOT EXISTS (SELECT 1 FROM message_hides x WHERE x.message_id = m.id AND x.user_id = o.user_id))
  )
  SELECT s.user_id AS caller, false AS denied, ARRAY(SELECT message_id FROM hidden) AS ids FROM s`;

/** Spec rule 2: the caller must own every dialog involved, else nothing is written; the text goes with the delete. */
const DELETE_FOR_EVERYONE = `
  WITH ${SESSION}, target AS (
    SELECT m.id, d.owner_id, s.user_id
      FROM messages m
      JOIN dialogs d ON d.id = m.dialog_id
      JOIN s ON s.application_id = d.application_id
     WHERE m.id = ANY($2::text[]) AND m.deleted_at IS NULL AND s.user_id IS NOT NULL
  ), denied AS (
    SELECT 1 FROM target WHERE owner_id <> user_id LIMIT 1
  ), deleted AS (
    UPDATE messages m SET deleted_at = now(), body = NULL
      FROM target t
     WHERE m.id = t.id AND m.deleted_at IS NULL AND NOT EXISTS (SELECT 1 FROM denied)
    RETURNING m.id
  )
  SELECT s.user_id AS caller, EXISTS (SELECT 1 FROM denied) AS denied, ARRAY(SELECT id FROM deleted) AS ids FROM s`;

/**
 * The bare keyset page of a dialog's history (issue 32's benchmark): the
 * caller's view (occupant; neither deleted for everyone nor hidden by them),
 * newest first, before the position ($3, $4) when given: one range of the
 * index messages(dialog_id, created_at). Two statements, with and without
 * the position, so that neither plan carries the other's case; the hides
 * looked up by key (OFFSET 0), as the service's are (src/db/statements/chat.ts:
 * a generic plan's anti-join read all of the caller's hides, which the delete
 * scenarios leave at 200,000).
 */
const historyPage = (before: boolean) => `
  WITH ${SESSION}
  SELECT s.user_id AS caller, m.id, m.sender_id, m.body, m.created_at
    FROM s
    LEFT JOIN LATERAL (
      SELECT m.id, m.sender_id, m.body, m.created_at
        FROM messages m
       WHERE m.dialog_id = $2 AND m.deleted_at IS NULL
         AND EXISTS (SELECT 1 FROM dialog_occupants o WHERE o.dialog_id = $2 AND o.user_id = s.user_id)
         AND NOT EXISTS (SELECT 1 FROM message_hides h WHERE h.message_id = m.id AND h.user_id = s.user_id OFFSET 0)
         ${before ? 'AND (m.created_at, m.id) < (to_timestamp($4::bigint / 1000.0), $5::text)' : ''}
       ORDER BY m.created_at DESC, m.id DESC
       LIMIT $3::int
    ) m ON s.user_id IS NOT NULL`;
const HISTORY_FIRST = historyPage(false);
const HISTORY_BEFORE = historyPage(true);

const MESSAGES = {
  noCredentials: 'Token is required: send SVC-Token or Authorization: ApiKey <key>',
  sessionMissing: 'Required session does not exist',
  needUser: 'Forbidden. Need user.',
  wrongPermissions: 'WrongPermissions',
  userNotFound: 'User not found',
  externalId: 'must be an integer between 1 and 2147483647',
};

const sha256hex = (value: string) => createHash('sha256').update(value).digest('hex');

class HttpError extends Error {
  constructor(
    readonly status: number,
    readonly body: unknown,
  ) {
    super(`HTTP ${status}`);
  }
}
/** The delete and address-book paths' error shape. */
const listError = (status: number, message: string) => new HttpError(status, { errors: [message] });
/** The user lookup's credential error shape. */
const baseError = (status: number, message: string) => new HttpError(status, { errors: { base: [message] } });

function tokenOf(req: http.IncomingMessage, error: (status: number, message: string) => HttpError): string {
  const token = req.headers['svc-token'];
  const value = Array.isArray(token) ? token[0] : token;
  if (value === undefined || value === '') throw error(401, MESSAGES.noCredentials);
  return sha256hex(value);
}

function send(res: http.ServerResponse, status: number, body: string): void {
  res.writeHead(status, { 'content-type': 'application/json; charset=utf-8', 'content-length': Buffer.byteLength(body) });
  res.end(body);
}

type Row = Record<string, unknown>;
const isoOrNull = (value: unknown) => (value instanceof Date ? value.toISOString() : null);

async function lookup(req: http.IncomingMessage, file: string): Promise<string> {
  const token = tokenOf(req, baseError);
  const n = /^-?[0-9]{1,10}$/.test(file) ? Number(file) : NaN;
  if (!(n >= 1 && n <= 2_147_483_647)) {
    throw new HttpError(422, { errors: { external_user_id: [MESSAGES.externalId] } });
  }
  const [row] = await run<Row>('lookup', LOOKUP, [token, n]);
  if (!row) throw baseError(401, MESSAGES.sessionMissing);
  if (row.caller === null) throw baseError(403, MESSAGES.needUser);
  if (row.id === null) throw new HttpError(404, { code: 'NOT_FOUND', message: MESSAGES.userNotFound });
  return JSON.stringify({
    user: {
      id: row.id,
      full_name: row.full_name,
      email: row.email,
      login: row.login,
      phone: row.phone,
      website: row.website,
      created_at: isoOrNull(row.created_at),
      updated_at: isoOrNull(row.updated_at),
      last_request_at: isoOrNull(row.last_request_at),
      external_user_id: row.external_user_id,
      facebook_id: row.facebook_id,
      twitter_id: row.twitter_id,
      blob_id: row.blob_id,
      custom_data: row.custom_data,
      age_over16: row.age_over16,
      allow_statistics_analysis: row.allow_statistics_analysis,
      allow_sales_activities: row.allow_sales_activities,
      parents_contacts: row.parents_contacts,
      user_tags: row.user_tags,
    },
  });
}

function flag(name: string, query: URLSearchParams): boolean | null {
  const values = query.getAll(name);
  if (values.length === 0) return null;
  if (values.length > 1) throw listError(422, `${name} must be given once`);
  if (values[0] === '1') return true;
  if (values[0] === '0') return false;
  throw listError(422, `${name} must be 0 or 1`);
}

async function registered(req: http.IncomingMessage, query: URLSearchParams): Promise<string> {
  const token = tokenOf(req, listError);
  const udids = query.getAll('udid');
  if (udids.length > 1) throw listError(422, 'udid must be given once');
  const udid = udids[0] ?? '';
  if (udid.length > 64) throw listError(422, 'udid must be at most 64 characters');
  const compact = flag('compact', query) ?? false;
  flag('force', query);
  const [row] = compact
    ? await run<Row>('registered_compact', REGISTERED_COMPACT, [token, udid])
    : await run<Row>('registered_full', REGISTERED_FULL, [token, udid]);
  if (!row) throw listError(401, MESSAGES.sessionMissing);
  if (row.caller === null) throw listError(403, MESSAGES.needUser);
  return `{"items":${row.items as string}}`;
}

const OBJECT_ID = /^[0-9a-f]{24}$/;

async function deleteMessages(req: http.IncomingMessage, file: string, query: URLSearchParams): Promise<string> {
  const token = tokenOf(req, listError);
  const ids = decodeURIComponent(file).split(',');
  if (ids.length > 1000) throw listError(422, `at most 1000 ids per call (got ${ids.length})`);
  if (ids.some((id) => id === '')) throw listError(422, 'ids must not be empty');
  const force = flag('force', query) ?? false;
  const requested = [...new Set(ids)];
  const candidates = requested.filter((id) => OBJECT_ID.test(id));
  const [row] = force
    ? await run<Row>('delete_for_everyone', DELETE_FOR_EVERYONE, [token, candidates])
    : await run<Row>('hide', HIDE, [token, candidates], keyedPool);
  if (!row) throw listError(401, MESSAGES.sessionMissing);
  if (row.caller === null) throw listError(403, MESSAGES.needUser);
  if (row.denied) throw listError(403, MESSAGES.wrongPermissions);
  const gone = new Set(row.ids as string[]);
  return JSON.stringify({
    SuccessfullyDeleted: { ids: requested.filter((id) => gone.has(id)) },
    NotFound: { ids: requested.filter((id) => !gone.has(id)) },
  });
}

async function history(req: http.IncomingMessage, query: URLSearchParams): Promise<string> {
  const token = tokenOf(req, listError);
  const dialog = query.get('chat_dialog_id') ?? '';
  if (!OBJECT_ID.test(dialog)) throw listError(422, 'chat_dialog_id must be a 24-hex dialog id');
  const limit = Number(query.get('limit') ?? 50);
  if (!(Number.isInteger(limit) && limit >= 1 && limit <= 1000)) throw listError(422, 'limit must be 1 to 1000');
  const at = query.get('before_at');
  const id = query.get('before_id');
  const rows =
    at !== null && id !== null
      ? await run<Row>('history_before', HISTORY_BEFORE, [token, dialog, limit, at, id])
      : await run<Row>('history_first', HISTORY_FIRST, [token, dialog, limit]);
  if (rows.length === 0) throw listError(401, MESSAGES.sessionMissing);
  if (rows[0]!.caller === null) throw listError(403, MESSAGES.needUser);
  const items = rows
    .filter((r) => r.id !== null)
    .map((r) => ({ _id: r.id, chat_dialog_id: dialog, message: r.body, sender_id: r.sender_id, created_at: isoOrNull(r.created_at) }));
  return JSON.stringify({ items });
}

async function handle(req: http.IncomingMessage, res: http.ServerResponse): Promise<void> {
  req.resume(); // no path here reads a body; drain it so the connection stays usable
  const url = req.url ?? '/';
  const q = url.indexOf('?');
  const path = q === -1 ? url : url.slice(0, q);
  const query = new URLSearchParams(q === -1 ? '' : url.slice(q + 1));
  try {
    let match: RegExpExecArray | null;
    if (req.method === 'GET' && (match = /^\/users\/external\/([^/]+)\.json$/.exec(path))) {
      return send(res, 200, await lookup(req, match[1]!));
    }
    if (req.method === 'GET' && path === '/address_book/registered_users.json') {
      return send(res, 200, await registered(req, query));
    }
    if (req.method === 'DELETE' && (match = /^\/chat\/Message\/([^/]*)\.json$/.exec(path))) {
      return send(res, 200, await deleteMessages(req, match[1]!, query));
    }
    if (req.method === 'GET' && path === '/__history') return send(res, 200, await history(req, query));
    if (req.method === 'GET' && path === '/__statements') return send(res, 200, JSON.stringify({ statements }));
    if (req.method === 'GET' && path === '/healthz') return send(res, 200, '{"status":"ok"}');
    return send(res, 404, JSON.stringify({ code: 'NOT_FOUND', message: 'Not found' }));
  } catch (error) {
    if (error instanceof HttpError) return send(res, error.status, JSON.stringify(error.body));
    process.stderr.write(`baseline: ${(error as Error).stack ?? String(error)}\n`);
    return send(res, 500, JSON.stringify({ errors: ['Internal error'] }));
  }
}

// 1,000 ids make a ~25 kB request line: node's default 16 kB header limit is too small.
const server = http.createServer({ maxHeaderSize: 64 * 1024, keepAliveTimeout: 60_000 }, (req, res) => {
  void handle(req, res);
});
server.listen(Number(env.PORT || 0), env.HOST || '127.0.0.1', () => {
  const { address, port } = server.address() as AddressInfo;
  process.stdout.write(`${JSON.stringify({ msg: 'listening', address: `http://${address}:${port}` })}\n`);
});

function stop(): void {
  server.close();
  server.closeAllConnections();
  Promise.all([pool.end(), keyedPool.end()]).then(
    () => process.exit(0),
    () => process.exit(1),
  );
  setTimeout(() => process.exit(1), 5_000).unref();
}
process.on('SIGTERM', stop);
process.on('SIGINT', stop);
