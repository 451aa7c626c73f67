/* eslint-disable */
import type { TypedDocumentNode as DocumentNode } from '@graphql-typed-document-node/core';
export type Maybe<T> = T | null;
export type InputMaybe<T> = Maybe<T>;
export type Exact<T extends { [key: string]: unknown }> = { [K in keyof T]: T[K] };
export type MakeOptional<T, K extends keyof T> = Omit<T, K> & { [SubKey in K]?: Maybe<T[SubKey]> };
export type MakeMaybe<T, K extends keyof T> = Omit<T, K> & { [SubKey in K]: Maybe<T[SubKey]> };
export type MakeEmpty<T extends { [key: string]: unknown }, K extends keyof T> = { [_ in K]?: never };
export type Incremental<T> = T | { [P in keyof T]?: P extends ' $fragmentName' | '__typename' ? T[P] : never };
/** All built-in and custom scalars, mapped to their actual values */
export type Scalars = {
  ID: { input: string; output: string; }
  String: { input: string; output: string; }
  Boolean: { input: boolean; output: boolean; }
  Int: { input: number; output: number; }
  Float: { input: number; output: number; }
  /** An ISO 8601 timestamp in UTC, e.g. "2026-11-21T14:03:00.000Z". */
  DateTime: { input: string; output: string; }
  /**
   * A text that is signed as it is sent: an Int or a String in input, kept as the
   * exact text received (a signature covers that text, so `076730` and `76730`
   * differ). Used for the signed parameters of `createSession`.
   */
  SignedText: { input: string | number; output: string | number; }
};

/**
 * Counts of an upload: contacts added, contacts whose name changed, contacts
 * removed (`destroy`, or no longer in the list with `force`), and the contacts
 * that were not taken.
 */
export type AddressBookUploadResult = {
  __typename?: 'AddressBookUploadResult';
  created: Scalars['Int']['output'];
  deleted: Scalars['Int']['output'];
  rejected: Array<RejectedContact>;
  updated: Scalars['Int']['output'];
};

/**
 * A contact of the caller's address book. It has no id of its own: it is a value
 * of the book (its phone is its key within it), so normalized caches store it
 * inside its parent (Graphcache: `keys: { Contact: () => null }`, docs/graphql.md).
 */
export type Contact = {
  __typename?: 'Contact';
  name: Scalars['String']['output'];
  phone: Scalars['String']['output'];
};

/**
 * An address-book entry as uploaded. Phones are 10 to 15 digits with an optional
 * leading "+", compared as exact strings. A contact that fails these rules is
 * reported in `rejected`, not stored; the others are.
 */
export type ContactInput = {
  /** Remove this phone from the book instead of adding it. */
  destroy?: InputMaybe<Scalars['Boolean']['input']>;
  /** 1 to 255 characters; not needed with `destroy`. */
  name?: InputMaybe<Scalars['String']['input']>;
  phone?: InputMaybe<Scalars['String']['input']>;
};

/**
 * Outcome of a delete. An id is either in `successfullyDeleted` or in `notFound`
 * (a message that does not exist, is not visible to the caller, was already
 * deleted, or is not a well-formed id).
 */
export type DeleteMessagesResult = {
  __typename?: 'DeleteMessagesResult';
  notFound: Array<Scalars['ID']['output']>;
  successfullyDeleted: Array<Scalars['ID']['output']>;
};

/**
 * A chat: its occupants exchange messages. `databaseId` is the 24-hex id the
 * REST paths and the SDKs use (`chat_dialog_id`).
 */
export type Dialog = Node & {
  __typename?: 'Dialog';
  createdAt: Scalars['DateTime']['output'];
  databaseId: Scalars['String']['output'];
  id: Scalars['ID']['output'];
  /** The time of `lastMessage`, else the dialog's creation: what `Viewer.dialogs` orders by. */
  lastActivityAt: Scalars['DateTime']['output'];
  /** The newest message of the caller's history (null when it is empty). */
  lastMessage?: Maybe<Message>;
  /**
   * The caller's history of the dialog in the order it was sent (oldest first,
   * ties by id), without the messages deleted for everyone or hidden by the
   * caller. `first` (1 to 1000) after `after`, or `last` (1 to 1000) before
   * `before`: a screen reads the newest with `last` and pages back with
   * `before`. Keyset paging: a page costs the same wherever it starts. Neither
   * `first` nor `last`: the first 50.
   */
  messages?: Maybe<MessageConnection>;
  /** Null when the dialog has no name. */
  name?: Maybe<Scalars['String']['output']>;
  /** Every occupant, the owner included, by user id. */
  occupants: Array<User>;
  owner?: Maybe<User>;
  /** QuickBlox's dialog type: 1 public group, 2 group, 3 private (one to one). */
  type: Scalars['Int']['output'];
};


/**
 * A chat: its occupants exchange messages. `databaseId` is the 24-hex id the
 * REST paths and the SDKs use (`chat_dialog_id`).
 */
export type DialogMessagesArgs = {
  after?: InputMaybe<Scalars['String']['input']>;
  before?: InputMaybe<Scalars['String']['input']>;
  first?: InputMaybe<Scalars['Int']['input']>;
  last?: InputMaybe<Scalars['Int']['input']>;
};

/** A page of dialogs. */
export type DialogConnection = {
  __typename?: 'DialogConnection';
  edges: Array<DialogEdge>;
  pageInfo: PageInfo;
  /** How many dialogs the caller occupies (all pages). */
  totalCount: Scalars['Int']['output'];
};

export type DialogEdge = {
  __typename?: 'DialogEdge';
  cursor: Scalars['String']['output'];
  node: Dialog;
};

/**
 * A message of a dialog. `databaseId` is its 24-hex id (REST's `_id`); either
 * id is accepted by `messagesDelete`.
 */
export type Message = Node & {
  __typename?: 'Message';
  /** The text; null once the content is removed. */
  body?: Maybe<Scalars['String']['output']>;
  createdAt: Scalars['DateTime']['output'];
  databaseId: Scalars['String']['output'];
  dialog?: Maybe<Dialog>;
  id: Scalars['ID']['output'];
  /** Null when the sender's account is gone. */
  sender?: Maybe<User>;
};

/** A message sent to one of the subscriber's dialogs. */
export type MessageAddedEvent = {
  __typename?: 'MessageAddedEvent';
  /** Where this event is in the order of events: pass it as `after` when subscribing again. */
  cursor: Scalars['String']['output'];
  /**
   * The message as its subscriber sees it when the event is delivered: its
   * `body` null when it was deleted for everyone, or hidden by the subscriber,
   * before that (the deletion's own event follows in `messagesDeleted`).
   */
  message: Message;
};

/** A page of a dialog's history. */
export type MessageConnection = {
  __typename?: 'MessageConnection';
  edges: Array<MessageEdge>;
  pageInfo: PageInfo;
};

export type MessageDeleteOutcome = {
  __typename?: 'MessageDeleteOutcome';
  /** The message's global id (null for INVALID_ID). */
  messageId?: Maybe<Scalars['ID']['output']>;
  /** The id as requested. */
  requestedId: Scalars['String']['output'];
  status: MessageDeleteStatus;
};

/** Whose messages a delete removes: the caller's history only, or everyone's. */
export type MessageDeleteScope =
  /** Deleted for every occupant (the dialog's owner only). */
  | 'FOR_EVERYONE'
  /** Hidden from the caller's history only (any occupant may). */
  | 'FOR_ME';

/** What happened to one requested id of `messagesDelete`. */
export type MessageDeleteStatus =
  /** Deleted (for everyone) or hidden (for the caller), as the scope says. */
  | 'DELETED'
  /** Neither a Message's global id nor a 24-hex message id. */
  | 'INVALID_ID'
  /** A well-formed id that names no message the caller can see (absent, another application's, already deleted or hidden). */
  | 'NOT_FOUND'
  /** A message the caller may not delete in this scope: the request deleted nothing (see userErrors). */
  | 'NOT_PERMITTED'
  /** A message that would have been deleted, left as it was because another id was refused (a request deletes all or nothing). */
  | 'SKIPPED';

export type MessageEdge = {
  __typename?: 'MessageEdge';
  cursor: Scalars['String']['output'];
  node: Message;
};

export type MessageSendErrorCode =
  /** The body is empty or only white space. */
  | 'BODY_BLANK'
  /** The body is longer than 10,000 characters. */
  | 'BODY_TOO_LONG'
  /** No dialog with this id that the caller occupies. */
  | 'DIALOG_NOT_FOUND';

export type MessageSendInput = {
  /** 1 to 10,000 characters (Unicode code points), not only white space. */
  body: Scalars['String']['input'];
  /** Echoed in the payload. */
  clientMutationId?: InputMaybe<Scalars['String']['input']>;
  /** The dialog: its global id or its 24-hex id. */
  dialogId: Scalars['String']['input'];
};

export type MessageSendPayload = {
  __typename?: 'MessageSendPayload';
  clientMutationId?: Maybe<Scalars['String']['output']>;
  /** The message sent; null when userErrors refused it. */
  message?: Maybe<Message>;
  userErrors: Array<MessageSendUserError>;
};

export type MessageSendUserError = {
  __typename?: 'MessageSendUserError';
  code: MessageSendErrorCode;
  field?: Maybe<Array<Scalars['String']['output']>>;
  message: Scalars['String']['output'];
};

export type MessagesDeleteErrorCode =
  /** No ids. */
  | 'NO_IDS'
  /** More than 1000 ids: nothing was deleted. */
  | 'TOO_MANY_IDS'
  /** A message is not the caller's to delete in this scope: nothing was deleted. */
  | 'WRONG_PERMISSIONS';

export type MessagesDeleteInput = {
  /** Echoed in the payload. */
  clientMutationId?: InputMaybe<Scalars['String']['input']>;
  /** 1 to 1000 ids: global ids of Message, or 24-hex message ids (mixed as you like). */
  messageIds: Array<Scalars['String']['input']>;
  scope?: MessageDeleteScope;
};

export type MessagesDeletePayload = {
  __typename?: 'MessagesDeletePayload';
  clientMutationId?: Maybe<Scalars['String']['output']>;
  /** Global ids of the messages deleted (for @deleteRecord and cache.evict). */
  deletedMessageIds: Array<Scalars['ID']['output']>;
  /** One per distinct requested id, in request order (empty when userErrors says NO_IDS or TOO_MANY_IDS). */
  outcomes: Array<MessageDeleteOutcome>;
  userErrors: Array<MessagesDeleteUserError>;
};

/**
 * A refusal the client can show next to the input it concerns: `field` is the
 * path to that input (e.g. ["input", "messageIds"]), null for the request as a whole.
 */
export type MessagesDeleteUserError = {
  __typename?: 'MessagesDeleteUserError';
  code: MessagesDeleteErrorCode;
  field?: Maybe<Array<Scalars['String']['output']>>;
  message: Scalars['String']['output'];
};

/** Messages deleted in one dialog by one write. Never carries a message body. */
export type MessagesDeletedEvent = {
  __typename?: 'MessagesDeletedEvent';
  /** Where this event is in the order of events: pass it as `after` when subscribing again. */
  cursor: Scalars['String']['output'];
  deletedAt: Scalars['DateTime']['output'];
  /** The messages' database ids (24-hex), as REST names them. */
  deletedMessageDatabaseIds: Array<Scalars['String']['output']>;
  /** The messages' global ids (as `Message.id`). */
  deletedMessageIds: Array<Scalars['ID']['output']>;
  /** The dialog as the subscriber sees it when the event is delivered (null if they no longer occupy it). */
  dialog?: Maybe<Dialog>;
  /** The dialog's global id (as `Dialog.id`). */
  dialogId: Scalars['ID']['output'];
  scope: MessageDeleteScope;
};

/** Writes. Credentials travel in the same headers as for queries. */
export type Mutation = {
  __typename?: 'Mutation';
  /**
   * Creates a session from a signed request; needs no credentials. Refused with
   * UNKNOWN_APPLICATION, INVALID_SIGNATURE, TIMESTAMP_OUT_OF_WINDOW, NONCE_REUSED,
   * UNAUTHENTICATED (wrong login or password, one answer for both) or
   * TOO_MANY_REQUESTS (too many failed passwords); a refused request stores nothing.
   */
  createSession: Session;
  /**
   * Deletes messages by id (1 to 1000 ids).
   *
   * - User token (or API key with On-Behalf-Of), no `force`: hidden from the
   *   caller's history only; any occupant of the dialog may do it.
   * - User token (or API key with On-Behalf-Of), `force: true`: deleted for
   *   everyone; only the dialog's owner may do it, else WRONG_PERMISSIONS.
   * - API key without On-Behalf-Of: deleted for everyone, `force` or not;
   *   WRONG_PERMISSIONS when a message belongs to another application.
   *
   * A request that fails a permission check deletes nothing.
   * @deprecated Use messagesDelete: an outcome per id, global ids, and refusals in userErrors. Removed no earlier than 2027-06-01 (the notice period, docs/graphql.md).
   */
  deleteMessages: DeleteMessagesResult;
  /** Ends the request's session: its token is refused from then on. */
  endSession: Scalars['Boolean']['output'];
  /**
   * Turns the request's session into the session of the user with this login
   * (or email) and password, and answers that user. UNAUTHENTICATED for a wrong
   * login or password (or an email beside the login that is not the user's);
   * TOO_MANY_REQUESTS past the failed-attempt budgets; BAD_USER_INPUT when
   * neither login nor email, or no password, is given.
   */
  login: User;
  /** Turns the request's session back into an application session (read-only). */
  logout: Session;
  /**
   * Sends a message to a dialog the caller occupies (a user session token, or an
   * API key with On-Behalf-Of). Refused input is in `userErrors`.
   */
  messageSend?: Maybe<MessageSendPayload>;
  /**
   * Deletes messages with an outcome per id: the rules of `deleteMessages`
   * (`scope: FOR_ME` is its default, `FOR_EVERYONE` its `force: true`; an API
   * key without On-Behalf-Of deletes for everyone in either scope), and the same
   * all-or-nothing permission check. Refusals are in `userErrors`; credentials
   * that fail answer an error and a null payload.
   */
  messagesDelete?: Maybe<MessagesDeletePayload>;
  /**
   * Uploads contacts into the caller's global address book, or the book of device
   * `udid`. Without `force` contacts are added or renamed (matched by phone) and
   * those marked `destroy` removed; with `force: true` the book becomes exactly
   * the contacts taken. A phone listed twice counts once, as its last entry says.
   */
  uploadAddressBook: AddressBookUploadResult;
};


/** Writes. Credentials travel in the same headers as for queries. */
export type MutationCreateSessionArgs = {
  input: SessionRequestInput;
};


/** Writes. Credentials travel in the same headers as for queries. */
export type MutationDeleteMessagesArgs = {
  force?: InputMaybe<Scalars['Boolean']['input']>;
  ids: Array<Scalars['ID']['input']>;
};


/** Writes. Credentials travel in the same headers as for queries. */
export type MutationLoginArgs = {
  email?: InputMaybe<Scalars['String']['input']>;
  login?: InputMaybe<Scalars['String']['input']>;
  password?: InputMaybe<Scalars['String']['input']>;
};


/** Writes. Credentials travel in the same headers as for queries. */
export type MutationMessageSendArgs = {
  input: MessageSendInput;
};


/** Writes. Credentials travel in the same headers as for queries. */
export type MutationMessagesDeleteArgs = {
  input: MessagesDeleteInput;
};


/** Writes. Credentials travel in the same headers as for queries. */
export type MutationUploadAddressBookArgs = {
  contacts: Array<ContactInput>;
  force?: InputMaybe<Scalars['Boolean']['input']>;
  udid?: InputMaybe<Scalars['String']['input']>;
};

/**
 * An object with a global id (Relay's Global Object Identification). The id is
 * opaque: pass it back to `node`/`nodes`, never parse it. Types that have one
 * also answer `databaseId`, the id the REST paths and the SDKs use.
 */
export type Node = {
  id: Scalars['ID']['output'];
};

/**
 * Where a page starts and ends, and whether more follow or precede it (Relay's
 * Cursor Connections). Paging forward, `hasPreviousPage` is true when the page
 * starts after a cursor; paging backward, `hasNextPage` is true when it ends
 * before one (what a client paging that way needs, without a count).
 */
export type PageInfo = {
  __typename?: 'PageInfo';
  /** The cursor of the page's last edge (null for an empty page): pass it as `after` for the next page. */
  endCursor?: Maybe<Scalars['String']['output']>;
  hasNextPage: Scalars['Boolean']['output'];
  hasPreviousPage: Scalars['Boolean']['output'];
  /** The cursor of the page's first edge (null for an empty page): pass it as `before` for the page before. */
  startCursor?: Maybe<Scalars['String']['output']>;
};

/**
 * Reads. Every field needs credentials in the request headers: `SVC-Token: <token>`,
 * or `Authorization: ApiKey <key>` (optionally with `On-Behalf-Of: <user id>`).
 */
export type Query = {
  __typename?: 'Query';
  /** The contacts of the caller's address book (global, or device `udid`'s), in upload order. */
  addressBook: Array<Contact>;
  /**
   * The object with this global id, or null when there is none or the caller
   * may not see it (a dialog they do not occupy, a message they cannot see,
   * another application's). A malformed id is null too, not an error.
   */
  node?: Maybe<Node>;
  /** `node` for each id (at most 100), in order: null where `node` would be null. */
  nodes: Array<Maybe<Node>>;
  /**
   * Users of the caller's application whose phone equals the phone of a contact
   * in the caller's address book: the global book, or the book of device `udid`
   * (at most 64 characters) when given. Ordered by user id; each user once.
   */
  registeredUsers: Array<User>;
  /**
   * The users `registeredUsers` lists, a page at a time: the `first` (1 to 1000)
   * after the cursor `after` (from the start when absent), ordered by user id.
   * Keyset paging: a page costs the same wherever it starts, and users matched
   * or unmatched between pages do not shift the others. A cursor is opaque; one
   * this field did not return is refused (BAD_USER_INPUT, field `after`).
   * With `last` (1 to 1000) the page is read backward: the `last` users before
   * the cursor `before` (from the end when absent), still ordered by user id;
   * `first` is then not applied.
   */
  registeredUsersConnection: RegisteredUsersConnection;
  /**
   * The session of the request's session token. Fails with FORBIDDEN for an API
   * key (it has no session).
   */
  session: Session;
  /**
   * The user of the caller's application whose `externalUserId` equals the
   * argument (1 to 2147483647). Needs a user session token or an API key.
   * Fails with NOT_FOUND when there is none.
   */
  userByExternalId?: Maybe<User>;
  /**
   * The caller, for a user session token or an API key with On-Behalf-Of
   * (FORBIDDEN otherwise); null with the credentials' error when they fail.
   */
  viewer?: Maybe<Viewer>;
};


/**
 * Reads. Every field needs credentials in the request headers: `SVC-Token: <token>`,
 * or `Authorization: ApiKey <key>` (optionally with `On-Behalf-Of: <user id>`).
 */
export type QueryAddressBookArgs = {
  udid?: InputMaybe<Scalars['String']['input']>;
};


/**
 * Reads. Every field needs credentials in the request headers: `SVC-Token: <token>`,
 * or `Authorization: ApiKey <key>` (optionally with `On-Behalf-Of: <user id>`).
 */
export type QueryNodeArgs = {
  id: Scalars['ID']['input'];
};


/**
 * Reads. Every field needs credentials in the request headers: `SVC-Token: <token>`,
 * or `Authorization: ApiKey <key>` (optionally with `On-Behalf-Of: <user id>`).
 */
export type QueryNodesArgs = {
  ids: Array<Scalars['ID']['input']>;
};


/**
 * Reads. Every field needs credentials in the request headers: `SVC-Token: <token>`,
 * or `Authorization: ApiKey <key>` (optionally with `On-Behalf-Of: <user id>`).
 */
export type QueryRegisteredUsersArgs = {
  udid?: InputMaybe<Scalars['String']['input']>;
};


/**
 * Reads. Every field needs credentials in the request headers: `SVC-Token: <token>`,
 * or `Authorization: ApiKey <key>` (optionally with `On-Behalf-Of: <user id>`).
 */
export type QueryRegisteredUsersConnectionArgs = {
  after?: InputMaybe<Scalars['String']['input']>;
  before?: InputMaybe<Scalars['String']['input']>;
  first?: Scalars['Int']['input'];
  last?: InputMaybe<Scalars['Int']['input']>;
  udid?: InputMaybe<Scalars['String']['input']>;
};


/**
 * Reads. Every field needs credentials in the request headers: `SVC-Token: <token>`,
 * or `Authorization: ApiKey <key>` (optionally with `On-Behalf-Of: <user id>`).
 */
export type QueryUserByExternalIdArgs = {
  externalUserId: Scalars['Int']['input'];
};

/** A registered user in a page of them, with the cursor that continues after them. */
export type RegisteredUserEdge = {
  __typename?: 'RegisteredUserEdge';
  /** Pass as `after` to get the users after this one. */
  cursor: Scalars['String']['output'];
  node: User;
};

/** One page of the registered users an address book matches, ordered by user id. */
export type RegisteredUsersConnection = {
  __typename?: 'RegisteredUsersConnection';
  edges: Array<RegisteredUserEdge>;
  pageInfo: PageInfo;
};

/** A contact of an upload that was not taken: its index in the upload and why. */
export type RejectedContact = {
  __typename?: 'RejectedContact';
  index: Scalars['Int']['output'];
  reasons: Array<Scalars['String']['output']>;
};

/**
 * A session: its token goes in the `SVC-Token` or `QB-Token` header of later
 * requests. A user session (`userId` set) may read and write; an application
 * session only reads, and `login` turns it into a user session.
 */
export type Session = {
  __typename?: 'Session';
  applicationId: Scalars['Int']['output'];
  createdAt: Scalars['DateTime']['output'];
  /** Two hours after the session's last request; every request moves it. */
  expiresAt: Scalars['DateTime']['output'];
  id: Scalars['Int']['output'];
  /** The nonce of the signed request that created the session (null for sessions the admin CLI made). */
  nonce?: Maybe<Scalars['String']['output']>;
  /** The signed timestamp of that request. */
  signedAt?: Maybe<Scalars['DateTime']['output']>;
  /** The session token (the one just created, or the one the request sent). */
  token: Scalars['String']['output'];
  /** When a login or logout last changed the session's user. */
  updatedAt: Scalars['DateTime']['output'];
  /** The logged-in user; null for an application session. */
  userId?: Maybe<Scalars['Int']['output']>;
};

/**
 * A session request as QuickBlox SDKs sign it. `signature` is the hex HMAC-SHA1
 * (or HMAC-SHA256) under the application's auth secret of the parameters under
 * QuickBlox's names, as `key=value` pairs sorted and joined with `&`:
 * `application_id=…&auth_key=…&nonce=…&timestamp=…`, plus
 * `user[email]=…`/`user[login]=…` and `user[password]=…` when `user` is given.
 */
export type SessionRequestInput = {
  applicationId: Scalars['SignedText']['input'];
  authKey: Scalars['String']['input'];
  /** Never the same twice with the same timestamp (1 to 64 printable characters). */
  nonce: Scalars['SignedText']['input'];
  signature: Scalars['String']['input'];
  /** Unix time in seconds; at most an hour (SESSION_TIMESTAMP_WINDOW_S) from the server's clock. */
  timestamp: Scalars['SignedText']['input'];
  /** A user to log in at once; without it the session is the application's. */
  user?: InputMaybe<SessionUserInput>;
};

/** Login or email, and password (all checked by the service, with the REST path's messages). Login and email together (as QuickBlox's Android SDK sends them): the user is found by login, and the email must be theirs (else UNAUTHENTICATED, as a wrong password). */
export type SessionUserInput = {
  email?: InputMaybe<Scalars['String']['input']>;
  login?: InputMaybe<Scalars['String']['input']>;
  password?: InputMaybe<Scalars['String']['input']>;
};

/**
 * Live events over WebSocket (graphql-ws, the `graphql-transport-ws` protocol) on
 * `GET /graphql` (docs/graphql.md, "Subscriptions"). Credentials go in the
 * `connection_init` payload (`SVC-Token`, or `Authorization` with
 * `On-Behalf-Of`), or in the upgrade request's headers. Every subscription needs
 * a user (a user session, or an API key with On-Behalf-Of).
 */
export type Subscription = {
  __typename?: 'Subscription';
  /**
   * Messages sent to the caller's dialogs (one dialog with `dialogId`, every
   * dialog of the caller without it), whoever wrote them, the caller's own
   * included (their other sockets, and the sending one). `after` and
   * RESYNC_REQUIRED as for `messagesDeleted`: both follow one order of events,
   * so a cursor of either resumes either.
   */
  messageAdded: MessageAddedEvent;
  /**
   * Messages deleted in the caller's dialogs (one dialog with `dialogId`, every
   * dialog of the caller without it): deletes for everyone by whoever made them,
   * and the caller's own deletes for me (on their other devices). With `after`
   * (a `cursor` this subscription returned before), the events since that one
   * first; past the events' retention: the error RESYNC_REQUIRED.
   */
  messagesDeleted: MessagesDeletedEvent;
};


/**
 * Live events over WebSocket (graphql-ws, the `graphql-transport-ws` protocol) on
 * `GET /graphql` (docs/graphql.md, "Subscriptions"). Credentials go in the
 * `connection_init` payload (`SVC-Token`, or `Authorization` with
 * `On-Behalf-Of`), or in the upgrade request's headers. Every subscription needs
 * a user (a user session, or an API key with On-Behalf-Of).
 */
export type SubscriptionMessageAddedArgs = {
  after?: InputMaybe<Scalars['String']['input']>;
  dialogId?: InputMaybe<Scalars['ID']['input']>;
};


/**
 * Live events over WebSocket (graphql-ws, the `graphql-transport-ws` protocol) on
 * `GET /graphql` (docs/graphql.md, "Subscriptions"). Credentials go in the
 * `connection_init` payload (`SVC-Token`, or `Authorization` with
 * `On-Behalf-Of`), or in the upgrade request's headers. Every subscription needs
 * a user (a user session, or an API key with On-Behalf-Of).
 */
export type SubscriptionMessagesDeletedArgs = {
  after?: InputMaybe<Scalars['String']['input']>;
  dialogId?: InputMaybe<Scalars['ID']['input']>;
};

/**
 * A registered user of an application. Field for field the spec's user record
 * (the legacy REST paths emit the same values under snake_case names).
 */
export type User = {
  __typename?: 'User';
  ageOver16: Scalars['Boolean']['output'];
  allowSalesActivities: Scalars['Boolean']['output'];
  allowStatisticsAnalysis: Scalars['Boolean']['output'];
  blobId?: Maybe<Scalars['Int']['output']>;
  createdAt: Scalars['DateTime']['output'];
  customData?: Maybe<Scalars['String']['output']>;
  /** The user's number (what `id` answers until 2.0, and what REST paths and SDKs use). */
  databaseId: Scalars['Int']['output'];
  email?: Maybe<Scalars['String']['output']>;
  /** The user's id in an external system; unique within the application. */
  externalUserId?: Maybe<Scalars['Int']['output']>;
  facebookId?: Maybe<Scalars['String']['output']>;
  fullName?: Maybe<Scalars['String']['output']>;
  /**
   * The user's number. It becomes an opaque global ID in 2.0 (CHANGELOG);
   * read `databaseId` for the number from now on.
   */
  id: Scalars['Int']['output'];
  /** Null when the user has made no request. */
  lastRequestAt?: Maybe<Scalars['DateTime']['output']>;
  login: Scalars['String']['output'];
  /** Empty string when unset. */
  parentsContacts: Scalars['String']['output'];
  phone?: Maybe<Scalars['String']['output']>;
  twitterId?: Maybe<Scalars['String']['output']>;
  updatedAt: Scalars['DateTime']['output'];
  /** Comma-separated tag list. */
  userTags: Scalars['String']['output'];
  website?: Maybe<Scalars['String']['output']>;
};

/**
 * The caller: their user and their chats. Each field is nullable, so that one
 * that fails answers null with its error and leaves the others.
 */
export type Viewer = {
  __typename?: 'Viewer';
  /**
   * The dialogs the caller occupies, most recent activity first (the time of the
   * newest message the caller sees, else the dialog's creation; ties by id
   * descending). `first` (1 to 100) after `after`, or `last` (1 to 100) before
   * `before`; neither: the first 50. A cursor is opaque and belongs to this field.
   */
  dialogs?: Maybe<DialogConnection>;
  /**
   * What `registeredUsersConnection` lists, paged both ways: `first` after
   * `after`, or `last` before `before` (1 to 1000 each; neither: the first 100).
   */
  registeredUsers?: Maybe<RegisteredUsersConnection>;
  /** The caller's user. */
  user?: Maybe<User>;
};


/**
 * The caller: their user and their chats. Each field is nullable, so that one
 * that fails answers null with its error and leaves the others.
 */
export type ViewerDialogsArgs = {
  after?: InputMaybe<Scalars['String']['input']>;
  before?: InputMaybe<Scalars['String']['input']>;
  first?: InputMaybe<Scalars['Int']['input']>;
  last?: InputMaybe<Scalars['Int']['input']>;
};


/**
 * The caller: their user and their chats. Each field is nullable, so that one
 * that fails answers null with its error and leaves the others.
 */
export type ViewerRegisteredUsersArgs = {
  after?: InputMaybe<Scalars['String']['input']>;
  before?: InputMaybe<Scalars['String']['input']>;
  first?: InputMaybe<Scalars['Int']['input']>;
  last?: InputMaybe<Scalars['Int']['input']>;
  udid?: InputMaybe<Scalars['String']['input']>;
};

export type MessageAddedSubscriptionVariables = Exact<{
  dialogId?: InputMaybe<Scalars['ID']['input']>;
  after?: InputMaybe<Scalars['String']['input']>;
}>;


export type MessageAddedSubscription = { __typename?: 'Subscription', messageAdded: { __typename: 'MessageAddedEvent', cursor: string, message: { __typename: 'Message', id: string, databaseId: string, body?: string | null, createdAt: string, sender?: { __typename: 'User', id: number, login: string } | null } } };

export type MessagesDeletedSubscriptionVariables = Exact<{
  dialogId?: InputMaybe<Scalars['ID']['input']>;
  after?: InputMaybe<Scalars['String']['input']>;
}>;


export type MessagesDeletedSubscription = { __typename?: 'Subscription', messagesDeleted: { __typename: 'MessagesDeletedEvent', cursor: string, dialogId: string, scope: MessageDeleteScope, deletedMessageIds: Array<string> } };

export type ChatScreenQueryVariables = Exact<{
  dialogId: Scalars['ID']['input'];
}>;


export type ChatScreenQuery = { __typename: 'Query', node?: { __typename: 'Dialog', id: string, messages?: { __typename: 'MessageConnection', edges: Array<{ __typename: 'MessageEdge', cursor: string, node: { __typename: 'Message', id: string, databaseId: string, body?: string | null, createdAt: string } }> } | null } | { __typename: 'Message', id: string } | null };

export type UserByExternalIdQueryVariables = Exact<{
  externalUserId: Scalars['Int']['input'];
}>;


export type UserByExternalIdQuery = { __typename: 'Query', userByExternalId?: { __typename: 'User', id: number, login: string, fullName?: string | null, phone?: string | null, externalUserId?: number | null, lastRequestAt?: string | null } | null };

export type RegisteredUsersQueryVariables = Exact<{
  udid?: InputMaybe<Scalars['String']['input']>;
}>;


export type RegisteredUsersQuery = { __typename: 'Query', registeredUsers: Array<{ __typename: 'User', id: number, login: string, phone?: string | null }> };

export type DeleteMessagesMutationVariables = Exact<{
  ids: Array<Scalars['ID']['input']> | Scalars['ID']['input'];
  force?: InputMaybe<Scalars['Boolean']['input']>;
}>;


export type DeleteMessagesMutation = { __typename: 'Mutation', deleteMessages: { __typename: 'DeleteMessagesResult', successfullyDeleted: Array<string>, notFound: Array<string> } };

export type UploadAddressBookMutationVariables = Exact<{
  contacts: Array<ContactInput> | ContactInput;
  udid?: InputMaybe<Scalars['String']['input']>;
  force?: InputMaybe<Scalars['Boolean']['input']>;
}>;


export type UploadAddressBookMutation = { __typename: 'Mutation', uploadAddressBook: { __typename: 'AddressBookUploadResult', created: number, updated: number, deleted: number } };


export const MessageAddedDocument = {"__meta__":{"hash":"ff3fcaa0aa0d11005d0cf4bb3dce825cd81310eea517467b14bc601f36de79b4"},"kind":"Document","definitions":[{"kind":"OperationDefinition","operation":"subscription","name":{"kind":"Name","value":"MessageAdded"},"variableDefinitions":[{"kind":"VariableDefinition","variable":{"kind":"Variable","name":{"kind":"Name","value":"dialogId"}},"type":{"kind":"NamedType","name":{"kind":"Name","value":"ID"}}},{"kind":"VariableDefinition","variable":{"kind":"Variable","name":{"kind":"Name","value":"after"}},"type":{"kind":"NamedType","name":{"kind":"Name","value":"String"}}}],"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"messageAdded"},"arguments":[{"kind":"Argument","name":{"kind":"Name","value":"dialogId"},"value":{"kind":"Variable","name":{"kind":"Name","value":"dialogId"}}},{"kind":"Argument","name":{"kind":"Name","value":"after"},"value":{"kind":"Variable","name":{"kind":"Name","value":"after"}}}],"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"__typename"}},{"kind":"Field","name":{"kind":"Name","value":"cursor"}},{"kind":"Field","name":{"kind":"Name","value":"message"},"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"__typename"}},{"kind":"Field","name":{"kind":"Name","value":"id"}},{"kind":"Field","name":{"kind":"Name","value":"databaseId"}},{"kind":"Field","name":{"kind":"Name","value":"body"}},{"kind":"Field","name":{"kind":"Name","value":"createdAt"}},{"kind":"Field","name":{"kind":"Name","value":"sender"},"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"__typename"}},{"kind":"Field","name":{"kind":"Name","value":"id"}},{"kind":"Field","name":{"kind":"Name","value":"login"}}]}}]}}]}}]}}]} as unknown as DocumentNode<MessageAddedSubscription, MessageAddedSubscriptionVariables>;
export const MessagesDeletedDocument = {"__meta__":{"hash":"72b7f3e98cc08aa0ef045303b832e992572e6aceef4d136a2b981b42c32fc338"},"kind":"Document","definitions":[{"kind":"OperationDefinition","operation":"subscription","name":{"kind":"Name","value":"MessagesDeleted"},"variableDefinitions":[{"kind":"VariableDefinition","variable":{"kind":"Variable","name":{"kind":"Name","value":"dialogId"}},"type":{"kind":"NamedType","name":{"kind":"Name","value":"ID"}}},{"kind":"VariableDefinition","variable":{"kind":"Variable","name":{"kind":"Name","value":"after"}},"type":{"kind":"NamedType","name":{"kind":"Name","value":"String"}}}],"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"messagesDeleted"},"arguments":[{"kind":"Argument","name":{"kind":"Name","value":"dialogId"},"value":{"kind":"Variable","name":{"kind":"Name","value":"dialogId"}}},{"kind":"Argument","name":{"kind":"Name","value":"after"},"value":{"kind":"Variable","name":{"kind":"Name","value":"after"}}}],"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"__typename"}},{"kind":"Field","name":{"kind":"Name","value":"cursor"}},{"kind":"Field","name":{"kind":"Name","value":"dialogId"}},{"kind":"Field","name":{"kind":"Name","value":"scope"}},{"kind":"Field","name":{"kind":"Name","value":"deletedMessageIds"}}]}}]}}]} as unknown as DocumentNode<MessagesDeletedSubscription, MessagesDeletedSubscriptionVariables>;
export const ChatScreenDocument = {"__meta__":{"hash":"a1ced69c15c7320bc3dd12b586b5a982a1614c2dab4a3f40c4af7331157e5dc1"},"kind":"Document","definitions":[{"kind":"OperationDefinition","operation":"query","name":{"kind":"Name","value":"ChatScreen"},"variableDefinitions":[{"kind":"VariableDefinition","variable":{"kind":"Variable","name":{"kind":"Name","value":"dialogId"}},"type":{"kind":"NonNullType","type":{"kind":"NamedType","name":{"kind":"Name","value":"ID"}}}}],"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"__typename"}},{"kind":"Field","name":{"kind":"Name","value":"node"},"arguments":[{"kind":"Argument","name":{"kind":"Name","value":"id"},"value":{"kind":"Variable","name":{"kind":"Name","value":"dialogId"}}}],"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"__typename"}},{"kind":"Field","name":{"kind":"Name","value":"id"}},{"kind":"InlineFragment","typeCondition":{"kind":"NamedType","name":{"kind":"Name","value":"Dialog"}},"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"__typename"}},{"kind":"Field","name":{"kind":"Name","value":"messages"},"arguments":[{"kind":"Argument","name":{"kind":"Name","value":"last"},"value":{"kind":"IntValue","value":"50"}}],"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"__typename"}},{"kind":"Field","name":{"kind":"Name","value":"edges"},"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"__typename"}},{"kind":"Field","name":{"kind":"Name","value":"cursor"}},{"kind":"Field","name":{"kind":"Name","value":"node"},"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"__typename"}},{"kind":"Field","name":{"kind":"Name","value":"id"}},{"kind":"Field","name":{"kind":"Name","value":"databaseId"}},{"kind":"Field","name":{"kind":"Name","value":"body"}},{"kind":"Field","name":{"kind":"Name","value":"createdAt"}}]}}]}}]}}]}}]}}]}}]} as unknown as DocumentNode<ChatScreenQuery, ChatScreenQueryVariables>;
export const UserByExternalIdDocument = {"__meta__":{"hash":"9f315e4b01f57f70e8adbd89d4a81ffb26f3b7c3a689e6d6edb840b8d52e4b4b"},"kind":"Document","definitions":[{"kind":"OperationDefinition","operation":"query","name":{"kind":"Name","value":"UserByExternalId"},"variableDefinitions":[{"kind":"VariableDefinition","variable":{"kind":"Variable","name":{"kind":"Name","value":"externalUserId"}},"type":{"kind":"NonNullType","type":{"kind":"NamedType","name":{"kind":"Name","value":"Int"}}}}],"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"__typename"}},{"kind":"Field","name":{"kind":"Name","value":"userByExternalId"},"arguments":[{"kind":"Argument","name":{"kind":"Name","value":"externalUserId"},"value":{"kind":"Variable","name":{"kind":"Name","value":"externalUserId"}}}],"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"__typename"}},{"kind":"Field","name":{"kind":"Name","value":"id"}},{"kind":"Field","name":{"kind":"Name","value":"login"}},{"kind":"Field","name":{"kind":"Name","value":"fullName"}},{"kind":"Field","name":{"kind":"Name","value":"phone"}},{"kind":"Field","name":{"kind":"Name","value":"externalUserId"}},{"kind":"Field","name":{"kind":"Name","value":"lastRequestAt"}}]}}]}}]} as unknown as DocumentNode<UserByExternalIdQuery, UserByExternalIdQueryVariables>;
export const RegisteredUsersDocument = {"__meta__":{"hash":"2e160edef372fc7d80ac3f4703fe96f1180482415aec00cdb76805ffbbaa07e6"},"kind":"Document","definitions":[{"kind":"OperationDefinition","operation":"query","name":{"kind":"Name","value":"RegisteredUsers"},"variableDefinitions":[{"kind":"VariableDefinition","variable":{"kind":"Variable","name":{"kind":"Name","value":"udid"}},"type":{"kind":"NamedType","name":{"kind":"Name","value":"String"}}}],"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"__typename"}},{"kind":"Field","name":{"kind":"Name","value":"registeredUsers"},"arguments":[{"kind":"Argument","name":{"kind":"Name","value":"udid"},"value":{"kind":"Variable","name":{"kind":"Name","value":"udid"}}}],"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"__typename"}},{"kind":"Field","name":{"kind":"Name","value":"id"}},{"kind":"Field","name":{"kind":"Name","value":"login"}},{"kind":"Field","name":{"kind":"Name","value":"phone"}}]}}]}}]} as unknown as DocumentNode<RegisteredUsersQuery, RegisteredUsersQueryVariables>;
export const DeleteMessagesDocument = {"__meta__":{"hash":"8f68bb6210497e933328ad79924ece9400962a9175f5428e14ab851ce11b4b0d"},"kind":"Document","definitions":[{"kind":"OperationDefinition","operation":"mutation","name":{"kind":"Name","value":"DeleteMessages"},"variableDefinitions":[{"kind":"VariableDefinition","variable":{"kind":"Variable","name":{"kind":"Name","value":"ids"}},"type":{"kind":"NonNullType","type":{"kind":"ListType","type":{"kind":"NonNullType","type":{"kind":"NamedType","name":{"kind":"Name","value":"ID"}}}}}},{"kind":"VariableDefinition","variable":{"kind":"Variable","name":{"kind":"Name","value":"force"}},"type":{"kind":"NamedType","name":{"kind":"Name","value":"Boolean"}}}],"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"__typename"}},{"kind":"Field","name":{"kind":"Name","value":"deleteMessages"},"arguments":[{"kind":"Argument","name":{"kind":"Name","value":"ids"},"value":{"kind":"Variable","name":{"kind":"Name","value":"ids"}}},{"kind":"Argument","name":{"kind":"Name","value":"force"},"value":{"kind":"Variable","name":{"kind":"Name","value":"force"}}}],"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"__typename"}},{"kind":"Field","name":{"kind":"Name","value":"successfullyDeleted"}},{"kind":"Field","name":{"kind":"Name","value":"notFound"}}]}}]}}]} as unknown as DocumentNode<DeleteMessagesMutation, DeleteMessagesMutationVariables>;
export const UploadAddressBookDocument = {"__meta__":{"hash":"509e665fba1159acc21d2f8fde474d85f0a1ddf48af87eadce24f1b6193fb83c"},"kind":"Document","definitions":[{"kind":"OperationDefinition","operation":"mutation","name":{"kind":"Name","value":"UploadAddressBook"},"variableDefinitions":[{"kind":"VariableDefinition","variable":{"kind":"Variable","name":{"kind":"Name","value":"contacts"}},"type":{"kind":"NonNullType","type":{"kind":"ListType","type":{"kind":"NonNullType","type":{"kind":"NamedType","name":{"kind":"Name","value":"ContactInput"}}}}}},{"kind":"VariableDefinition","variable":{"kind":"Variable","name":{"kind":"Name","value":"udid"}},"type":{"kind":"NamedType","name":{"kind":"Name","value":"String"}}},{"kind":"VariableDefinition","variable":{"kind":"Variable","name":{"kind":"Name","value":"force"}},"type":{"kind":"NamedType","name":{"kind":"Name","value":"Boolean"}}}],"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"__typename"}},{"kind":"Field","name":{"kind":"Name","value":"uploadAddressBook"},"arguments":[{"kind":"Argument","name":{"kind":"Name","value":"contacts"},"value":{"kind":"Variable","name":{"kind":"Name","value":"contacts"}}},{"kind":"Argument","name":{"kind":"Name","value":"udid"},"value":{"kind":"Variable","name":{"kind":"Name","value":"udid"}}},{"kind":"Argument","name":{"kind":"Name","value":"force"},"value":{"kind":"Variable","name":{"kind":"Name","value":"force"}}}],"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"__typename"}},{"kind":"Field","name":{"kind":"Name","value":"created"}},{"kind":"Field","name":{"kind":"Name","value":"updated"}},{"kind":"Field","name":{"kind":"Name","value":"deleted"}}]}}]}}]} as unknown as DocumentNode<UploadAddressBookMutation, UploadAddressBookMutationVariables>;