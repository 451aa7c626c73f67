// The hash GraphQL Code Generator embeds in each document (persistedDocuments:
// embedHashInDocument): the SHA-256 of the document's text in
// persisted-documents.json, under which the service finds it.
import type { DocumentNode } from 'graphql';

export function documentHash(document: DocumentNode): string {
  const hash = (document as { __meta__?: { hash?: unknown } }).__meta__?.hash;
  // Only generated documents are in the manifest: anything else would be refused.
  if (typeof hash !== 'string') throw new Error('not a generated document: it carries no __meta__.hash');
  return hash;
}
