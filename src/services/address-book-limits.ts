// Address books' bounds (issue 31), apart from the service so that the configuration reads them without its imports.

/**
 * The defaults of ADDRESS_BOOK_MAX_CONTACTS (the largest real phone books, and
 * one upload's limit), ADDRESS_BOOK_MAX_DEVICE_BOOKS and
 * CONTACT_DISCOVERY_PER_DAY (one full book's first upload a day).
 */
export const ADDRESS_BOOK_DEFAULTS = { maxContacts: 10_000, maxDeviceBooks: 5, discoveryPerDay: 10_000 } as const;
