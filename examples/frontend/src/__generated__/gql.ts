/* eslint-disable */
import * as types from './graphql';
import type { TypedDocumentNode as DocumentNode } from '@graphql-typed-document-node/core';

/**
 * Map of all GraphQL operations in the project.
 *
 * This map has several performance disadvantages:
 * 1. It is not tree-shakeable, so it will include all operations in the project.
 * 2. It is not minifiable, so the string of a GraphQL query will be multiple times inside the bundle.
 * 3. It does not support dead code elimination, so it will add unused operations.
 *
 * Therefore it is highly recommended to use the babel or swc plugin for production.
 * Learn more about it here: https://the-guild.dev/graphql/codegen/plugins/presets/preset-client#reducing-bundle-size
 */
type Documents = {
    "\n  subscription MessageAdded($dialogId: ID, $after: String) {\n    messageAdded(dialogId: $dialogId, after: $after) {\n      cursor\n      message {\n        id\n        databaseId\n        body\n        createdAt\n        sender {\n          id\n          login\n        }\n      }\n    }\n  }\n": typeof types.MessageAddedDocument,
    "\n  subscription MessagesDeleted($dialogId: ID, $after: String) {\n    messagesDeleted(dialogId: $dialogId, after: $after) {\n      cursor\n      dialogId\n      scope\n      deletedMessageIds\n    }\n  }\n": typeof types.MessagesDeletedDocument,
    "\n  query ChatScreen($dialogId: ID!) {\n    node(id: $dialogId) {\n      id\n      ... on Dialog {\n        messages(last: 50) {\n          edges {\n            cursor\n            node {\n              id\n              databaseId\n              body\n              createdAt\n            }\n          }\n        }\n      }\n    }\n  }\n": typeof types.ChatScreenDocument,
    "\n  query UserByExternalId($externalUserId: Int!) {\n    userByExternalId(externalUserId: $externalUserId) {\n      id\n      login\n      fullName\n      phone\n      externalUserId\n      lastRequestAt\n    }\n  }\n": typeof types.UserByExternalIdDocument,
    "\n  query RegisteredUsers($udid: String) {\n    registeredUsers(udid: $udid) {\n      id\n      login\n      phone\n    }\n  }\n": typeof types.RegisteredUsersDocument,
    "\n  mutation DeleteMessages($ids: [ID!]!, $force: Boolean) {\n    deleteMessages(ids: $ids, force: $force) {\n      successfullyDeleted\n      notFound\n    }\n  }\n": typeof types.DeleteMessagesDocument,
    "\n  mutation UploadAddressBook($contacts: [ContactInput!]!, $udid: String, $force: Boolean) {\n    uploadAddressBook(contacts: $contacts, udid: $udid, force: $force) {\n      created\n      updated\n      deleted\n    }\n  }\n": typeof types.UploadAddressBookDocument,
};
const documents: Documents = {
    "\n  subscription MessageAdded($dialogId: ID, $after: String) {\n    messageAdded(dialogId: $dialogId, after: $after) {\n      cursor\n      message {\n        id\n        databaseId\n        body\n        createdAt\n        sender {\n          id\n          login\n        }\n      }\n    }\n  }\n": types.MessageAddedDocument,
    "\n  subscription MessagesDeleted($dialogId: ID, $after: String) {\n    messagesDeleted(dialogId: $dialogId, after: $after) {\n      cursor\n      dialogId\n      scope\n      deletedMessageIds\n    }\n  }\n": types.MessagesDeletedDocument,
    "\n  query ChatScreen($dialogId: ID!) {\n    node(id: $dialogId) {\n      id\n      ... on Dialog {\n        messages(last: 50) {\n          edges {\n            cursor\n            node {\n              id\n              databaseId\n              body\n              createdAt\n            }\n          }\n        }\n      }\n    }\n  }\n": types.ChatScreenDocument,
    "\n  query UserByExternalId($externalUserId: Int!) {\n    userByExternalId(externalUserId: $externalUserId) {\n      id\n      login\n      fullName\n      phone\n      externalUserId\n      lastRequestAt\n    }\n  }\n": types.UserByExternalIdDocument,
    "\n  query RegisteredUsers($udid: String) {\n    registeredUsers(udid: $udid) {\n      id\n      login\n      phone\n    }\n  }\n": types.RegisteredUsersDocument,
    "\n  mutation DeleteMessages($ids: [ID!]!, $force: Boolean) {\n    deleteMessages(ids: $ids, force: $force) {\n      successfullyDeleted\n      notFound\n    }\n  }\n": types.DeleteMessagesDocument,
    "\n  mutation UploadAddressBook($contacts: [ContactInput!]!, $udid: String, $force: Boolean) {\n    uploadAddressBook(contacts: $contacts, udid: $udid, force: $force) {\n      created\n      updated\n      deleted\n    }\n  }\n": types.UploadAddressBookDocument,
};

/**
 * The graphql function is used to parse GraphQL queries into a document that can be used by GraphQL clients.
 *
 *
 * @example
 * ```ts
 * const query = graphql(`query GetUser($id: ID!) { user(id: $id) { name } }`);
 * ```
 *
 * The query argument is unknown!
 * Please regenerate the types.
 */
export function graphql(source: string): unknown;

/**
 * The graphql function is used to parse GraphQL queries into a document that can be used by GraphQL clients.
 */
export function graphql(source: "\n  subscription MessageAdded($dialogId: ID, $after: String) {\n    messageAdded(dialogId: $dialogId, after: $after) {\n      cursor\n      message {\n        id\n        databaseId\n        body\n        createdAt\n        sender {\n          id\n          login\n        }\n      }\n    }\n  }\n"): (typeof documents)["\n  subscription MessageAdded($dialogId: ID, $after: String) {\n    messageAdded(dialogId: $dialogId, after: $after) {\n      cursor\n      message {\n        id\n        databaseId\n        body\n        createdAt\n        sender {\n          id\n          login\n        }\n      }\n    }\n  }\n"];
/**
 * The graphql function is used to parse GraphQL queries into a document that can be used by GraphQL clients.
 */
export function graphql(source: "\n  subscription MessagesDeleted($dialogId: ID, $after: String) {\n    messagesDeleted(dialogId: $dialogId, after: $after) {\n      cursor\n      dialogId\n      scope\n      deletedMessageIds\n    }\n  }\n"): (typeof documents)["\n  subscription MessagesDeleted($dialogId: ID, $after: String) {\n    messagesDeleted(dialogId: $dialogId, after: $after) {\n      cursor\n      dialogId\n      scope\n      deletedMessageIds\n    }\n  }\n"];
/**
 * The graphql function is used to parse GraphQL queries into a document that can be used by GraphQL clients.
 */
export function graphql(source: "\n  query ChatScreen($dialogId: ID!) {\n    node(id: $dialogId) {\n      id\n      ... on Dialog {\n        messages(last: 50) {\n          edges {\n            cursor\n            node {\n              id\n              databaseId\n              body\n              createdAt\n            }\n          }\n        }\n      }\n    }\n  }\n"): (typeof documents)["\n  query ChatScreen($dialogId: ID!) {\n    node(id: $dialogId) {\n      id\n      ... on Dialog {\n        messages(last: 50) {\n          edges {\n            cursor\n            node {\n              id\n              databaseId\n              body\n              createdAt\n            }\n          }\n        }\n      }\n    }\n  }\n"];
/**
 * The graphql function is used to parse GraphQL queries into a document that can be used by GraphQL clients.
 */
export function graphql(source: "\n  query UserByExternalId($externalUserId: Int!) {\n    userByExternalId(externalUserId: $externalUserId) {\n      id\n      login\n      fullName\n      phone\n      externalUserId\n      lastRequestAt\n    }\n  }\n"): (typeof documents)["\n  query UserByExternalId($externalUserId: Int!) {\n    userByExternalId(externalUserId: $externalUserId) {\n      id\n      login\n      fullName\n      phone\n      externalUserId\n      lastRequestAt\n    }\n  }\n"];
/**
 * The graphql function is used to parse GraphQL queries into a document that can be used by GraphQL clients.
 */
export function graphql(source: "\n  query RegisteredUsers($udid: String) {\n    registeredUsers(udid: $udid) {\n      id\n      login\n      phone\n    }\n  }\n"): (typeof documents)["\n  query RegisteredUsers($udid: String) {\n    registeredUsers(udid: $udid) {\n      id\n      login\n      phone\n    }\n  }\n"];
/**
 * The graphql function is used to parse GraphQL queries into a document that can be used by GraphQL clients.
 */
export function graphql(source: "\n  mutation DeleteMessages($ids: [ID!]!, $force: Boolean) {\n    deleteMessages(ids: $ids, force: $force) {\n      successfullyDeleted\n      notFound\n    }\n  }\n"): (typeof documents)["\n  mutation DeleteMessages($ids: [ID!]!, $force: Boolean) {\n    deleteMessages(ids: $ids, force: $force) {\n      successfullyDeleted\n      notFound\n    }\n  }\n"];
/**
 * The graphql function is used to parse GraphQL queries into a document that can be used by GraphQL clients.
 */
export function graphql(source: "\n  mutation UploadAddressBook($contacts: [ContactInput!]!, $udid: String, $force: Boolean) {\n    uploadAddressBook(contacts: $contacts, udid: $udid, force: $force) {\n      created\n      updated\n      deleted\n    }\n  }\n"): (typeof documents)["\n  mutation UploadAddressBook($contacts: [ContactInput!]!, $udid: String, $force: Boolean) {\n    uploadAddressBook(contacts: $contacts, udid: $udid, force: $force) {\n      created\n      updated\n      deleted\n    }\n  }\n"];

export function graphql(source: string) {
  return (documents as any)[source] ?? {};
}

export type DocumentType<TDocumentNode extends DocumentNode<any, any>> = TDocumentNode extends DocumentNode<  infer TType,  any>  ? TType  : never;