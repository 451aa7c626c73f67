// What the resolvers of schema/user.graphql return for a User: the Prisma
// User model without its password hash, which no read selects. The server
// preset compares it field by field with the GraphQL type (codegen.yml).
export type { UserRecord as UserMapper } from '../../db/statements/users';
