// /graphql hands Apollo the query string cut from the URL as sent
// (src/overrides/apollo-route.ts) where @as-integrations/fastify parsed a URL:
// Apollo must read the same parameters from it, whatever the target.
import fc from 'fast-check';
import { searchOf } from '../../src/overrides/apollo-route';

const parameters = (search: string) => [...new URLSearchParams(search)];

test('the query string gives the parameters URL would, for any request target', () => {
  const piece = fc.oneof(
    fc.constantFrom(...'aZ09-._~!$&\'()*+,;=:@/?%#[]\\|^`{}"<> é\t', '%2', '%41', '%e9', '%C3%A9', 'query', 'variables', '{"id":1}'),
    fc.string({ maxLength: 3 }),
  );
  fc.assert(
    fc.property(fc.array(piece, { maxLength: 12 }), (pieces) => {
      const url = `/graphql${pieces.join('')}`;
      expect(parameters(searchOf(url))).toEqual(parameters(new URL(url, 'http://localhost/').search));
    }),
    { numRuns: 20_000 },
  );
});

test('no query, an empty one, a fragment', () => {
  expect(searchOf('/graphql')).toBe('');
  expect(searchOf('/graphql?')).toBe('');
  expect(searchOf('/graphql?query=%7B__typename%7D#top')).toBe('?query=%7B__typename%7D');
  expect(searchOf('/graphql#a?b')).toBe('');
});
