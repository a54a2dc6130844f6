// Decode failures are values, not exceptions: bad input is a normal case on a payment stream,
// and the consumer must route it to the dead-letter topic and carry on.

export type DecodeErrorKind =
  | "empty_record" // zero bytes where at least one frame was expected
  | "truncated_frame" // a length prefix or payload runs past the end of the buffer
  | "bad_length_prefix" // a varint longer than 5 bytes or above 2^32-1
  | "frame_too_large" // a length prefix above the configured maximum
  | "bad_magic_byte" // Confluent framing without the leading 0
  | "bad_message_indexes" // Confluent message-index array malformed
  | "unknown_schema_id" // a schema id the registry does not know for this subject
  | "malformed_message" // Protobuf payload that does not parse
  | "missing_required_field"
  | "value_out_of_range";

export interface DecodeError {
  readonly kind: DecodeErrorKind;
  readonly message: string;
  /** Byte offset in the record where the problem was found, when it has one. */
  readonly byteOffset?: number;
  /** Index of the frame within a record holding several, when it has one. */
  readonly frameIndex?: number;
  /** The offending field (Protobuf name), for validation errors. */
  readonly field?: string;
}

export type Decoded<T> =
  { readonly ok: true; readonly value: T } | { readonly ok: false; readonly error: DecodeError };

export const decoded = <T>(value: T): Decoded<T> => ({ ok: true, value });

export const decodeFailure = <T = never>(
  kind: DecodeErrorKind,
  message: string,
  where: Omit<DecodeError, "kind" | "message"> = {},
): Decoded<T> => ({ ok: false, error: { kind, message, ...where } });
