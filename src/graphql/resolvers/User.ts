import type { UserResolvers } from '../../__generated__/resolvers-types';

// The Prisma User model (the mapper) matches the GraphQL User field for field,
// so every field but databaseId resolves by name. Should they ever differ,
// codegen adds a field resolver stub here, and tsc fails until it is written.
export const User: UserResolvers = {
  // The same number as `id` until 2.0 makes `id` a global ID (schema/CHANGELOG.md).
  databaseId: (user) => user.id,
};
