// GraphQL Code Generator, as a frontend app runs it: typed operations from the
// service's schema, and the persisted-documents manifest (hash → document) the
// service loads with GRAPHQL_TRUSTED_DOCUMENTS_MANIFEST. In an app, `schema` is
// the running service's https://<host>/schema.graphql; here, the repository's
// copy of the same file. `npm run generate` runs it.
import type { CodegenConfig } from '@graphql-codegen/cli';
import { addTypenameSelectionDocumentTransform } from '@graphql-codegen/client-preset';

const config: CodegenConfig = {
  overwrite: true,
  schema: '../../src/__generated__/schema.graphql',
  documents: ['src/**/*.ts', '!src/__generated__/**'],
  generates: {
    'src/__generated__/': {
      preset: 'client',
      presetConfig: {
        fragmentMasking: false,
        persistedDocuments: {
          // Documents keep their text (Apollo Client's cache reads it) and carry their hash.
          mode: 'embedHashInDocument',
          // Apollo's persisted queries and the service name documents by SHA-256.
          hashAlgorithm: 'sha256',
        },
      },
      // The documents the server runs select __typename, as the clients' caches need.
      documentTransforms: [addTypenameSelectionDocumentTransform],
      config: {
        useTypeImports: true,
        enumsAsTypes: true,
        strictScalars: true,
        scalars: { DateTime: 'string', SignedText: 'string | number' },
      },
    },
  },
};

export default config;
