/**
 * The two fields of opening a backup file (Settings' export): the file and the password it was made
 * with. Used by the restore of onboarding and the import in Settings.
 */
export function BackupFileFields({
  password,
  onFile,
  onPassword,
  autoComplete,
  testIds,
}: {
  password: string;
  onFile(file: File | undefined): void;
  onPassword(password: string): void;
  autoComplete: string;
  testIds: { file: string; password: string };
}) {
  return (
    <>
      <label className="field">
        <span>Backup file</span>
        <input
          type="file"
          accept=".json,application/json"
          onChange={(e) => onFile(e.target.files?.[0])}
          data-testid={testIds.file}
        />
      </label>
      <label className="field">
        <span>Password of the backup</span>
        <input
          type="password"
          value={password}
          autoComplete={autoComplete}
          onChange={(e) => onPassword(e.target.value)}
          data-testid={testIds.password}
        />
      </label>
    </>
  );
}
