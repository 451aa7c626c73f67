// What the resolvers of schema/user.graphql return for a User: the Prisma
// model. The server preset compares it field by field with the GraphQL type
// (codegen.yml).
export type { User as UserMapper } from '../../__generated__/prisma/client';
