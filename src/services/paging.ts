// The arguments of a connection paged both ways (Relay's Cursor Connections):
// `first` after `after`, or `last` before `before`. One rule for every
// connection: a count from 1 to its maximum; `first` with `before`, or `last`
// with `after`, is refused rather than read as something the client did not
// mean; neither count: the first `fallback`.
import { badInput } from '../errors';

export interface PageArgs {
  first?: number | null;
  after?: string | null;
  last?: number | null;
  before?: string | null;
}

export interface PageRequest<P> {
  direction: 'forward' | 'backward';
  from: P | null;
  count: number;
  /** Whether the page starts after (forward) or ends before (backward) a cursor. */
  fromCursor: boolean;
}

export function pageRequest<P>(args: PageArgs, max: number, fallback: number, decode: (cursor: string, field: 'after' | 'before') => P): PageRequest<P> {
  const given = (value: unknown) => value !== null && value !== undefined;
  if (given(args.first) && given(args.last)) throw badInput('last', 'give first or last, not both');
  if (given(args.last) && given(args.after)) throw badInput('after', 'page backward with last and before, not after');
  if (given(args.first) && given(args.before)) throw badInput('before', 'page forward with first and after, not before');
  if (given(args.after) && given(args.before)) throw badInput('before', 'give after or before, not both');
  const backward = given(args.last) || given(args.before);
  const field = backward ? 'last' : 'first';
  const count = (backward ? args.last : args.first) ?? fallback;
  if (!Number.isInteger(count) || count < 1 || count > max) throw badInput(field, `${field} must be an integer between 1 and ${max}`);
  const cursor = backward ? args.before : args.after;
  return {
    direction: backward ? 'backward' : 'forward',
    from: given(cursor) ? decode(cursor, backward ? 'before' : 'after') : null,
    count,
    fromCursor: given(cursor),
  };
}

export interface PageInfo {
  hasNextPage: boolean;
  hasPreviousPage: boolean;
  startCursor: string | null;
  endCursor: string | null;
}

/** Relay's PageInfo of a page read as `request` asked, `more` telling whether rows lay beyond it. */
export function pageInfo(request: { direction: 'forward' | 'backward'; fromCursor: boolean }, more: boolean, cursors: readonly string[]): PageInfo {
  const forward = request.direction === 'forward';
  return {
    hasNextPage: forward ? more : request.fromCursor,
    hasPreviousPage: forward ? request.fromCursor : more,
    startCursor: cursors[0] ?? null,
    endCursor: cursors.at(-1) ?? null,
  };
}
