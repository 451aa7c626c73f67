import type { MutationResolvers } from '../../../__generated__/resolvers-types';

export const uploadAddressBook: NonNullable<MutationResolvers['uploadAddressBook']> = async (_parent, args, ctx) =>
  ctx.services.addressBook.upload(await ctx.caller(), args.contacts, args.udid, args.force ?? false);
