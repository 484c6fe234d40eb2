/** Commands a person can paste into a terminal to reach this node (pure: tested in test/unit). */

/** A path for a POSIX shell inside single quotes. */
const quoted = (s: string) => `'${s.replace(/'/g, `'\\''`)}'`;

export function curlExamples(base: string, tokenFile: string | null): { title: string; command: string }[] {
  const token = tokenFile === null ? '$LEDGER_NODE_ADMIN_TOKEN' : `$(cat ${quoted(tokenFile)})`;
  const auth = `-H "Authorization: Bearer ${token}"`;
  return [
    { title: 'The node at a glance', command: `curl -s ${base}/node` },
    { title: 'Connected peers with their round trips', command: `curl -s ${base}/node/peers` },
    { title: 'Readiness checks (503 while one fails)', command: `curl -s ${base}/ready` },
    {
      title: 'Warnings and errors from the log (operator)',
      command: `curl -s ${auth} '${base}/node/log?level=warn'`,
    },
    { title: 'Follow the log live (operator)', command: `curl -sN ${auth} ${base}/node/log/events` },
    {
      title: 'Stop peer-to-peer networking (operator; "true" starts it)',
      command: `curl -s -X POST ${auth} -H 'content-type: application/json' -d '{"running":false}' ${base}/node/p2p`,
    },
  ];
}
