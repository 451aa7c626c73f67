// graphql-ws clients for the live-event tests, as a browser or a Node app
// would connect: the `graphql-transport-ws` protocol on ws://…/graphql.
import { type Client, createClient } from 'graphql-ws';
import WebSocket from 'ws';

export interface Closed {
  code: number;
  reason: string;
}

export interface LiveClient {
  readonly client: Client;
  /** Resolves when the socket closes, with its close code and reason. */
  readonly closed: Promise<Closed>;
  /** Resolves once connection_ack arrived (rejects if the socket closed first). */
  readonly connected: Promise<void>;
  subscribe(query: string, variables?: Record<string, unknown>): Subscription;
  dispose(): Promise<void>;
}

export interface Subscription {
  readonly results: { data?: any; errors?: readonly { message: string; extensions?: Record<string, unknown> }[] }[];
  /** The data of each result so far. */
  readonly events: any[];
  /** Waits until `count` results arrived (or `ms` passed: then it fails, naming what arrived). */
  waitFor(count: number, ms?: number): Promise<void>;
  /** Set when the subscription completed or failed. */
  readonly ended: Promise<unknown>;
  unsubscribe(): void;
}

export const wsUrlOf = (baseUrl: string): string => `${baseUrl.replace(/^http/, 'ws')}/graphql`;

export function connectLive(
  baseUrl: string,
  connectionParams: Record<string, unknown> | undefined,
  options: { headers?: Record<string, string> } = {},
): LiveClient {
  let closedResolve!: (closed: Closed) => void;
  const closed = new Promise<Closed>((resolve) => (closedResolve = resolve));
  let ack!: () => void;
  let nack!: (error: unknown) => void;
  const connected = new Promise<void>((resolve, reject) => {
    ack = resolve;
    nack = reject;
  });
  connected.catch(() => {});
  const headers = options.headers;
  const client = createClient({
    url: wsUrlOf(baseUrl),
    webSocketImpl: headers
      ? class extends WebSocket {
          constructor(address: string, protocols?: string | string[]) {
            super(address, protocols, { headers });
          }
        }
      : WebSocket,
    connectionParams,
    lazy: false,
    retryAttempts: 0,
    onNonLazyError: () => {},
    on: {
      connected: () => ack(),
      closed: (event) => {
        const { code, reason } = event as { code: number; reason: string };
        closedResolve({ code, reason });
        nack(new Error(`closed ${code} ${reason}`));
      },
    },
  });
  return {
    client,
    closed,
    connected,
    subscribe(query, variables) {
      const results: Subscription['results'][number][] = [];
      let end!: (value: unknown) => void;
      const ended = new Promise((resolve) => (end = resolve));
      const waiters: (() => void)[] = [];
      const unsubscribe = client.subscribe(
        { query, variables },
        {
          next: (value) => {
            results.push(value);
            for (const waiter of waiters.splice(0)) waiter();
          },
          error: (error) => {
            end(error);
            for (const waiter of waiters.splice(0)) waiter();
          },
          complete: () => end(undefined),
        },
      );
      return {
        results,
        get events() {
          return results.map((result) => result.data);
        },
        async waitFor(count, ms = 5_000) {
          const deadline = Date.now() + ms;
          while (results.length < count) {
            const left = deadline - Date.now();
            if (left <= 0) throw new Error(`waited ${ms} ms for ${count} results, got ${results.length}: ${JSON.stringify(results).slice(0, 500)}`);
            await new Promise<void>((resolve) => {
              const timer = setTimeout(resolve, Math.min(left, 100));
              waiters.push(() => {
                clearTimeout(timer);
                resolve();
              });
            });
          }
        },
        ended,
        unsubscribe,
      };
    },
    dispose: () => client.dispose() as Promise<void>,
  };
}

export const sleep = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));

/**
 * A client connected with `params` and subscribed to `query`, once its
 * subscription is in place: the subscribe message is handled asynchronously,
 * so it is given time to register with the hub before the caller writes.
 * `track` collects the clients for the test file's afterEach to dispose.
 */
export async function subscribedLive(
  baseUrl: string,
  track: LiveClient[],
  params: Record<string, unknown>,
  query: string,
  variables: Record<string, unknown> = {},
): Promise<{ client: LiveClient; subscription: Subscription }> {
  const client = connectLive(baseUrl, params);
  track.push(client);
  await client.connected;
  const subscription = client.subscribe(query, variables);
  await sleep(150);
  return { client, subscription };
}
