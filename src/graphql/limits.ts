// Limits on the GraphQL documents /graphql accepts (@escape.tech/graphql-armor),
// so a single request cannot make the service parse, validate or resolve
// without end. Every operation of the schema, the explorer's examples and the
// explorer's introspection query fit well inside them (test/security).
//
// A document over a limit is refused before execution with 400 and
// extensions.code GRAPHQL_VALIDATION_FAILED (tokens: GRAPHQL_PARSE_FAILED).
// The REST paths run fixed, compiled operations and are not affected.
import type { ApolloServerPlugin, GraphQLRequestListener } from '@apollo/server';
import { ApolloArmor } from '@escape.tech/graphql-armor';

export const GRAPHQL_LIMITS = {
  /** Nesting of selections (graphql-armor counts a fragment spread as a level): real operations need 2–4. */
  maxDepth: 10,
  /**
   * Aliased fields per document: an alias multiplies the work of one field.
   * The REST paths' full-record documents alias 15 fields to the spec's
   * snake_case names; a client doing the same on /graphql keeps room.
   */
  maxAliases: 30,
  /** Directives per document. */
  maxDirectives: 50,
  /** Lexical tokens per document: real operations have 11–77, the introspection query ~180. */
  maxTokens: 2_000,
} as const;

/** graphql-js parse options: the token limit. */
export const parseOptions = { maxTokens: GRAPHQL_LIMITS.maxTokens };

/** `introspection`: whether the schema is public; if not, errors do not suggest field names either. */
export function graphqlArmor(introspection: boolean): ReturnType<ApolloArmor['protect']> {
  // Introspection is exempt from depth and cost: the standard introspection
  // query is 21 deep (its type-reference chain). Its abuse, nested
  // fields { type { fields … } }, is refused by graphql-js's own
  // MaxIntrospectionDepthRule, one of the specifiedRules Apollo always runs.
  const armor = new ApolloArmor({
    maxDepth: { n: GRAPHQL_LIMITS.maxDepth, ignoreIntrospection: true },
    // The one cost rule is the service's, which counts the rows a document's
    // fields read (cost.ts). graphql-armor's counts a document's shape: it
    // refused a chat screen's ordinary query (ten dialogs with their last five
    // messages: 9,005 > 5,000) while that reads 61 rows.
    costLimit: { enabled: false },
    maxAliases: { n: GRAPHQL_LIMITS.maxAliases },
    maxDirectives: { n: GRAPHQL_LIMITS.maxDirectives },
    // graphql-js counts tokens itself while parsing (Apollo's parseOptions,
    // apollo.ts): one parse, and a clean 400. graphql-armor's plugin parses each
    // new document a second time and fails with a 500 on syntax errors.
    maxTokens: { enabled: false },
    // The service's own below: the same masking, one listener for every request.
    blockFieldSuggestion: { enabled: false },
  }).protect();
  // "Did you mean …?" would spell out a schema that introspection hides.
  return introspection ? armor : { ...armor, plugins: [...armor.plugins, suggestionsHidden] };
}

/**
 * graphql-armor's blockFieldSuggestion for Apollo, with the same pattern and
 * mask, but one listener shared by every request: armor's makes a listener
 * (and a promise) per request to hold nothing of the request's.
 */
const SUGGESTION = /Did you mean ".+"/g;
const hideSuggestions: GraphQLRequestListener<object> = {
  async didEncounterErrors({ errors }) {
    for (const error of errors) (error as { message: string }).message = error.message.replace(SUGGESTION, '[Suggestion hidden]');
  },
};
const hidingSuggestions = Promise.resolve(hideSuggestions);
const suggestionsHidden: ApolloServerPlugin<object> = { requestDidStart: () => hidingSuggestions };
