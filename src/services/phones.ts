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
import { isSupportedCountry, parsePhoneNumberFromString, type CountryCode, type MetadataJson } from 'libphonenumber-js/core';
import minMetadata from 'libphonenumber-js/min/metadata';

/**
 * Phones: 10 to 15 digits, written with an optional leading "+" and spaces,
 * dashes, dots or parentheses around them, at most 32 characters. (QuickBlox
 * takes contact phones of 10 to 15 characters; the rule here holds for the
 * digits, so that formatted numbers are not thrown away.) The groups cannot
 * overlap (a separator is never a digit), so the pattern runs in linear time.
 */
export const PHONE_PATTERN = /^(?=.{10,32}$)\+?(?:[ ().-]*[0-9]){10,15}[ ().-]*$/;
export const PHONE_RULE = 'phone must be 10 to 15 digits, optionally with a leading "+" and spaces, dashes, dots or parentheses (at most 32 characters)';

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
const METADATA: MetadataJson = {
  ...minMetadata,
  country_calling_codes: Object.fromEntries(Object.entries(minMetadata.country_calling_codes).map(([code, countries]) => [code, countries.slice(0, 1)])),
};

/** The stock metadata: region codes are checked against it (every country, not only the main ones). */
export function isRegion(value: string): value is CountryCode {
  return /^[A-Z]{2}$/.test(value) && isSupportedCountry(value as CountryCode, minMetadata);
}

export const REGION_RULE = 'region must be an ISO 3166-1 alpha-2 country code that libphonenumber knows (e.g. GB, US)';

/**
 * The key `phone` (one that PHONE_PATTERN accepts) is matched by, in an
 * application whose region is `region` (null: none): its E.164 form when it
 * parses, else its digits with its leading "+". The same phone in one
 * application always has the same key, so phones equal as written always match.
 */
export function phoneKey(phone: string, region: string | null): string {
  const parsed = parsePhoneNumberFromString(phone, region ? { defaultCountry: region as CountryCode, extract: false } : { extract: false }, METADATA);
  if (parsed) return parsed.number;
  return (phone.trimStart().startsWith('+') ? '+' : '') + phone.replace(/[^0-9]/g, '');
}
