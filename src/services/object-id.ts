// 24-hex ObjectId-style ids for dialogs and messages, as the original service
// uses: 4 bytes of seconds since the epoch, 5 random bytes fixed per process,
// 3 bytes of a counter. Ids sort by creation second.
import { randomBytes } from 'node:crypto';

const processPart = randomBytes(5).toString('hex');
let counter = randomBytes(3).readUIntBE(0, 3);

export function newObjectId(now = Date.now()): string {
  counter = (counter + 1) % 0x1000000;
  const seconds = Math.floor(now / 1000)
    .toString(16)
    .padStart(8, '0');
  return `${seconds}${processPart}${counter.toString(16).padStart(6, '0')}`;
}

/** Lower-case 24-hex only: anything else names no message (and is reported NotFound). */
export const isObjectId = (value: string): boolean => /^[0-9a-f]{24}$/.test(value);
