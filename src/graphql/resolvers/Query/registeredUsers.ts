import type { QueryResolvers } from '../../../__generated__/resolvers-types';
import type { UserMapper } from '../../mappers/user.mappers';
import { selectsOnly } from '../../selection';

/** The fields the matches table holds for a user (the REST shim's compact=1 selects these). */
const MATCH_FIELDS = new Set(['id', 'phone']);

export const registeredUsers: NonNullable<QueryResolvers['registeredUsers']> = async (_parent, args, ctx, info) => {
  const caller = await ctx.caller();
  if (!selectsOnly(info, MATCH_FIELDS)) return ctx.services.addressBook.registeredUsers(caller, args.udid);
  // Only id and phone are selected: read them from the matches alone (no
  // users row), and graphql reads no other property of these rows. Hence the
  // cast: a UserMapper that admitted such rows (a union, or the other fields
  // optional) would have codegen require a resolver for each other User field.
  return (await ctx.services.addressBook.registeredUserPhones(caller, args.udid)) as UserMapper[];
};
