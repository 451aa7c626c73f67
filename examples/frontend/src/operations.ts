// The operations this app sends. `graphql()` is generated (src/__generated__):
// each call returns a typed document whose result and variables types come
// from the schema, and which carries its SHA-256 hash (`__meta__.hash`) for
// trusted documents.
import { graphql } from './__generated__';

export const UserByExternalId = graphql(`
  query UserByExternalId($externalUserId: Int!) {
    userByExternalId(externalUserId: $externalUserId) {
      id
      login
      fullName
      phone
      externalUserId
      lastRequestAt
    }
  }
`);

export const RegisteredUsers = graphql(`
  query RegisteredUsers($udid: String) {
    registeredUsers(udid: $udid) {
      id
      login
      phone
    }
  }
`);

export const DeleteMessages = graphql(`
  mutation DeleteMessages($ids: [ID!]!, $force: Boolean) {
    deleteMessages(ids: $ids, force: $force) {
      successfullyDeleted
      notFound
    }
  }
`);

export const UploadAddressBook = graphql(`
  mutation UploadAddressBook($contacts: [ContactInput!]!, $udid: String, $force: Boolean) {
    uploadAddressBook(contacts: $contacts, udid: $udid, force: $force) {
      created
      updated
      deleted
    }
  }
`);
