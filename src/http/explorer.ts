// The GraphQL explorer: GraphiQL as rendered by @graphql-yoga/render-graphiql,
// one self-contained page (scripts, styles, editor workers and icon are all
// inline: nothing is loaded from another host, so it works offline). Served at
// GET /playground, and at GET /graphql to browsers (Apollo owns that route; its
// own landing page is disabled in src/graphql/apollo.ts). The page opens with one tab per
// example operation and the configured request headers in the headers editor.
//
// graphql-yoga is only the renderer's peer dependency for types: at run time
// the renderer needs nothing but its own bundled files.
import { createHash } from 'node:crypto';
import type { GraphiQLOptions } from 'graphql-yoga';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { type PublicDocument, publicDocument, sendDocument, sendUnstored } from './caching';

export interface ExplorerOptions {
  /** Serve the explorer page. */
  enabled: boolean;
  /** Request headers the page opens with (e.g. the demo session token); read on each page load. */
  defaultHeaders?: () => Record<string, string>;
  /** Headers the page adds to every request, unseen in its editor (the trusted-documents exemption). */
  requestHeaders?: Record<string, string>;
}

export const EXPLORER_PATH = '/playground';
const GRAPHQL_PATH = '/graphql';

export interface ExplorerExample {
  query: string;
  variables?: Record<string, unknown>;
}

/**
 * The tabs the page opens with: every operation of the schema, runnable as they
 * are against the demo data of src/demo/seed.ts (as its user alice). GraphiQL
 * names each tab after its operation. The first tab takes no variables:
 * GraphiQL fills the variables editor from the tab only when switching to it,
 * so the tab shown first opens with an empty one.
 */
export const EXPLORER_EXAMPLES: readonly ExplorerExample[] = [
  {
    query: `# A user of the caller's application, by external id.
# Demo data: external ids 1001 (alice), 1002 (bob), 1003 (carol), 1004 (dave).
query UserByExternalId {
  userByExternalId(externalUserId: 1002) {
    id
    login
    fullName
    email
    phone
    externalUserId
    lastRequestAt
  }
}
`,
  },
  {
    query: `# Users of the caller's application whose phone is in the caller's address
# book: the global book, or with registeredUsers(udid: "...") a device's book.
# Demo data: alice's global book lists bob and carol (and one unregistered phone).
query RegisteredUsers {
  registeredUsers {
    id
    login
    fullName
    phone
  }
}
`,
  },
  {
    query: `# Deletes messages by id: hidden from the caller's history, or with
# force: true deleted for everyone (only the dialog's owner may).
# The id in the variables names no message, so it lands in notFound: put ids
# printed at start-up (or listed by \`npm run admin -- messages:list\`) there.
mutation DeleteMessages($ids: [ID!]!, $force: Boolean) {
  deleteMessages(ids: $ids, force: $force) {
    successfullyDeleted
    notFound
  }
}
`,
    variables: { ids: ['ffffffffffffffffffffffff'], force: false },
  },
  {
    query: `# Adds contacts to the caller's global address book, or to the book of
# device \`udid\`; with force: true the book becomes exactly this list.
# Demo data: puts dave's phone in the book of device "phone-1", after which
# registeredUsers(udid: "phone-1") lists dave.
mutation UploadAddressBook($contacts: [ContactInput!]!, $udid: String, $force: Boolean) {
  uploadAddressBook(contacts: $contacts, udid: $udid, force: $force) {
    created
    updated
    deleted
  }
}
`,
    variables: { contacts: [{ name: 'Dave', phone: '+15550000004' }], udid: 'phone-1', force: false },
  },
];

interface Page {
  headers: Record<string, string>;
  /** The page at /playground, and at /graphql (where Accept and Sec-Fetch-Mode chose it). */
  atPlayground: PublicDocument;
  atGraphql: PublicDocument;
  /** It holds default headers (the demo user's token): no cache may keep it. */
  holdsCredentials: boolean;
}

const PAGE_TYPE = 'text/html; charset=utf-8';

export function registerExplorer(fastify: FastifyInstance, options: ExplorerOptions): void {
  let cached: { key: string; page: Page } | undefined;
  const page = (): Page => {
    const headers = options.defaultHeaders?.() ?? {};
    const key = Object.keys(headers).length === 0 ? '' : JSON.stringify(headers, null, 2);
    if (cached?.key !== key) {
      const { html, headers: pageHeaders } = renderPage(key, options.requestHeaders ?? {});
      const atPlayground = publicDocument(html, PAGE_TYPE);
      cached = {
        key,
        page: { headers: pageHeaders, atPlayground, atGraphql: { ...atPlayground, vary: ['Accept', 'Sec-Fetch-Mode'] }, holdsCredentials: key !== '' },
      };
    }
    return cached.page;
  };
  const send = (request: FastifyRequest, reply: FastifyReply, atGraphql: boolean): FastifyReply => {
    const current = page();
    const document = atGraphql ? current.atGraphql : current.atPlayground;
    reply.headers(current.headers);
    if (!current.holdsCredentials) return sendDocument(request, reply, document);
    if (document.vary) reply.header('vary', document.vary.join(', '));
    return sendUnstored(reply.code(200).type(PAGE_TYPE), document.body);
  };

  if (options.enabled) {
    fastify.get(EXPLORER_PATH, async (request, reply) => send(request, reply, false));
  }
  // Registered on the root instance, so it runs for Apollo's GET /graphql route
  // (src/overrides/apollo-route.ts registers it there, and hooks are attached at ready).
  fastify.addHook('onRequest', async (request, reply) => {
    if (!isPageRequest(request)) return;
    if (!options.enabled) return reply.callNotFound();
    return send(request, reply, true);
  });
}

/**
 * A browser asking GET /graphql for a page rather than a client running a
 * query: HTML preferred over JSON, and no `query` parameter, or a top-level
 * navigation (Sec-Fetch-Mode is set by browsers only; GraphiQL keeps the edited
 * query in the address, so a reload arrives with one. Apollo's CSRF prevention
 * refuses such a navigation anyway: it carries no preflight header).
 */
function isPageRequest(request: FastifyRequest): boolean {
  if (request.method !== 'GET' && request.method !== 'HEAD') return false;
  if (request.url.split('?')[0] !== GRAPHQL_PATH) return false;
  if (!prefersHtml(request.headers.accept)) return false;
  const query = request.query as Record<string, unknown> | undefined;
  return query?.query === undefined || request.headers['sec-fetch-mode'] === 'navigate';
}

/** text/html named in Accept, with a quality at least that of application/json. */
export function prefersHtml(accept: string | undefined): boolean {
  if (!accept) return false;
  const quality = new Map<string, number>();
  for (const part of accept.split(',')) {
    const [type, ...params] = part.trim().toLowerCase().split(';');
    if (!type) continue;
    const q = params.map((p) => p.trim()).find((p) => p.startsWith('q='));
    const value = q === undefined ? 1 : Number(q.slice(2));
    quality.set(type.trim(), Number.isFinite(value) ? value : 0);
  }
  const html = quality.get('text/html') ?? 0;
  const json = quality.get('application/json') ?? quality.get('application/*') ?? quality.get('*/*') ?? 0;
  return html > 0 && html >= json;
}

type RenderGraphiQL = (options: GraphiQLOptions) => string;
let renderer: RenderGraphiQL | undefined;

/** Loaded on the first page request: the bundle is ~9 MB of strings. */
function loadRenderer(): RenderGraphiQL {
  renderer ??= (require('@graphql-yoga/render-graphiql') as { renderGraphiQL: RenderGraphiQL }).renderGraphiQL;
  return renderer;
}

function renderPage(headersJson: string, requestHeaders: Record<string, string>): { html: string; headers: Record<string, string> } {
  const graphiql: GraphiQLOptions = {
    title: 'Chat/user service GraphiQL',
    endpoint: GRAPHQL_PATH,
    method: 'POST',
    // Headers carry credentials: never written to the browser's storage.
    shouldPersistHeaders: false,
    isHeadersEditorEnabled: true,
    defaultEditorToolsVisibility: 'headers',
    // GraphiQL's `defaultHeaders`: the headers editor of every tab that has
    // none of its own, including the example tabs.
    ...(headersJson === '' ? {} : { headers: headersJson }),
    ...(Object.keys(requestHeaders).length === 0 ? {} : { additionalHeaders: requestHeaders }),
    defaultTabs: EXPLORER_EXAMPLES.map(({ query, variables }) => ({
      query,
      ...(variables === undefined ? {} : { variables: JSON.stringify(variables, null, 2) }),
    })),
  };
  const html = withStyle(escapeOptions(loadRenderer()(graphiql), graphiql), TAB_FIX);
  return { html, headers: securityHeaders(html) };
}

/**
 * Tabs given at start (defaultTabs) keep a stale drag offset (framer-motion
 * translateX) that GraphiQL's stylesheet hides only while a tab is not focused:
 * pressing one moves it away from the pointer, and the click lands beside it,
 * so the tab does not open. Tabs are still reordered by dragging, without the
 * tab following the pointer.
 */
const TAB_FIX = '.graphiql-tab{transform:none!important}';

function withStyle(html: string, css: string): string {
  const anchor = '<meta charset="utf-8" />';
  const at = html.indexOf(anchor);
  if (at < 0) return html;
  return `${html.slice(0, at + anchor.length)}<style>${css}</style>${html.slice(at + anchor.length)}`;
}

/**
 * The renderer writes its options into the inline script as plain JSON: a
 * header value holding "</script>" would end the script. The same JSON with
 * "<" escaped is the same value to the script and cannot.
 */
function escapeOptions(html: string, graphiql: GraphiQLOptions): string {
  const json = JSON.stringify(graphiql);
  if (!json.includes('<')) return html;
  const at = html.lastIndexOf(json);
  if (at < 0) throw new Error('explorer: the GraphiQL options were not found in the rendered page');
  return html.slice(0, at) + json.replace(/</g, '\\u003c') + html.slice(at + json.length);
}

/**
 * Headers of the page response. The page is one inline script: the policy
 * allows exactly that script (by hash), the editor workers it starts from blob:
 * URLs, and requests to this origin only (GraphQL), so a page script injected
 * somehow could not send the headers editor's credentials elsewhere.
 */
function securityHeaders(html: string): Record<string, string> {
  const script = inlineScript(html);
  const scriptSource = script === undefined ? "'unsafe-inline'" : `'sha256-${createHash('sha256').update(script).digest('base64')}'`;
  return {
    'content-security-policy': [
      "default-src 'none'",
      `script-src ${scriptSource}`,
      'worker-src blob:',
      "style-src 'unsafe-inline'",
      "img-src 'self' data:",
      "font-src 'self' data:",
      "connect-src 'self'",
      "base-uri 'none'",
      "form-action 'none'",
      "frame-ancestors 'none'",
    ].join('; '),
    'x-content-type-options': 'nosniff',
    'x-frame-options': 'DENY',
    'referrer-policy': 'no-referrer',
  };
}

/** The text of the page's single inline <script> element, as the browser hashes it. */
function inlineScript(html: string): string | undefined {
  const open = html.indexOf('<script>', html.indexOf('<div id="root">'));
  if (open < 0) return undefined;
  const start = open + '<script>'.length;
  const end = html.indexOf('</script>', start);
  if (end < 0 || html.indexOf('<script', end) >= 0) return undefined;
  return html.slice(start, end);
}
