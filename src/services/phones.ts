// Phone numbers: what a phone may look like, and the key two phones are
// matched by (docs/decisions.md: Decisions, "Phone numbers").
//
// People store numbers formatted ("+44 20 7946 0958", "(555) 123-4567"), and
// the same number is written differently in different books. A phone is kept
// as given and also stored with its key: the number it denotes in E.164
// ("+442079460958"), parsed by libphonenumber-js with Google's libphonenumber
// metadata; a number without a country code is read in the application's
// region (`app:set-region`), and without one, or when it does not parse, the
// key is its digits (with its "+"). The key is computed when a phone is
// written (upload, user creation), never when one is read: the maintained
// matches compare keys (and the phones themselves, so exact equality always
// matches), and a read stays one index range scan.
import type { CountryCode, MetadataJson } from 'libphonenumber-js/core';

/**
 * Phones: 10 to 15 digits, written with an optional leading "+" and spaces,
 * dashes, dots or parentheses around them, at most 32 characters. (QuickBlox
 * takes contact phones of 10 to 15 characters; the rule here holds for the
 * digits, so that formatted numbers are not thrown away.) The groups cannot
 * overlap (a separator is never a digit), so the pattern runs in linear time.
 */
export const PHONE_PATTERN = /^(?=.{10,32}$)\+?(?:[ ().-]*[0-9]){10,15}[ ().-]*$/;
export const PHONE_RULE = 'phone must be 10 to 15 digits, optionally with a leading "+" and spaces, dashes, dots or parentheses (at most 32 characters)';

interface PhoneLibrary {
  core: typeof import('libphonenumber-js/core');
  /** The stock metadata: region codes are checked against it (every country, not only the main ones). */
  stock: MetadataJson;
  /**
   * The "min" metadata with each calling code mapped to its main country only.
   * libphonenumber-js works out which of the countries sharing a calling code a
   * number belongs to (25 share +1) by testing each one's patterns, compiled per
   * call: 85% of a parse. The key needs the calling code and the national
   * number, both found before that step, never the country; with one country per
   * code the step ends at once. Measured on this machine (loaded): 39–44 µs a
   * "+1 (555) …" number with the stock metadata, 5.8 µs with this one, the same
   * E.164 for 20,000 formatted and national numbers (test/behaviour/phones.test.ts).
   */
  keys: MetadataJson;
}

let library: PhoneLibrary | undefined;

/**
 * Loaded on the first phone written or region set, not at start: the
 * library and its metadata are ~1.5 MB of heap that the lookups and most of
 * an idle instance's life never use (docs/decisions.md, Memory). require, not
 * import(): the service is CommonJS (src/main.ts says why).
 */
function phoneLibrary(): PhoneLibrary {
  if (library) return library;
  const core = require('libphonenumber-js/core') as typeof import('libphonenumber-js/core');
  const stock = require('libphonenumber-js/min/metadata') as MetadataJson;
  const keys: MetadataJson = {
    ...stock,
    country_calling_codes: Object.fromEntries(Object.entries(stock.country_calling_codes).map(([code, countries]) => [code, countries.slice(0, 1)])),
  };
  library = { core, stock, keys };
  return library;
}

export function isRegion(value: string): value is CountryCode {
  if (!/^[A-Z]{2}$/.test(value)) return false;
  const { core, stock } = phoneLibrary();
  return core.isSupportedCountry(value as CountryCode, stock);
}

export const REGION_RULE = 'region must be an ISO 3166-1 alpha-2 country code that libphonenumber knows (e.g. GB, US)';

/**
 * The key `phone` (one that PHONE_PATTERN accepts) is matched by, in an
 * application whose region is `region` (null: none): its E.164 form when it
 * parses, else its digits with its leading "+". The same phone in one
 * application always has the same key, so phones equal as written always match.
 */
export function phoneKey(phone: string, region: string | null): string {
  const { core, keys } = phoneLibrary();
  const parsed = core.parsePhoneNumberFromString(phone, region ? { defaultCountry: region as CountryCode, extract: false } : { extract: false }, keys);
  if (parsed) return parsed.number;
  return (phone.trimStart().startsWith('+') ? '+' : '') + phone.replace(/[^0-9]/g, '');
}
