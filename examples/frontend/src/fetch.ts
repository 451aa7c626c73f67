// No client library: GraphQL over HTTP with a persisted document's id
// (`documentId`, the GraphQL-over-HTTP persisted documents proposal's field).
// A query over GET is a short, stable URL; a mutation goes as POST.
import type { TypedDocumentNode } from '@graphql-typed-document-node/core';
import { documentHash } from './persisted';

export interface GraphQLResponse<TData> {
  data?: TData | null;
  errors?: { message: string; extensions?: { code?: string } }[];
}

export async function execute<TData, TVariables extends Record<string, unknown>>(
  endpoint: string,
  document: TypedDocumentNode<TData, TVariables>,
  variables: TVariables,
  headers: Record<string, string>,
): Promise<GraphQLResponse<TData>> {
  const documentId = `sha256:${documentHash(document)}`;
  const isQuery = document.definitions.some((d) => d.kind === 'OperationDefinition' && d.operation === 'query');
  const response = isQuery
    ? await fetch(`${endpoint}?${new URLSearchParams({ documentId, variables: JSON.stringify(variables) })}`, {
        headers: { accept: 'application/graphql-response+json, application/json', ...headers },
      })
    : await fetch(endpoint, {
        method: 'POST',
        headers: { 'content-type': 'application/json', accept: 'application/graphql-response+json, application/json', ...headers },
        body: JSON.stringify({ documentId, variables }),
      });
  return (await response.json()) as GraphQLResponse<TData>;
}
