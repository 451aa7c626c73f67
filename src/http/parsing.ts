// Request bodies and query strings into values. Every object a client sends
// (JSON bodies, form bodies, query strings, QuickBlox's JSON query) is made
// without a prototype, so that a parameter named like one of Object's members
// (`__proto__`, `constructor`, `toString`…) is an ordinary own key: read as
// what the client sent or not at all, never as something inherited, and
// refused by name like any other unknown parameter.
import formbody from '@fastify/formbody';
import { parse as parseQueryString } from 'fast-querystring';
import type { FastifyInstance } from 'fastify';
import { AppError, MESSAGES } from '../errors';

/**
 * JSON.parse, with every object made prototype-less. Iterative: bodies may
 * nest deeper than the call stack (JSON.parse itself takes them). Arrays keep
 * theirs (their members are indices and `length`).
 */
export function parseJson(text: string): unknown {
  const value: unknown = JSON.parse(text);
  const pending: unknown[] = [value];
  while (pending.length > 0) {
    const item = pending.pop();
    if (item === null || typeof item !== 'object') continue;
    if (Array.isArray(item)) {
      for (const member of item) if (member !== null && typeof member === 'object') pending.push(member);
    } else {
      Object.setPrototypeOf(item, null);
      for (const key of Object.keys(item)) {
        const member = (item as Record<string, unknown>)[key];
        if (member !== null && typeof member === 'object') pending.push(member);
      }
    }
  }
  return value;
}

/**
 * Query strings and form bodies, as Fastify parses them (fast-querystring:
 * repeated keys as arrays), prototype-less even when empty (Fastify's own
 * parser answers `{}` for an empty query).
 */
export const parseQuery = (text: string): Record<string, string | string[]> => parseQueryString(text);

/**
 * A request target holding `#` is refused before routing reads it. No client
 * sends one (a fragment stays in the browser), and readers disagree on it:
 * Fastify's router ends the path at the first `?` or `#`, WHATWG URL makes
 * everything after `#` a fragment. Two readings of one target were a
 * trusted-documents bypass (issue 31); with no `#` they agree.
 */
export function registerRequestTargetCheck(fastify: FastifyInstance): void {
  fastify.addHook('onRequest', (request, _reply, done) => {
    if (request.url.includes('#')) return done(new AppError('BAD_REQUEST', MESSAGES.fragmentInTarget));
    done();
  });
}

/** The body parsers: JSON and form-encoded only (anything else is 415, not a string body). */
export async function registerBodyParsers(fastify: FastifyInstance): Promise<void> {
  fastify.removeContentTypeParser('text/plain');
  fastify.removeContentTypeParser('application/json');
  fastify.addContentTypeParser('application/json', { parseAs: 'string' }, (_request, text, done) => {
    const source = String(text);
    // An empty JSON body is no body: legacy clients send Content-Type:
    // application/json on DELETE and GET without one.
    if (source.trim() === '') return done(null, undefined);
    try {
      done(null, parseJson(source));
    } catch {
      done(new AppError('BAD_REQUEST', `${MESSAGES.malformedBody}: invalid JSON`), undefined);
    }
  });
  await fastify.register(formbody, { parser: parseQuery });
}
