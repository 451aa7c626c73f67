// Opaque global ids (Relay's Global Object Identification) and the keyset
// cursors of the chat connections. A global id is base64url of
// "<Type>:<databaseId>"; clients must treat it as opaque (docs/graphql.md),
// which leaves the encoding free to change with notice. Only the exact
// encoding of a known type and a well-formed database id is an id: anything
// else decodes to undefined (node() answers null, messagesDelete INVALID_ID).
import { badInput } from '../errors';
import { isObjectId } from './object-id';

export type NodeType = 'Dialog' | 'Message';

const encode = (text: string): string => Buffer.from(text, 'utf8').toString('base64url');

export const toGlobalId = (type: NodeType, databaseId: string): string => encode(`${type}:${databaseId}`);

/** Longer than any id this service issues: not decoded at all. */
const MAX_ID_LENGTH = 64;

export function fromGlobalId(id: string): { type: NodeType; databaseId: string } | undefined {
  if (id.length > MAX_ID_LENGTH) return undefined;
  const match = /^(Dialog|Message):([0-9a-f]{24})$/.exec(Buffer.from(id, 'base64url').toString('latin1'));
  if (!match) return undefined;
  const decoded = { type: match[1] as NodeType, databaseId: match[2]! };
  // base64url decoding ignores stray characters: only the exact encoding is an id.
  return toGlobalId(decoded.type, decoded.databaseId) === id ? decoded : undefined;
}

/** A 24-hex id, or the global id of a `type`: its database id, else undefined. */
export function databaseIdOf(id: string, type: NodeType): string | undefined {
  if (isObjectId(id)) return id;
  const decoded = fromGlobalId(id);
  return decoded?.type === type ? decoded.databaseId : undefined;
}

/** A position in a keyset order of (time, 24-hex id): what the chat connections' cursors hold. */
export interface Position {
  at: Date;
  id: string;
}

export const encodePosition = (kind: 'd' | 'm', position: Position): string => encode(`${kind}:${position.at.getTime()}:${position.id}`);

/** The position of a cursor of this kind; BAD_USER_INPUT naming `field` for anything else. */
export function decodePosition(kind: 'd' | 'm', cursor: string, field: string, what: string): Position {
  const match = cursor.length <= MAX_ID_LENGTH ? /^([dm]):([0-9]{1,15}):([0-9a-f]{24})$/.exec(Buffer.from(cursor, 'base64url').toString('latin1')) : null;
  if (match && match[1] === kind) {
    const position = { at: new Date(Number(match[2])), id: match[3]! };
    if (encodePosition(kind, position) === cursor) return position;
  }
  throw badInput(field, `${field} must be a cursor that ${what} returned`);
}
