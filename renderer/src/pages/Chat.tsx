import { useVirtualizer } from '@tanstack/react-virtual';
import { type FormEvent, type KeyboardEvent, useEffect, useLayoutEffect, useRef, useState } from 'react';
import { addressFromPublicKey } from '../../../node-core/protocol/keys.ts';
import { MAX_CHAT_MESSAGE_BYTES } from '../../../node-core/protocol/payloads.ts';
import { Empty, Identicon, short, timeOf } from '../components/common.tsx';
import { askPermission, mayAskPermission } from '../chat/notify.ts';
import { chatApi, retryMessage, sendMessage } from '../chat/service.ts';
import { type Conversation, type UiMessage, useChatState } from '../chat/state.ts';
import { errorMessage } from '../api.ts';
import { keystore, useKeystore } from '../keystore/index.ts';
import { navigate } from '../router.ts';
import { contacts, settings } from '../settings.ts';

/**
 * The chat page: conversations of one of the wallet's accounts by contact, a thread that stays fast
 * however long (only the rows in view are in the page), and a keyboard-first composer (Enter sends,
 * Shift+Enter starts a new line). Route: #/chat/<account address>/<contact public key>.
 */

const STATUS_TEXT: Record<UiMessage['status'], string> = {
  sending: 'Sending…',
  sent: 'Sent',
  queued: 'Waiting for their node',
  delivered: 'Delivered',
  failed: 'Not sent',
  received: '',
};

/** A contact's name: an own account's label, an address book name, else the short address. */
function useNames(): (key: string) => string {
  const ks = useKeystore();
  const book = contacts.use();
  return (key: string) => {
    const address = addressFromPublicKey(key);
    return (
      ks.accounts.find((a) => a.address === address)?.label ??
      book.find((c) => c.address === address)?.name ??
      short(address, 10)
    );
  };
}

export default function ChatPage({ route }: { route: string[] }) {
  const ks = useKeystore();
  const chosen = settings.use().selectedAccount;
  const address =
    ks.accounts.find((a) => a.address === route[1])?.address ??
    ks.accounts.find((a) => a.address === chosen)?.address ??
    ks.accounts[0]?.address;
  const peer = route[2];
  const state = useChatState();
  const names = useNames();
  if (!address) return <Empty>No account yet.</Empty>;
  const key = keystore().publicKeyOf(address);
  const conversations = state.conversations(key, peer ? [peer] : []);
  const open = conversations.find((c) => c.peer === peer);

  return (
    <div className="chat-page" data-testid="chat-page">
      <aside className="chat-side" aria-label="Conversations">
        <label className="chat-account">
          <span>Account</span>
          <select
            value={address}
            data-testid="chat-account"
            onChange={(e) => navigate('chat', e.target.value)}
          >
            {ks.accounts.map((a) => (
              <option key={a.address} value={a.address}>
                {a.label}
              </option>
            ))}
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
              name={names(c.peer)}
              active={c.peer === peer}
              onOpen={() => navigate('chat', address, c.peer)}
            />
          ))}
        </ul>
      </aside>
      <section className="chat-main" aria-label="Conversation">
        {open ? (
          <Thread key={`${address}:${open.peer}`} address={address} c={open} name={names(open.peer)} />
        ) : (
          <Empty>Pick a conversation, or start one with an address or a public key.</Empty>
        )}
      </section>
    </div>
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
        className={`chat-conversation${active ? ' active' : ''}`}
        onClick={onOpen}
        data-testid="conversation"
        data-peer={c.peer}
        aria-current={active ? 'true' : undefined}
      >
        <Identicon address={addressFromPublicKey(c.peer)} size={28} />
        <span className="chat-conversation-text">
          <span className="chat-conversation-name">{name}</span>
          <span className="chat-conversation-last muted">{last ? last.message.split('\n')[0] : 'New'}</span>
        </span>
        {c.unread > 0 && (
          <span className="badge" data-testid="conversation-unread" aria-label={`${c.unread} unread`}>
            {c.unread}
          </span>
        )}
      </button>
    </li>
  );
}

/** Starts a conversation with an address or a public key, resolved through the directory. */
function NewConversation({ address }: { address: string }) {
  const [text, setText] = useState('');
  const [error, setError] = useState<string>();
  const [busy, setBusy] = useState(false);
  const submit = async (e: FormEvent) => {
    e.preventDefault();
    const t = text.replace(/\s+/g, '').toLowerCase();
    if (!/^[0-9a-f]{64}$/.test(t)) {
      setError('Enter an address or a public key: 64 characters, 0-9 and a-f.');
      return;
    }
    setBusy(true);
    setError(undefined);
    try {
      // The directory knows accounts by address or key, and answers with the key messages go to.
      const entry = await chatApi().lookup(t);
      if (!entry)
        setError('Not reachable: that account is not registered with any node. They must open their app.');
      else {
        setText('');
        navigate('chat', address, entry.pub_key);
      }
    } catch (err) {
      setError(errorMessage(err));
    } finally {
      setBusy(false);
    }
  };
  return (
    <form className="chat-new" onSubmit={(e) => void submit(e)}>
      <label htmlFor="chat-new-input">New conversation</label>
      <div className="row">
        <input
          id="chat-new-input"
          value={text}
          onChange={(e) => setText(e.target.value)}
          placeholder="Address or public key"
          spellCheck={false}
          autoComplete="off"
          data-testid="chat-new-input"
        />
        <button type="submit" disabled={busy} data-testid="chat-new-start">
          Start
        </button>
      </div>
      {error && (
        <p className="error" role="alert" data-testid="chat-new-error">
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

function Thread({ address, c, name }: { address: string; c: Conversation; name: string }) {
  const state = useChatState();
  const scroller = useRef<HTMLDivElement>(null);
  const rows = c.messages;
  const virtual = useVirtualizer({
    count: rows.length,
    getScrollElement: () => scroller.current,
    estimateSize: () => 64,
    overscan: 8,
    getItemKey: (i) => rows[i]!.id,
  });
  const key = keystore().publicKeyOf(address);
  // Opened, or a new message while it is open: read.
  useEffect(() => {
    if (document.visibilityState === 'visible') state.markRead(key, c.peer);
  }, [rows.length, key, c.peer, state]);
  // New messages keep the view at the bottom when it was there.
  const atBottom = useRef(true);
  useLayoutEffect(() => {
    if (atBottom.current && rows.length > 0) virtual.scrollToIndex(rows.length - 1, { align: 'end' });
  }, [rows.length, virtual]);

  return (
    <div className="chat-thread" data-testid="chat-thread" data-peer={c.peer}>
      <header className="chat-thread-head">
        <Identicon address={addressFromPublicKey(c.peer)} size={32} />
        <div>
          <h2 data-testid="chat-thread-name">{name}</h2>
          <span className="muted mono" title={c.peer}>
            {short(addressFromPublicKey(c.peer), 12)}
          </span>
        </div>
      </header>
      <div
        className="chat-messages"
        ref={scroller}
        data-testid="chat-messages"
        role="log"
        aria-live="polite"
        onScroll={(e) => {
          const el = e.currentTarget;
          atBottom.current = el.scrollHeight - el.scrollTop - el.clientHeight < 48;
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
      <Composer address={address} to={c.peer} />
    </div>
  );
}

function Bubble({ m, mine, address }: { m: UiMessage; mine: boolean; address: string }) {
  return (
    <div
      className={`chat-bubble ${mine ? 'mine' : 'theirs'}`}
      data-testid="chat-message"
      data-status={m.status}
      data-id={m.id}
    >
      <div className="chat-text">{m.message}</div>
      <div className="chat-meta muted">
        <time dateTime={new Date(Number(m.timestamp / 1_000_000n)).toISOString()}>{timeOf(m.timestamp)}</time>
        {mine && (
          <span className={`chat-status ${m.status}`} data-testid="chat-message-status">
            {' · '}
            {STATUS_TEXT[m.status]}
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
      {mine && m.status === 'queued' && m.error && <div className="muted small">{m.error}</div>}
    </div>
  );
}

function Composer({ address, to }: { address: string; to: string }) {
  const [text, setText] = useState('');
  const input = useRef<HTMLTextAreaElement>(null);
  useEffect(() => input.current?.focus(), [to]);
  const bytes = new TextEncoder().encode(text).length;
  const tooLong = bytes > MAX_CHAT_MESSAGE_BYTES;
  const send = () => {
    if (text.trim() === '' || tooLong) return;
    void sendMessage(address, to, text);
    setText('');
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
        rows={2}
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
          {bytes} bytes: a message holds at most {MAX_CHAT_MESSAGE_BYTES}.
        </p>
      )}
    </form>
  );
}
