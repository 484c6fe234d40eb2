/**
 * Typed protocol errors. Every failure to decode or validate protocol data is a ProtocolError with a
 * stable machine code and, where one field is at fault, the name of that field. Callers branch on
 * `code`, never on message text.
 */
export type ProtocolErrorCode =
  | 'ERR_HEX' // not lowercase hex, or wrong length
  | 'ERR_FIELD_MISSING' // a required field is absent
  | 'ERR_FIELD_TYPE' // a field has the wrong JSON type
  | 'ERR_FIELD_RANGE' // a number outside its integer range
  | 'ERR_FIELD_FORBIDDEN' // a field present on a block type that must not carry it
  | 'ERR_UNKNOWN_TYPE' // unknown block type name or byte
  | 'ERR_VERSION' // unsupported canonical version byte
  | 'ERR_ASSET' // asset string too long or not valid
  | 'ERR_MEMO' // memo too long, not UTF-8, or with control bytes
  | 'ERR_KEYSET' // invalid multisig keyset
  | 'ERR_LENGTH' // binary input of the wrong size
  | 'ERR_DUPLICATE' // the same item twice where items must be distinct (a vote batch's votes)
  | 'ERR_JSON' // text is not valid JSON
  | 'ERR_JSON_NUMBER' // a JSON number that cannot be written back exactly (Infinity, a whole number beyond 2^53 not written as an integer)
  | 'ERR_NETWORK_ID'; // empty network id where one is required

export class ProtocolError extends Error {
  readonly code: ProtocolErrorCode;
  /** Name of the offending field (dotted path for nested fields), when one field is at fault. */
  readonly field: string | undefined;

  constructor(code: ProtocolErrorCode, message: string, field?: string) {
    super(field === undefined ? message : `${field}: ${message}`);
    this.name = 'ProtocolError';
    this.code = code;
    this.field = field;
  }
}

export function isProtocolError(e: unknown): e is ProtocolError {
  return e instanceof ProtocolError;
}
