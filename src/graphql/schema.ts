// The executable schema: the SDL files in schema/ (one per domain) with the
// resolver map that codegen generates from them (src/__generated__/resolvers.ts,
// wiring the files of src/graphql/resolvers: one per root field).
import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { makeExecutableSchema } from '@graphql-tools/schema';
import type { GraphQLSchema } from 'graphql';
import { resolvers } from '../__generated__/resolvers';
import { SCHEMA_DIR } from '../paths';

export function loadTypeDefs(dir = SCHEMA_DIR): string[] {
  return readdirSync(dir)
    .filter((file) => file.endsWith('.graphql'))
    .sort()
    .map((file) => readFileSync(path.join(dir, file), 'utf8'));
}

export function buildSchema(): GraphQLSchema {
  return makeExecutableSchema({ typeDefs: loadTypeDefs(), resolvers });
}
