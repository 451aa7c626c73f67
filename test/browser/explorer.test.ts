// The explorer page in a real headless Chromium (Debian's /usr/bin/chromium,
// driven by playwright-core; no browser is downloaded). Every request to another
// host is aborted, so the page must work offline: GraphiQL loads, introspects
// the schema, takes request headers from its headers editor, runs a query
// against the service and shows the result; the docs pane shows the schema.
// Without /usr/bin/chromium the suite is skipped, and says so (a failure
// under CI=true, where .ci/run has installed it).
import { mkdirSync } from 'node:fs';
import { resolve } from 'node:path';
import { type Browser, type BrowserContext, chromium, type Locator, type Page } from 'playwright-core';
import { type DemoCredentials, prepareDemo } from '../../src/demo/seed';
import { needProgram, requires } from '../support/requires';
import { type TestService, useService } from '../support/service';
import { seedTenant, type Tenant } from '../support/seed';

const CHROMIUM = '/usr/bin/chromium';
const ARTIFACTS = resolve(__dirname, '../../artifacts');
const withBrowser = requires(needProgram(CHROMIUM, "Debian's Chromium: apt-get install chromium"));

/** The member (external id 102) as the result pane shows it. */
const MEMBER_QUERY = 'query Member { userByExternalId(externalUserId: 102) { id login fullName externalUserId } }';
const MEMBER_RESULT = /"login":\s*"member"/;

withBrowser.describe('explorer page in headless Chromium', () => {
  let browser: Browser;
  let tenant: Tenant;
  let demo: DemoCredentials;
  /** A second app over the same database whose page opens with the demo user's token, as `npm start`'s. */
  let withHeaders: TestService;
  /** A third, under GRAPHQL_TRUSTED_DOCUMENTS=enforce in development: the explorer is exempt. */
  let enforcing: TestService;

  // Declared before the service: launched first, and closed first.
  beforeAll(async () => {
    browser = await chromium.launch({
      executablePath: CHROMIUM,
      args: ['--headless', '--no-sandbox', '--disable-gpu', '--disable-background-networking'],
    });
  });
  afterAll(async () => {
    await browser?.close();
  });
  const service = useService();
  beforeAll(async () => {
    tenant = await seedTenant(service.app.provisioning);
    demo = await prepareDemo(service.app.provisioning, service.app.services);
    withHeaders = await service.start({ explorer: { enabled: true, defaultHeaders: () => ({ 'SVC-Token': demo.userToken }) } });
    enforcing = await service.start({ trustedDocuments: { mode: 'enforce', manifest: new Map(), explorerExempt: true } });
  });

  interface Opened {
    page: Page;
    /** Requests to other hosts, aborted. */
    aborted: string[];
    /** The SVC-Token header of each POST /graphql the page sent. */
    tokensSent: (string | undefined)[];
    /** Uncaught page errors and console errors (a Content-Security-Policy violation is one). */
    errors: string[];
  }

  /**
   * Runs `use` on `${base}${path}` in a fresh browser profile (no stored
   * GraphiQL state), every request to another host aborted. On failure the page
   * is saved as artifacts/explorer-failure-<name>.png.
   */
  async function withPage(base: string, path: string, name: string, use: (opened: Opened) => Promise<void>) {
    const context: BrowserContext = await browser.newContext({ viewport: { width: 1400, height: 900 } });
    const page = await context.newPage();
    const origin = new URL(base).origin;
    const opened: Opened = { page, aborted: [], tokensSent: [], errors: [] };
    await page.route('**/*', (route) => {
      const url = route.request().url();
      if (new URL(url).origin === origin) return route.continue();
      opened.aborted.push(url);
      return route.abort();
    });
    page.on('request', (request) => {
      if (request.method() === 'POST' && new URL(request.url()).pathname === '/graphql') {
        opened.tokensSent.push(request.headers()['svc-token']);
      }
    });
    page.on('pageerror', (error) => opened.errors.push(error.message));
    page.on('console', (message) => {
      // Aborted requests to other hosts are logged too: the page must work without them.
      if (message.type() === 'error' && !message.text().startsWith('Failed to load resource')) {
        opened.errors.push(message.text());
      }
    });
    try {
      await page.goto(`${base}${path}`);
      // GraphiQL is up, with its example tabs.
      await page.locator('.graphiql-tab', { hasText: 'UserByExternalId' }).waitFor();
      await use(opened);
      if (opened.aborted.length > 0) {
        console.warn(`the explorer page asked for other hosts (aborted): ${opened.aborted.join(', ')}`);
      }
    } catch (error) {
      mkdirSync(ARTIFACTS, { recursive: true });
      await page.screenshot({ path: resolve(ARTIFACTS, `explorer-failure-${name}.png`) }).catch(() => undefined);
      throw error;
    } finally {
      await context.close();
    }
  }

  const queryEditor = (page: Page) => page.locator('.graphiql-query-editor .monaco-editor').first();
  const headersEditor = (page: Page) => page.locator('section.graphiql-editor-tool[aria-label="Headers"] .graphiql-editor:not(.hidden) .monaco-editor');
  const responsePane = (page: Page) => page.locator('.graphiql-response');

  /**
   * Replaces an editor's text as a user would: focus, select all, type (inserted
   * at once, on one line: the editor indents and closes brackets after typed
   * line breaks).
   */
  async function setText(page: Page, editor: Locator, text: string): Promise<void> {
    await editor.click();
    await page.keyboard.press('Control+A');
    await page.keyboard.press('Delete');
    await page.keyboard.insertText(text);
  }

  /** Editor text as displayed (Monaco renders spaces as no-break spaces). */
  const shown = async (locator: Locator) => (await locator.innerText()).replace(/\u00a0/g, ' ');

  /**
   * Runs the operation named `Member`. GraphiQL takes the operation name from
   * the edited document a moment after the edit (the tab is renamed then):
   * running before that would ask for the tab's previous operation.
   */
  async function runMember(page: Page): Promise<void> {
    await page.locator('.graphiql-tab-active', { hasText: 'Member' }).waitFor();
    await page.locator('.graphiql-execute-button').click();
  }

  test('runs a query with a token typed into the headers editor; the result pane shows the user', async () => {
    await withPage(service.baseUrl, '/playground', 'typed-headers', async ({ page, tokensSent, errors }) => {
      // No default headers on this app: the user enters the credential.
      await page.getByRole('button', { name: 'Headers', exact: true }).click();
      await setText(page, headersEditor(page), JSON.stringify({ 'SVC-Token': tenant.ownerToken }));
      await setText(page, queryEditor(page), MEMBER_QUERY);
      await page.getByRole('button', { name: /^Prettify query/ }).click();
      await runMember(page);

      await responsePane(page).filter({ hasText: MEMBER_RESULT }).waitFor();
      const result = await shown(responsePane(page));
      expect(result).toMatch(/"externalUserId":\s*102/);
      expect(result).toMatch(`"id": ${tenant.member.id}`);
      expect(result).not.toMatch(/"errors"/);
      // The query went out with the typed header (the introspection before it, without).
      expect(tokensSent).toContain(tenant.ownerToken);
      expect(errors).toEqual([]);

      mkdirSync(ARTIFACTS, { recursive: true });
      await page.screenshot({ path: resolve(ARTIFACTS, 'explorer.png') });
    });
  });

  test('opens with the default headers; every example tab runs as it is against the demo data', async () => {
    await withPage(withHeaders.baseUrl, '/playground', 'examples', async ({ page, tokensSent, errors }) => {
      await page.getByRole('button', { name: 'Headers', exact: true }).click();
      expect(await shown(headersEditor(page))).toContain(`"SVC-Token": "${demo.userToken}"`);
      const expected: [tab: string, result: RegExp][] = [
        ['UserByExternalId', /"login":\s*"bob"/],
        ['RegisteredUsers', /"login":\s*"bob"[\s\S]*"login":\s*"carol"/],
        ['DeleteMessages', /"notFound":\s*\[\s*"ffffffffffffffffffffffff"\s*\]/],
        ['UploadAddressBook', /"uploadAddressBook":\s*\{\s*"created":\s*[01],\s*"updated":\s*0,\s*"deleted":\s*0/],
      ];
      for (const [tab, result] of expected) {
        if ((await page.locator('.graphiql-tab-active').innerText()) !== tab) {
          await page.locator('.graphiql-tab-button', { hasText: tab }).click();
          await page.locator('.graphiql-tab-active', { hasText: tab }).waitFor();
          // GraphiQL takes the operation name from the editor 100 ms after its
          // text changes, when it also saves the text: running before that would
          // ask for the previous tab's operation.
          await page.waitForFunction((name) => new RegExp(`(query|mutation) ${name}\\b`).test(localStorage.getItem('graphiql:query') ?? ''), tab);
        }
        await page.locator('.graphiql-execute-button').click();
        await responsePane(page).filter({ hasText: result }).waitFor();
        expect(await shown(responsePane(page))).not.toMatch(/"errors"/);
      }
      expect(tokensSent.slice(-expected.length)).toEqual(expected.map(() => demo.userToken));
      expect(errors).toEqual([]);
    });
  });

  test('under GRAPHQL_TRUSTED_DOCUMENTS=enforce in development the explorer still introspects and runs any query', async () => {
    await withPage(enforcing.baseUrl, '/playground', 'enforce', async ({ page, errors }) => {
      await page.getByRole('button', { name: 'Headers', exact: true }).click();
      await setText(page, headersEditor(page), JSON.stringify({ 'SVC-Token': tenant.ownerToken }));
      await setText(page, queryEditor(page), MEMBER_QUERY);
      await runMember(page);
      await responsePane(page).filter({ hasText: MEMBER_RESULT }).waitFor();
      expect(await shown(responsePane(page))).not.toMatch(/"errors"/);
      // Introspection too: the docs pane lists the schema.
      await page.getByRole('button', { name: 'Show Documentation Explorer' }).click();
      await page.locator('.graphiql-doc-explorer').getByText('Query', { exact: true }).first().waitFor();
      expect(errors).toEqual([]);
    });
  });

  test('GET /graphql in a browser is the same page; its docs pane shows the schema', async () => {
    await withPage(service.baseUrl, '/graphql', 'docs', async ({ page, errors }) => {
      expect(await page.locator('.graphiql-tab').allInnerTexts()).toEqual(['UserByExternalId', 'RegisteredUsers', 'DeleteMessages', 'UploadAddressBook']);
      await page.getByRole('button', { name: 'Show Documentation Explorer' }).click();
      const docs = page.locator('.graphiql-doc-explorer');
      // Introspection ran (through Apollo's CSRF prevention): the root types are listed.
      await docs.getByText('Query', { exact: true }).first().click();
      await docs.getByText('userByExternalId', { exact: true }).first().waitFor();
      expect(await docs.innerText()).toContain('registeredUsers');
      expect(errors).toEqual([]);
    });
  });
});
