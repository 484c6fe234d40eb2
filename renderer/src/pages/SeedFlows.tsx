import { useMemo, useState, type FormEvent } from 'react';
import { groupMatches, newSeedHex, parseSeedInput, pickConfirmGroups, seedGroups } from '../keystore/seed.ts';

/**
 * Seed backup that cannot be skipped by accident: the seed is shown as 16 numbered groups of 4 hex
 * characters, the person ticks that it is written down, then types back 3 groups chosen at random.
 * Import takes a pasted seed and checks it.
 */
export function SeedBackupFlow({ onDone, onCancel }: { onDone(seedHex: string): void; onCancel(): void }) {
  const seedHex = useMemo(newSeedHex, []);
  const groups = useMemo(() => seedGroups(seedHex), [seedHex]);
  const [step, setStep] = useState<'show' | 'confirm'>('show');
  const [written, setWritten] = useState(false);
  const asked = useMemo(() => pickConfirmGroups(3), []);
  const [typed, setTyped] = useState<string[]>(['', '', '']);
  const [tried, setTried] = useState(false);

  if (step === 'show') {
    return (
      <div data-testid="seed-backup">
        <h2>Your secret seed</h2>
        <p>
          Write these 16 groups down, in order, on paper. Anyone with them controls the account; without them
          (and without this computer) the account cannot be restored.
        </p>
        <div className="seed-grid" data-testid="seed-groups">
          {groups.map((g, i) => (
            <div className="seed-group" key={i}>
              <span className="n">{i + 1}</span>
              <span data-testid={`seed-group-${i + 1}`}>{g}</span>
            </div>
          ))}
        </div>
        <label className="check">
          <input
            type="checkbox"
            checked={written}
            onChange={(e) => setWritten(e.target.checked)}
            data-testid="seed-written"
          />
          I have written the seed down and will keep it safe.
        </label>
        <div className="row">
          <button type="button" onClick={onCancel}>
            Back
          </button>
          <button
            type="button"
            className="primary"
            disabled={!written}
            onClick={() => setStep('confirm')}
            data-testid="seed-continue"
          >
            Continue
          </button>
        </div>
      </div>
    );
  }

  const wrong = asked.map((g, k) => !groupMatches(typed[k] ?? '', groups[g]!));
  const submit = (e: FormEvent) => {
    e.preventDefault();
    setTried(true);
    if (wrong.some(Boolean)) return;
    onDone(seedHex);
  };
  return (
    <form onSubmit={submit} data-testid="seed-confirm" noValidate>
      <h2>Confirm your backup</h2>
      <p>Type these groups from what you wrote down (the seed is no longer shown).</p>
      {asked.map((g, k) => (
        <label className="field" key={g}>
          <span>Group {g + 1}</span>
          <input
            className="mono"
            value={typed[k]}
            maxLength={8}
            autoComplete="off"
            spellCheck={false}
            data-testid={`confirm-group-${k}`}
            data-group={g + 1}
            aria-invalid={tried && wrong[k]}
            onChange={(e) => setTyped((t) => t.map((v, i) => (i === k ? e.target.value : v)))}
          />
          {tried && wrong[k] && <span className="field-error">This is not group {g + 1} of your seed.</span>}
        </label>
      ))}
      <div className="row">
        <button type="button" onClick={() => setStep('show')}>
          Show the seed again
        </button>
        <button type="submit" className="primary" data-testid="seed-confirm-submit">
          Confirm
        </button>
      </div>
    </form>
  );
}

export function ImportSeed({ onDone, onCancel }: { onDone(seedHex: string): void; onCancel(): void }) {
  const [text, setText] = useState('');
  const [error, setError] = useState<string>();
  const submit = (e: FormEvent) => {
    e.preventDefault();
    const r = parseSeedInput(text);
    if ('error' in r) setError(r.error);
    else onDone(r.seedHex);
  };
  return (
    <form onSubmit={submit} data-testid="seed-import" noValidate>
      <h2>Import an account</h2>
      <label className="field">
        <span>Seed (64 hexadecimal characters; spaces and dashes are ignored)</span>
        <textarea
          className="mono"
          rows={3}
          value={text}
          autoComplete="off"
          spellCheck={false}
          aria-invalid={error !== undefined}
          data-testid="import-seed-input"
          onChange={(e) => {
            setText(e.target.value);
            setError(undefined);
          }}
        />
        {error && (
          <span className="field-error" data-testid="import-seed-error">
            {error}
          </span>
        )}
      </label>
      <div className="row">
        <button type="button" onClick={onCancel}>
          Back
        </button>
        <button type="submit" className="primary" data-testid="import-seed-submit">
          Continue
        </button>
      </div>
    </form>
  );
}
