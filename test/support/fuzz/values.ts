// Generated values both surfaces use: long strings kept short in
// counterexamples (Repeat), strings of any code point, and JSON junk where a
// flag, a string or a list is expected.
import fc from 'fast-check';

/** A string `times` copies of `unit` long, kept small in fast-check's counterexample reports. */
export interface Repeat {
  repeat: string;
  times: number;
}

export type Text = string | Repeat;

export const materialize = (text: Text): string => (typeof text === 'string' ? text : text.repeat.repeat(text.times));

export const textLength = (text: Text): number => (typeof text === 'string' ? text.length : text.repeat.length * text.times);

/** fast-check arbitraries reused by both surfaces. */
export const arb = {
  /** Strings of any code point (no lone surrogates) or of latin1/control characters, or printable ASCII. */
  anyString: (maxLength = 40): fc.Arbitrary<string> =>
    fc.oneof(
      fc.string({ maxLength }),
      fc.string({ unit: 'binary', maxLength }),
      fc.string({ unit: 'binary-ascii', maxLength }),
      fc.string({ unit: 'grapheme', maxLength }),
    ),
  /** Values a JSON body may hold where the service expects a 0/1 flag, a string or a list. */
  jsonJunk: (): fc.Arbitrary<unknown> =>
    fc.oneof(
      fc.constantFrom(0, 1, -1, 2, 1.5, '0', '1', '', 'true', true, false, null, [], {}, [1], { a: 1 }, '1 ', ' 1', '01', 1e308, -0),
      fc.jsonValue({ maxDepth: 3 }),
      fc.string({ unit: 'binary', maxLength: 20 }),
    ),
};
