import { usePowJobs } from '../pow/activity.ts';

/** Progress of running proof-of-work searches: attempts against the expected count, and Cancel. */
export function PowPanel() {
  const jobs = usePowJobs();
  if (jobs.length === 0) return null;
  return (
    <div className="pow-panel" data-testid="pow-progress" role="status" aria-live="polite">
      {jobs.map((j) => {
        const attempts = Number(j.attempts);
        const ratio = j.expected > 0 ? attempts / j.expected : 0;
        const seconds = (Date.now() - j.startedAt) / 1000;
        return (
          <div key={j.id}>
            <div className="row between">
              <b>Proof of work: {j.label}</b>
              <button type="button" onClick={j.cancel} data-testid="pow-cancel">
                Cancel
              </button>
            </div>
            <progress max={1} value={Math.min(ratio, 1)} />
            <div className="hint">
              {fmtCount(attempts)} of ~{fmtCount(j.expected)} expected attempts
              {seconds >= 1 && attempts > 0
                ? ` · ${fmtCount(attempts / seconds)}/s · ${Math.floor(seconds)} s`
                : ''}
              {ratio > 1 ? ' (unlucky so far: it is a lottery, each try has the same chance)' : ''}
            </div>
          </div>
        );
      })}
    </div>
  );
}

function fmtCount(n: number): string {
  if (n >= 1e6) return `${(n / 1e6).toFixed(2)} M`;
  if (n >= 1e3) return `${(n / 1e3).toFixed(1)} k`;
  return String(Math.round(n));
}
