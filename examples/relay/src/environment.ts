// The Relay environment of a browser app against this service: a network
// that POSTs each operation's text with the session token, and a store whose
// records are keyed by getDataID below.
import {
  Environment,
  type FetchFunction,
  type GraphQLResponse,
  Network,
  RecordSource,
  type RelayFieldLogger,
  Store,
  VIEWER_ID,
  VIEWER_TYPE,
} from 'relay-runtime';

/**
 * The types whose `id` is not a global id yet: numbers that two types can
 * share (session 1 and user 1). Until 2.0 turns `User.id` into a global id
 * (schema/CHANGELOG.md), their records are keyed by type and id.
 */
const NUMBERED_TYPES = new Set(['User', 'Session']);

/**
 * Relay's store key for a record. Dialog and Message ids are global (unique
 * across types), so they key their records as they are; User and Session ids
 * are numbers, keyed as `User:1` and `Session:1`. A record without an id
 * (an edge, a PageInfo, a payload) answers undefined, so that Relay keys it
 * by its path from its parent, as it does by default; and the Viewer is
 * Relay's one viewer record, as by default. A function that prefixed every
 * typename instead would key every PageInfo as `PageInfo:undefined`: one
 * record for all of them.
 */
export function getDataID(record: { [key: string]: unknown }, typeName: string): unknown {
  const id = record.id as string | number | null | undefined;
  if (id == null) return typeName === VIEWER_TYPE ? VIEWER_ID : undefined;
  return NUMBERED_TYPES.has(typeName) ? `${typeName}:${id}` : id;
}

export interface EnvironmentOptions {
  /** The service's GraphQL endpoint, e.g. https://chat.example.com/graphql. */
  endpoint: string;
  /** The credential headers: `{ 'SVC-Token': token }`. */
  headers: Record<string, string>;
  /**
   * Told of each field the screen reads that the service answered null with
   * an error (`relay_field_payload.error`, with the service's error: its
   * message and `extensions.code`): where the app reports it. The rest of the
   * answer is on screen meanwhile.
   */
  relayFieldLogger?: RelayFieldLogger;
}

export function createEnvironment({ endpoint, headers, relayFieldLogger }: EnvironmentOptions): Environment {
  const fetchGraphQL: FetchFunction = async (request, variables) => {
    const response = await fetch(endpoint, {
      method: 'POST',
      headers: { 'content-type': 'application/json', ...headers },
      body: JSON.stringify({ query: request.text, variables }),
    });
    // A partial answer (data beside errors) is stored as it is: the fields
    // that failed are null, and Relay keeps their errors for relayFieldLogger.
    return (await response.json()) as GraphQLResponse;
  };
  return new Environment({
    network: Network.create(fetchGraphQL),
    store: new Store(new RecordSource()),
    getDataID,
    ...(relayFieldLogger ? { relayFieldLogger } : {}),
  });
}
