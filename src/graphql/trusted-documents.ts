// Trusted documents (persisted operations) on /graphql.
//
// A manifest maps the SHA-256 hash of each document a frontend ships to its
// text: GraphQL Code Generator's client preset writes one (persisted-documents.json,
// `{hash: document}`), Apollo's generate-persisted-query-manifest another
// (`{format: "apollo-persisted-query-manifest", operations: [{id, body}]}`).
// Modes (GRAPHQL_TRUSTED_DOCUMENTS):
//   off      free-form documents; automatic persisted queries (APQ)
//   allow    a request may name a manifest document by its hash alone
//            (extensions.persistedQuery.sha256Hash, or documentId), over GET or
//            POST; free-form documents and APQ still work
//   enforce  only manifest documents run, by hash or by their exact text;
//            anything else answers 400 PERSISTED_QUERY_NOT_IN_LIST. The
//            explorer, in development, is the one exception.
// The REST paths never pass here: their operations are the service's own.
//
// Apollo Server resolves hashes itself (its APQ support) through the cache
// below, which answers manifest documents first. What Apollo cannot do is done
// around it: refusing untrusted text before it is even parsed (a preHandler on
// the /graphql route), and reading `documentId` (a plugin).
import { createHash, randomBytes } from 'node:crypto';
import { readFileSync } from 'node:fs';
import type { ApolloServerPlugin, PersistedQueryOptions } from '@apollo/server';
import { InMemoryLRUCache, type KeyValueCache, PrefixingKeyValueCache } from '@apollo/utils.keyvaluecache';
import type { FastifyInstance, FastifyRequest, preHandlerHookHandler } from 'fastify';
import { parse } from 'graphql';
import type { Config } from '../config';
import { ConfigError } from '../errors';
import type { Context } from '../context';
import { AppError } from '../errors';
import { graphQLParameters } from '../overrides/apollo-route';
import { sha256Hex } from '../overrides/query-hash';

export type TrustedDocumentsMode = 'off' | 'allow' | 'enforce';

export interface TrustedDocumentsOptions {
  mode: TrustedDocumentsMode;
  /** SHA-256 (hex) of each trusted document → its text. */
  manifest?: ReadonlyMap<string, string>;
  /** Let the explorer page run free-form documents under enforce (development only). */
  explorerExempt?: boolean;
}

/** The header the explorer page sends (with a per-process key) to be recognised under enforce. */
export const EXPLORER_KEY_HEADER = 'x-explorer-key';

const GRAPHQL_PATH = '/graphql';

const sha256 = (text: string): string => createHash('sha256').update(text).digest('hex');

/** The manifest file's documents by hash. Throws an Error saying what is wrong with it. */
export function loadManifest(path: string): Map<string, string> {
  let text: string;
  try {
    text = readFileSync(path, 'utf8');
  } catch (error) {
    throw new Error(`cannot read ${path}: ${(error as Error).message}`, { cause: error });
  }
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch {
    throw new Error(`${path} is not JSON`);
  }
  const entries = manifestEntries(json);
  if (entries === undefined) {
    throw new Error(`${path} is neither a persisted-documents manifest ({"<sha256>": "<document>"}) nor an Apollo persisted query manifest`);
  }
  const documents = new Map<string, string>();
  for (const [id, body] of entries) {
    // The APQ protocol names a document by the SHA-256 of its text: a manifest
    // keyed otherwise (the client preset's default is sha1) could never match.
    if (id !== sha256(body)) {
      throw new Error(`${path}: "${id}" is not the SHA-256 hash of its document (generate the manifest with sha256 hashes)`);
    }
    try {
      parse(body);
    } catch (error) {
      throw new Error(`${path}: document ${id} does not parse: ${(error as Error).message}`, { cause: error });
    }
    documents.set(id, body);
  }
  return documents;
}

function manifestEntries(json: unknown): [string, string][] | undefined {
  if (typeof json !== 'object' || json === null || Array.isArray(json)) return undefined;
  const record = json as Record<string, unknown>;
  if (record.format === 'apollo-persisted-query-manifest') {
    if (record.version !== 1 || !Array.isArray(record.operations)) return undefined;
    const entries: [string, string][] = [];
    for (const operation of record.operations as unknown[]) {
      const { id, body } = (operation ?? {}) as { id?: unknown; body?: unknown };
      if (typeof id !== 'string' || typeof body !== 'string') return undefined;
      entries.push([id, body]);
    }
    return entries;
  }
  const entries = Object.entries(record);
  return entries.every((entry): entry is [string, string] => typeof entry[1] === 'string') ? entries : undefined;
}

/** The options the configuration decides; a manifest that cannot be used stops the service, naming the variable. */
export function trustedDocumentsFromConfig(config: Config): TrustedDocumentsOptions {
  const mode = config.GRAPHQL_TRUSTED_DOCUMENTS;
  const path = config.GRAPHQL_TRUSTED_DOCUMENTS_MANIFEST;
  if (mode === 'off' || path === undefined) return { mode: 'off' };
  try {
    return {
      mode,
      manifest: loadManifest(path),
      explorerExempt: config.GRAPHQL_EXPLORER && config.NODE_ENV === 'development',
    };
  } catch (error) {
    throw new ConfigError(`Invalid configuration:\n  GRAPHQL_TRUSTED_DOCUMENTS_MANIFEST: ${(error as Error).message}`);
  }
}

export interface TrustedDocuments {
  /** Apollo Server's `persistedQueries`. */
  persistedQueries: PersistedQueryOptions;
  plugin: ApolloServerPlugin<Context>;
  /** Headers the explorer page adds to its requests (empty unless it is exempt). */
  explorerHeaders: Record<string, string>;
  /** Whether a document's SHA-256 is of the manifest (the metrics label those by their fields). */
  isTrusted(hash: string): boolean;
}

/** Sets up /graphql's trusted documents; call before the /graphql route is registered. */
export function registerTrustedDocuments(fastify: FastifyInstance, options: TrustedDocumentsOptions): TrustedDocuments {
  const manifest = options.mode === 'off' ? new Map<string, string>() : (options.manifest ?? new Map<string, string>());
  const enforce = options.mode === 'enforce';
  const explorerKey = enforce && options.explorerExempt ? randomBytes(16).toString('hex') : undefined;

  const check = trustCheck(manifest, enforce, explorerKey);
  const checkHook: preHandlerHookHandler = (request, _reply, done) => {
    try {
      check(request);
    } catch (error) {
      return done(error as Error);
    }
    done();
  };
  fastify.addHook('onRoute', (route) => {
    if (route.url !== GRAPHQL_PATH) return;
    const existing = route.preHandler === undefined ? [] : [route.preHandler].flat();
    route.preHandler = [...existing, checkHook];
  });

  return {
    // The cache is this feature's own: no other data shares it, so it needs no key prefix.
    persistedQueries: { cache: PrefixingKeyValueCache.cacheDangerouslyDoesNotNeedPrefixesForIsolation(documentCache(manifest, enforce)) },
    plugin: DOCUMENT_ID_PLUGIN,
    explorerHeaders: explorerKey === undefined ? {} : { [EXPLORER_KEY_HEADER]: explorerKey },
    isTrusted: (hash) => manifest.has(hash),
  };
}

/**
 * What a request's document must pass before Apollo sees it: a persisted
 * query's hash must be the SHA-256 of the text sent with it, and under enforce
 * the document must be in the manifest (or the request the explorer's).
 * Synchronous, as a callback hook: no promise per request. A POST without
 * `extensions` or `documentId` names no hash, and outside enforce a document
 * without a hash has nothing to check: decided before anything is built (the
 * common case).
 */
function trustCheck(manifest: ReadonlyMap<string, string>, enforce: boolean, explorerKey: string | undefined): (request: FastifyRequest) => void {
  return (request) => {
    if (!enforce && request.method !== 'GET') {
      const body = request.body as { extensions?: unknown; documentId?: unknown } | null | undefined;
      if (typeof body === 'object' && body !== null && (body.extensions === undefined || body.extensions === null) && body.documentId === undefined) return;
    }
    const sent = sentOperation(request);
    let hash = sent.documentId;
    // Apollo refuses these too, but with no error code.
    if (sent.persistedQuery !== undefined) {
      const { version, sha256Hash } = sent.persistedQuery as { version?: unknown; sha256Hash?: unknown };
      if (version !== 1) throw new AppError('BAD_REQUEST', 'extensions.persistedQuery.version must be 1');
      if (typeof sha256Hash !== 'string' || !/^[0-9a-f]{64}$/.test(sha256Hash)) {
        throw new AppError('BAD_REQUEST', 'extensions.persistedQuery.sha256Hash must be the hex SHA-256 of the document');
      }
      hash = sha256Hash;
    }
    if (sent.query === undefined || (hash === undefined && !enforce)) return;
    // Remembered by text: Apollo then hashes the same text again (src/overrides/query-hash.ts).
    const textHash = sha256Hex(sent.query);
    if (hash !== undefined && hash !== textHash) {
      throw new AppError('BAD_REQUEST', 'The persisted query hash is not the SHA-256 of the query sent with it');
    }
    if (!enforce || manifest.has(textHash)) return;
    if (explorerKey !== undefined && request.headers[EXPLORER_KEY_HEADER] === explorerKey) return;
    throw new AppError('PERSISTED_QUERY_NOT_IN_LIST', NOT_IN_LIST_MESSAGE);
  };
}

/** The documents Apollo's persisted queries read: the manifest's, and outside enforce those registered (APQ), which enforce keeps out. */
function documentCache(manifest: ReadonlyMap<string, string>, enforce: boolean): KeyValueCache {
  const registered = enforce ? undefined : new InMemoryLRUCache<string>();
  return {
    async get(hash) {
      return manifest.get(hash) ?? registered?.get(hash);
    },
    async set(hash, document, setOptions) {
      if (!manifest.has(hash)) await registered?.set(hash, document, setOptions);
    },
    async delete(hash) {
      return registered?.delete(hash);
    },
  };
}

const NO_LISTENER: Promise<void> = Promise.resolve();

/** GraphQL over HTTP's persisted documents: a `documentId` is read as Apollo's APQ hash. */
const DOCUMENT_ID_PLUGIN: ApolloServerPlugin<Context> = {
  // Not async: the settled promise below is shared, none made per request.
  requestDidStart({ request }) {
    // documentId (GraphQL over HTTP's persisted documents) is Apollo's APQ hash under another name.
    const http = request.http;
    const documentId = documentIdOf(
      http?.method === 'GET' ? searchParam(http.search, 'documentId') : (http?.body as { documentId?: unknown } | undefined)?.documentId,
    );
    if (documentId !== undefined && request.extensions?.persistedQuery === undefined) {
      request.extensions = { ...request.extensions, persistedQuery: { version: 1, sha256Hash: documentId } };
    }
    return NO_LISTENER;
  },
};

export const NOT_IN_LIST_MESSAGE =
  'Only trusted documents run here: send the SHA-256 hash of a document of the manifest ' + '(extensions.persistedQuery.sha256Hash or documentId)';

interface SentOperation {
  query?: string;
  /** extensions.persistedQuery, when set to anything but null. */
  persistedQuery?: unknown;
  documentId?: string;
}

/** What a /graphql request sends, from its JSON body (POST) or query string (GET); malformed parts are Apollo's to refuse. */
function sentOperation(request: FastifyRequest): SentOperation {
  let fields: { query?: unknown; extensions?: unknown; documentId?: unknown };
  if (request.method === 'GET') {
    // Apollo's own reading of the target, a repeated parameter refused: the
    // router's (request.query) may differ from it (issue 31).
    const params = graphQLParameters(request.url);
    const sentExtensions = params.get('extensions');
    let extensions: unknown;
    try {
      extensions = sentExtensions === null ? undefined : JSON.parse(sentExtensions);
    } catch {
      extensions = undefined;
    }
    fields = { query: params.get('query') ?? undefined, extensions, documentId: params.get('documentId') ?? undefined };
  } else {
    const body = request.body;
    fields = typeof body === 'object' && body !== null ? body : {};
  }
  const extensions = fields.extensions;
  const persistedQuery = typeof extensions === 'object' && extensions !== null ? (extensions as { persistedQuery?: unknown }).persistedQuery : undefined;
  const documentId = documentIdOf(fields.documentId);
  return {
    ...(typeof fields.query === 'string' ? { query: fields.query } : {}),
    ...(persistedQuery === undefined || persistedQuery === null ? {} : { persistedQuery }),
    ...(documentId === undefined ? {} : { documentId }),
  };
}

/** A documentId is the hash, bare or as `sha256:<hash>`. */
function documentIdOf(value: unknown): string | undefined {
  if (typeof value !== 'string' || value === '') return undefined;
  return value.startsWith('sha256:') ? value.slice('sha256:'.length) : value;
}

function searchParam(search: string, name: string): string | undefined {
  return new URLSearchParams(search).get(name) ?? undefined;
}
