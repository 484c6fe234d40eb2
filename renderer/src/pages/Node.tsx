import type { ReactNode } from 'react';
import { ActivityChart } from '../node/ActivityChart.tsx';
import { ApiHelp } from '../node/ApiHelp.tsx';
import { Conflicts, Representatives } from '../node/Consensus.tsx';
import { LogView } from '../node/LogView.tsx';
import { Overview } from '../node/Overview.tsx';
import { P2PSwitch, PeersTable } from '../node/PeersSection.tsx';
import { KvBrowser, Keyset, RecentStateBlocks } from '../node/StateChain.tsx';

/**
 * The Node page: what the node is doing, all read from its HTTP API. Sections in the order a person
 * asks: is it healthy and in sync, who it talks to, how busy it is, who confirms blocks and what
 * competes, what the state chain holds, what it logs, and how to script it.
 */
const SECTIONS = [
  { id: 'overview', title: 'Overview' },
  { id: 'peers', title: 'Peers' },
  { id: 'activity', title: 'Activity' },
  { id: 'representatives', title: 'Representatives' },
  { id: 'conflicts', title: 'Conflicts' },
  { id: 'statechain', title: 'State chain' },
  { id: 'log', title: 'Log' },
  { id: 'api', title: 'API' },
] as const;

type SectionId = (typeof SECTIONS)[number]['id'];

function Section({ id, children, note }: { id: SectionId; children: ReactNode; note?: string }) {
  const title = SECTIONS.find((s) => s.id === id)!.title;
  return (
    <section
      className="card node-section"
      id={`node-${id}`}
      aria-labelledby={`node-${id}-title`}
      data-testid={`node-${id}`}
    >
      <h2 id={`node-${id}-title`} tabIndex={-1}>
        {title}
      </h2>
      {note && <p className="small muted">{note}</p>}
      {children}
    </section>
  );
}

/** Moves to a section without touching the hash (the hash is the page's route). */
function jump(id: SectionId) {
  const el = document.getElementById(`node-${id}`);
  el?.scrollIntoView({ behavior: 'smooth', block: 'start' });
  document.getElementById(`node-${id}-title`)?.focus({ preventScroll: true });
}

export default function NodePage() {
  return (
    <div className="page" data-testid="node-page">
      <h1>Node</h1>
      <nav className="row node-jump" aria-label="Sections of this page">
        {SECTIONS.map((s) => (
          <button key={s.id} type="button" className="link" onClick={() => jump(s.id)}>
            {s.title}
          </button>
        ))}
      </nav>
      <Section id="overview">
        <Overview />
      </Section>
      <Section id="peers">
        <P2PSwitch />
        <PeersTable />
      </Section>
      <Section
        id="activity"
        note="Sampled by the node itself, so the history is there even when this window was closed."
      >
        <ActivityChart />
      </Section>
      <Section id="representatives">
        <Representatives />
      </Section>
      <Section
        id="conflicts"
        note="Two blocks for the same place in an account's chain: representatives vote until one holds the quorum."
      >
        <Conflicts />
      </Section>
      <Section
        id="statechain"
        note="The network's shared settings, changed only by blocks the DAO keys sign."
      >
        <h3>Newest blocks</h3>
        <RecentStateBlocks />
        <h3>Keys and values</h3>
        <KvBrowser />
        <h3>DAO keyset</h3>
        <Keyset />
      </Section>
      <Section id="log">
        <LogView />
      </Section>
      <Section id="api">
        <ApiHelp />
      </Section>
    </div>
  );
}
