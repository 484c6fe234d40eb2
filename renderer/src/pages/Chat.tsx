import { useVirtualizer } from '@tanstack/react-virtual';
import { type FormEvent, type KeyboardEvent, useEffect, useLayoutEffect, useRef, useState } from 'react';
import { addressFromPublicKey } from '../../../node-core/protocol/keys.ts';
import { MAX_CHAT_MESSAGE_BYTES } from '../../../node-core/protocol/payloads.ts';
import { CopyButton, Empty, Identicon, short, timeOf } from '../components/common.tsx';
import { messageTime } from '../chat/conversations.ts';
import { resolveRecipient } from '../chat/directory.ts';
import { type AccountLink, useAccountLink } from '../chat/link.ts';
import { askPermission, mayAskPermission } from '../chat/notify.ts';
import { parseRecipient } from '../chat/recipient.ts';
import { retryMessage, sendMessage } from '../chat/send.ts';
import { type Conversation, safeUnread, type UiMessage, useChatState } from '../chat/state.ts';
import { keystore, useKeystore } from '../keystore/index.ts';
import { navigate } from '../router.ts';
import { contacts, settings, updateSettings } from '../settings.ts';

/**
 * The chat page: conversations of one of the wallet's accounts by contact, a thread that stays fast
 * however long (only the rows in view are in the page), and a keyboard-first composer (Enter sends,
 * Shift+Enter starts a new line). Route: #/chat/<account address>/<contact public key>.
 */

function statusText(m: UiMessage): string {
  switch (m.status) {
    case 'sending':
      return m.phase === 'work' ? 'Proof of work…' : 'Sending…';
    case 'sent':
      return 'Sent';
    case 'queued':
      return m.attempts ? `Waiting for their node (${m.attempts} tries)` : 'Waiting for their node';
    case 'delivered':
      return 'Delivered';
    case 'failed':
      return 'Not sent';
    case 'received':
      return '';
  }
}

/** A contact's name: an own account's label, an address book name, else the short address. */
function useNames(): (key: string) => { name: string; known: boolean } {
  const ks = useKeystore();
  const book = contacts.use();
  return (key: string) => {
    const address = addressFromPublicKey(key);
    const name =
      ks.accounts.find((a) => a.address === address)?.label ?? book.find((c) => c.address === address)?.name;
    return name !== undefined ? { name, known: true } : { name: short(address, 6), known: false };
  };
}

export default function ChatPage({ route }: { route: string[] }) {
  const ks = useKeystore();
  const chosen = settings.use().selectedAccount;
  const address =
    ks.accounts.find((a) => a.address === route[1])?.address ??
    ks.accounts.find((a) => a.address === chosen)?.address ??
    ks.accounts[0]?.address;
  const peer = route[2] !== undefined && /^[0-9a-f]{64}$/.test(route[2]) ? route[2] : undefined;
  const state = useChatState();
  const names = useNames();
  const link = useAccountLink(address ?? '');
  if (!address) return <Empty>No account yet.</Empty>;
  const key = keystore().publicKeyOf(address);
  const conversations = state.conversations(key, peer ? [peer] : []);
  const open = conversations.find((c) => c.peer === peer);

  return (
    <div className="chat-page" data-testid="chat-page">
      {/* The page's title for screen readers and the outline; the layout shows the conversations. */}
      <h1 className="visually-hidden">Chat</h1>
      <aside className="chat-side" aria-label="Conversations">
        <label className="chat-account">
          <span>Chatting as</span>
          <select
            value={address}
            data-testid="chat-account"
            onChange={(e) => {
              // The wallet's selected account follows: one account in view across the pages.
              updateSettings({ selectedAccount: e.target.value });
              navigate('chat', e.target.value);
            }}
          >
            {ks.accounts.map((a) => {
              const n = safeUnread(state, a.address);
              return (
                <option key={a.address} value={a.address}>
                  {a.label}
                  {n > 0 ? ` (${n} unread)` : ''}
                </option>
              );
            })}
          </select>
        </label>
        <NewConversation address={address} />
        <NotificationOffer />
        <ul className="chat-conversations" data-testid="chat-conversations">
          {conversations.length === 0 && <li className="muted">No conversations yet.</li>}
          {conversations.map((c) => (
            <ConversationItem
              key={c.peer}
              c={c}
              name={names(c.peer).name}
              active={c.peer === peer}
              onOpen={() => navigate('chat', address, c.peer)}
            />
          ))}
        </ul>
      </aside>
      <section className="chat-main" aria-label="Conversation">
        <LinkBanner link={link} />
        {open ? (
          <Thread key={`${address}:${open.peer}`} address={address} c={open} who={names(open.peer)} />
        ) : (
          <Empty>Pick a conversation, or start one with an address, a public key or a contact’s name.</Empty>
        )}
      </section>
    </div>
  );
}

/** Seconds left until `at` (ms), ticking. */
function useCountdown(at: number | undefined): number {
  const [, setTick] = useState(0);
  useEffect(() => {
    if (at === undefined) return;
    const t = setInterval(() => setTick((n) => n + 1), 1000);
    return () => clearInterval(t);
  }, [at]);
  return at === undefined ? 0 : Math.max(0, Math.ceil((at - Date.now()) / 1000));
}

/** The account's link to the node, said plainly when it is not right. */
function LinkBanner({ link }: { link: AccountLink }) {
  const s = link.stream;
  const left = useCountdown(s?.state === 'retrying' ? s.retryAt : undefined);
  const reg = link.registration;
  return (
    <>
      {s?.state === 'retrying' && (
        <p className="error box chat-banner" role="alert" data-testid="chat-link-error">
          No live messages: {s.error}. Trying again {left > 0 ? `in ${left} s` : 'now'}.
        </p>
      )}
      {s?.state === 'connecting' && s.error !== undefined && (
        <p className="error box chat-banner" role="alert" data-testid="chat-link-error">
          No live messages: {s.error}. Reconnecting…
        </p>
      )}
      {reg && !reg.ok && (
        <p className="error box chat-banner" role="alert" data-testid="chat-registration-error">
          Others cannot reach this account: registering it with the node failed ({reg.error}). Trying again in
          a moment.
        </p>
      )}
    </>
  );
}

function ConversationItem({
  c,
  name,
  active,
  onOpen,
}: {
  c: Conversation;
  name: string;
  active: boolean;
  onOpen: () => void;
}) {
  const last = c.messages.at(-1);
  return (
    <li>
      <button
        type="button"
        className={`chat-conversation${active ? ' active' : ''}${c.unread > 0 ? ' unread' : ''}`}
        onClick={onOpen}
        data-testid="conversation"
        data-peer={c.peer}
        aria-current={active ? 'true' : undefined}
      >
        <Identicon address={addressFromPublicKey(c.peer)} size={28} />
        <span className="chat-conversation-text">
          <span className="chat-conversation-name">{name}</span>
          <span className="chat-conversation-last muted">
            {last ? `${last.status === 'received' ? '' : 'You: '}${last.message.split('\n')[0]}` : 'New'}
          </span>
        </span>
        <span className="chat-conversation-side">
          {last && <span className="chat-conversation-time muted">{messageTime(last.timestamp)}</span>}
          {c.unread > 0 && (
            <span className="badge" data-testid="conversation-unread" aria-label={`${c.unread} unread`}>
              {c.unread}
            </span>
          )}
        </span>
      </button>
    </li>
  );
}

/** Starts a conversation with a name, an address or a public key, resolved through the directory. */
function NewConversation({ address }: { address: string }) {
  const ks = useKeystore();
  const book = contacts.use();
  const [text, setText] = useState('');
  const [error, setError] = useState<string>();
  const [busy, setBusy] = useState(false);
  // The wallet's other accounts are contacts too (chatting between one's own accounts works).
  const known = [
    ...book,
    ...ks.accounts.filter((a) => a.address !== address).map((a) => ({ name: a.label, address: a.address })),
  ];
  const submit = async (e: FormEvent) => {
    e.preventDefault();
    const parsed = parseRecipient(text, known);
    if ('error' in parsed) {
      setError(parsed.error);
      return;
    }
    setBusy(true);
    setError(undefined);
    const r = await resolveRecipient(parsed.account);
    setBusy(false);
    if ('error' in r) setError(r.error);
    else {
      setText('');
      navigate('chat', address, r.key);
    }
  };
  return (
    <form className="chat-new" onSubmit={(e) => void submit(e)}>
      <label htmlFor="chat-new-input">New conversation</label>
      <div className="row">
        <input
          id="chat-new-input"
          value={text}
          onChange={(e) => {
            setText(e.target.value);
            setError(undefined);
          }}
          placeholder="Name, address or public key"
          spellCheck={false}
          autoComplete="off"
          list="chat-known"
          aria-invalid={error !== undefined}
          aria-describedby={error ? 'chat-new-error' : undefined}
          data-testid="chat-new-input"
        />
        <datalist id="chat-known">
          {known.map((c) => (
            <option key={c.address} value={c.name}>
              {short(c.address)}
            </option>
          ))}
        </datalist>
        <button type="submit" disabled={busy} data-testid="chat-new-start">
          {busy ? 'Looking up…' : 'Start'}
        </button>
      </div>
      {error && (
        <p className="error" role="alert" id="chat-new-error" data-testid="chat-new-error">
          {error}
        </p>
      )}
    </form>
  );
}

function NotificationOffer() {
  const [shown, setShown] = useState(mayAskPermission());
  if (!shown) return null;
  return (
    <p className="chat-notify muted">
      <button
        type="button"
        className="link"
        onClick={() => void askPermission().finally(() => setShown(false))}
        data-testid="chat-notify-enable"
      >
        Turn on notifications
      </button>{' '}
      for messages that arrive while this page is in the background.
    </p>
  );
}

function Thread({
  address,
  c,
  who,
}: {
  address: string;
  c: Conversation;
  who: { name: string; known: boolean };
}) {
  const state = useChatState();
  const scroller = useRef<HTMLDivElement>(null);
  const rows = c.messages;
  const virtual = useVirtualizer({
    count: rows.length,
    getScrollElement: () => scroller.current,
    estimateSize: () => 56,
    overscan: 8,
    getItemKey: (i) => rows[i]!.id,
  });
  const key = keystore().publicKeyOf(address);
  const peerAddress = addressFromPublicKey(c.peer);
  // Opened, a new message while it is open, or the window coming back into view: read.
  useEffect(() => {
    const read = () => {
      if (document.visibilityState === 'visible') state.markRead(key, c.peer);
    };
    read();
    document.addEventListener('visibilitychange', read);
    window.addEventListener('focus', read);
    return () => {
      document.removeEventListener('visibilitychange', read);
      window.removeEventListener('focus', read);
    };
  }, [rows.length, key, c.peer, state]);
  // New messages keep the view at the bottom when it was there.
  const atBottom = useRef(true);
  const [missed, setMissed] = useState(0);
  const seenCount = useRef(rows.length);
  useLayoutEffect(() => {
    const added = rows.length - seenCount.current;
    seenCount.current = rows.length;
    // One's own new message always brings the view down to it.
    const mine = added > 0 && rows.at(-1)?.from === key;
    if ((atBottom.current || mine) && rows.length > 0) {
      atBottom.current = true;
      setMissed(0);
      virtual.scrollToIndex(rows.length - 1, { align: 'end' });
    } else if (added > 0) setMissed((n) => n + added);
  }, [rows, key, virtual]);
  const toNewest = () => {
    atBottom.current = true;
    setMissed(0);
    virtual.scrollToIndex(rows.length - 1, { align: 'end' });
  };

  return (
    <div className="chat-thread" data-testid="chat-thread" data-peer={c.peer}>
      <header className="chat-thread-head">
        <Identicon address={peerAddress} size={32} />
        <div className="chat-thread-who">
          <h2 data-testid="chat-thread-name">{who.name}</h2>
          <span className="muted mono chat-thread-address" title={`public key ${c.peer}`}>
            {who.known ? short(peerAddress, 12) : `address ${peerAddress}`}
          </span>
        </div>
        <CopyButton text={peerAddress} label="Copy address" />
      </header>
      <div
        className="chat-messages"
        ref={scroller}
        data-testid="chat-messages"
        role="log"
        aria-live="polite"
        aria-label={`Messages with ${who.name}`}
        onScroll={(e) => {
          const el = e.currentTarget;
          atBottom.current = el.scrollHeight - el.scrollTop - el.clientHeight < 48;
          if (atBottom.current && missed > 0) setMissed(0);
        }}
      >
        {rows.length === 0 && <p className="muted chat-empty">No messages yet: say hello.</p>}
        <div style={{ height: virtual.getTotalSize(), position: 'relative' }}>
          {virtual.getVirtualItems().map((v) => {
            const m = rows[v.index]!;
            return (
              <div
                key={v.key}
                data-index={v.index}
                ref={virtual.measureElement}
                className="chat-row"
                style={{
                  position: 'absolute',
                  top: 0,
                  left: 0,
                  right: 0,
                  transform: `translateY(${v.start}px)`,
                }}
              >
                <Bubble m={m} mine={m.from === key} address={address} />
              </div>
            );
          })}
        </div>
      </div>
      {missed > 0 && (
        <button type="button" className="chat-newest" onClick={toNewest} data-testid="chat-newest">
          ↓ {missed} new {missed === 1 ? 'message' : 'messages'}
        </button>
      )}
      <Composer address={address} to={c.peer} />
    </div>
  );
}

function Bubble({ m, mine, address }: { m: UiMessage; mine: boolean; address: string }) {
  const ms = Number(m.timestamp / 1_000_000n);
  return (
    <div
      className={`chat-bubble ${mine ? 'mine' : 'theirs'}`}
      data-testid="chat-message"
      data-status={m.status}
      data-id={m.id}
    >
      <div className="chat-text">{m.message}</div>
      <div className="chat-meta muted">
        <time dateTime={new Date(ms).toISOString()} title={timeOf(m.timestamp)}>
          {messageTime(m.timestamp)}
        </time>
        {mine && (
          <span className={`chat-status ${m.status}`} data-testid="chat-message-status">
            {' · '}
            {statusText(m)}
          </span>
        )}
      </div>
      {mine && m.status === 'failed' && (
        <div className="chat-failed">
          {m.error && (
            <span className="error" data-testid="chat-message-error">
              {m.error}
            </span>
          )}
          <button
            type="button"
            className="link"
            onClick={() => void retryMessage(address, m)}
            data-testid="chat-retry"
          >
            Retry
          </button>
        </div>
      )}
      {mine && m.status === 'queued' && m.error && (
        <div className="muted chat-note" data-testid="chat-message-note">
          Last try: {m.error}
        </div>
      )}
    </div>
  );
}

/** Unsent text per account and conversation, kept while the window is open. */
const drafts = new Map<string, string>();

function Composer({ address, to }: { address: string; to: string }) {
  const draftKey = `${address}:${to}`;
  const [text, setTextState] = useState(() => drafts.get(draftKey) ?? '');
  const setText = (t: string) => {
    setTextState(t);
    if (t === '') drafts.delete(draftKey);
    else drafts.set(draftKey, t);
  };
  const input = useRef<HTMLTextAreaElement>(null);
  useEffect(() => input.current?.focus(), [to]);
  const bytes = new TextEncoder().encode(text).length;
  const tooLong = bytes > MAX_CHAT_MESSAGE_BYTES;
  const send = () => {
    if (text.trim() === '' || tooLong) return;
    void sendMessage(address, to, text);
    setText('');
    input.current?.focus();
  };
  const onKey = (e: KeyboardEvent<HTMLTextAreaElement>) => {
    if (e.key === 'Enter' && !e.shiftKey && !e.nativeEvent.isComposing) {
      e.preventDefault();
      send();
    }
  };
  return (
    <form
      className="chat-composer"
      onSubmit={(e) => {
        e.preventDefault();
        send();
      }}
    >
      <textarea
        ref={input}
        value={text}
        rows={Math.min(6, Math.max(2, text.split('\n').length))}
        onChange={(e) => setText(e.target.value)}
        onKeyDown={onKey}
        placeholder="Message (Enter sends, Shift+Enter for a new line)"
        aria-label="Message"
        data-testid="chat-input"
      />
      <button type="submit" disabled={text.trim() === '' || tooLong} data-testid="chat-send">
        Send
      </button>
      {tooLong && (
        <p className="error" data-testid="chat-too-long">
          {bytes.toLocaleString('en-US')} bytes: a message holds at most{' '}
          {MAX_CHAT_MESSAGE_BYTES.toLocaleString('en-US')}.
        </p>
      )}
    </form>
  );
}
