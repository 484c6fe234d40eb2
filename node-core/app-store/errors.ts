/**
 * Why the app store refused a write; `code` is what callers branch on (the API maps `invalid_document`
 * and `unknown_key` to 400 and 404, `version_conflict` to 409).
 */
export type AppStoreErrorCode = 'unknown_key' | 'invalid_document' | 'version_conflict';

export class AppStoreError extends Error {
  readonly code: AppStoreErrorCode;
  /** For `version_conflict`: the version stored now (0: none). */
  readonly currentVersion: number | undefined;

  constructor(code: AppStoreErrorCode, message: string, currentVersion?: number) {
    super(message);
    this.name = 'AppStoreError';
    this.code = code;
    this.currentVersion = currentVersion;
  }

  static unknownKey(key: string): AppStoreError {
    const shown = key.length > 40 ? `${key.slice(0, 40)}…` : key;
    return new AppStoreError('unknown_key', `no app store document is called "${shown}"`);
  }

  static invalid(key: string, why: string): AppStoreError {
    return new AppStoreError('invalid_document', `${key}: ${why}`);
  }

  static versionConflict(key: string, current: number): AppStoreError {
    return new AppStoreError(
      'version_conflict',
      current === 0
        ? `${key} was removed elsewhere since it was read; read it again and retry`
        : `${key} was changed elsewhere since it was read (now version ${current}); read it again and retry`,
      current,
    );
  }
}
