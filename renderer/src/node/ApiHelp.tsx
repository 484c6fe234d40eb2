import { api } from '../api.ts';
import { CopyButton } from '../components/common.tsx';
import { curlExamples } from './api-examples.ts';
import { useTokenFile } from './queries.ts';

/**
 * How a script reaches this node: its address, where the operator token is, commands to copy, and
 * the self-description (`GET /`, `/openapi.json`).
 */

export function ApiHelp() {
  const base = api().baseUrl;
  const token = useTokenFile();
  const file = token.data?.file ?? null;
  return (
    <div data-testid="api-help">
      <dl className="facts">
        <dt>Address</dt>
        <dd>
          <code data-testid="api-base">{base}</code> <CopyButton text={base} label="Copy address" />
        </dd>
        <dt>Admin token</dt>
        <dd data-testid="api-token-file">
          {token.isLoading ? (
            '…'
          ) : file !== null ? (
            <>
              in the file <code>{file}</code> (readable only by you). Routes marked operator need it as{' '}
              <code>Authorization: Bearer &lt;token&gt;</code>.
            </>
          ) : (
            <>
              not in a file this node knows: it was given through <code>LEDGER_NODE_ADMIN_TOKEN</code> or{' '}
              <code>--admin-token</code>, or operator routes are off.
            </>
          )}
        </dd>
        <dt>Described by</dt>
        <dd>
          <a href={`${base}/openapi.json`} target="_blank" rel="noreferrer" data-testid="api-openapi">
            OpenAPI document (/openapi.json)
          </a>{' '}
          ·{' '}
          <a href={`${base}/`} target="_blank" rel="noreferrer">
            list of every route (GET /)
          </a>
        </dd>
      </dl>
      <h3>Try it from a terminal</h3>
      <ul className="plain-list curl-list">
        {curlExamples(base, file).map((ex, i) => (
          <li key={ex.title}>
            <div className="small muted">{ex.title}</div>
            <div className="row">
              <code className="curl" data-testid={`curl-${i}`}>
                {ex.command}
              </code>
              <CopyButton text={ex.command} testId={`curl-copy-${i}`} />
            </div>
          </li>
        ))}
      </ul>
    </div>
  );
}
