// Binary form of one card-history entry, shared by the Redis and in-memory state stores so both
// keep (and clamp) exactly the same thing: u16 big-endian deviceCardCount | transaction payload.
import type { HistoryEntry } from "./cardStatePort.js";

/** deviceCardCount is stored in two bytes; larger fan-outs are remembered as this. */
export const MAX_STORED_DEVICE_CARD_COUNT = 0xffff;
const HEADER_BYTES = 2;

const clampDeviceCardCount = (count: number): number =>
  Number.isFinite(count) ? Math.min(MAX_STORED_DEVICE_CARD_COUNT, Math.max(0, Math.round(count))) : 0;

export function encodeHistoryEntry(entry: HistoryEntry): Buffer {
  const out = Buffer.allocUnsafe(HEADER_BYTES + entry.payload.length);
  out.writeUInt16BE(clampDeviceCardCount(entry.deviceCardCount), 0);
  out.set(entry.payload, HEADER_BYTES);
  return out;
}

/** undefined for an entry too short to hold its header (written by something else). */
export function decodeHistoryEntry(bytes: Buffer): HistoryEntry | undefined {
  if (bytes.length < HEADER_BYTES) return undefined;
  return { deviceCardCount: bytes.readUInt16BE(0), payload: bytes.subarray(HEADER_BYTES) };
}
