import { ChatApi, type ChatMessage } from '../../client/chat.ts';
import {
  chatEnvelopeIdBytes,
  signChatEnvelope,
  signChatReadAuth,
  signDirectoryRegistration,
} from '../../protocol/payloads.ts';
import { intFlag, positionals } from './args.ts';
import type { WalletCommand } from './command.ts';
import type { WalletContext } from './context.ts';
import { WalletError, WalletUsageError } from './errors.ts';
import { exactJson, isoOfNs } from './io.ts';
import type { Account } from './keystore.ts';

/**
 * `chat send|read|follow`: end-to-end signed messages between accounts through the nodes. Each
 * command first registers the account in the directory on this node (the registration lasts 30
 * minutes), so others can write to it; reading proves ownership with a fresh signed challenge.
 */

const nowNs = (): bigint => BigInt(Date.now()) * 1_000_000n;

async function register(ctx: WalletContext, account: Account): Promise<void> {
  const node = await ctx.client.node();
  const reg = signDirectoryRegistration(
    { account: account.pub_key, node_peer: node.id, timestamp: nowNs() },
    account.seed,
  );
  await new ChatApi(ctx.client).register(reg);
}

const prover = (account: Account) => (challenge: string) =>
  `account=${account.pub_key}&pub_key=${account.pub_key}&challenge=${challenge}&sig=${signChatReadAuth(challenge, account.seed)}`;

function messageJson(m: ChatMessage): Record<string, unknown> {
  return {
    id: m.id,
    from: m.from,
    to: m.to,
    message: m.message,
    timestamp: m.timestamp,
    ...(m.delivery ? { delivery: m.delivery.state } : {}),
  };
}

function messageLine(m: ChatMessage, me: string): string {
  const who = m.from === me ? `to ${m.to.slice(0, 12)}` : `from ${m.from.slice(0, 12)}`;
  return `${isoOfNs(m.timestamp)}  ${who}: ${m.message}`;
}

const send: WalletCommand = {
  name: 'chat send',
  summary: 'send a message to an account (its public key or address, registered with a node)',
  usage: 'TO MESSAGE',
  example: 'ledger-node chat send 5be1...7a "is the build green?"',
  async run(ctx) {
    const [to, text] = positionals(ctx.args, ['TO', 'MESSAGE']);
    const account = await ctx.account();
    const api = new ChatApi(ctx.client);
    await register(ctx, account);
    const found = await api.lookup(to!.toLowerCase());
    if (!found)
      throw new WalletError(
        'unknown_account',
        `${to} is not registered with any node: they must open their app, or run 'ledger-node chat follow'`,
      );
    const info = await ctx.client.node();
    const env = signChatEnvelope(
      { from: account.pub_key, to: found.pub_key, message: text!, timestamp: nowNs() },
      account.seed,
    );
    const pow = ctx.pow('the message');
    const nonce =
      info.chat_pow_difficulty === 0n
        ? 0n
        : await pow.solve(chatEnvelopeIdBytes(env), info.chat_pow_difficulty);
    ctx.powDone();
    const answer = await api.send({ ...env, pow_nonce: nonce });
    ctx.print(
      {
        id: answer.id,
        to: found.pub_key,
        delivery: answer.delivery,
        ...(answer.error ? { error: answer.error } : {}),
      },
      `Message ${answer.id.slice(0, 12)} to ${found.pub_key}: ${answer.delivery}${answer.error ? ` (${answer.error})` : ''}`,
    );
  },
};

const read: WalletCommand = {
  name: 'chat read',
  summary: "the account's messages, newest first",
  usage: '[--limit N]',
  details: '--limit N   at most N messages (default 20)',
  example: 'ledger-node chat read --limit 5 --json',
  flags: { values: ['--limit'] },
  async run(ctx) {
    positionals(ctx.args, []);
    const limit = intFlag(ctx.args, '--limit', 20, 1, 1000);
    const account = await ctx.account();
    await register(ctx, account);
    const { messages, total } = await new ChatApi(ctx.client).messages(prover(account), { limit });
    ctx.print(
      { account: account.pub_key, total, messages: messages.map(messageJson) },
      messages.length === 0
        ? `No messages for "${account.label}".`
        : messages.map((m) => messageLine(m, account.pub_key)).join('\n'),
    );
  },
};

const follow: WalletCommand = {
  name: 'chat follow',
  summary: 'print messages as they arrive (reconnecting), until Ctrl-C, --count or --timeout',
  usage: '[--new] [--count N] [--timeout SECONDS]',
  details:
    '--new          only messages sent after the command started (else the stored ones first)\n' +
    '--count N      stop after N messages\n' +
    '--timeout S    stop after S seconds\n' +
    'With --json, one JSON object per line.',
  example: 'ledger-node chat follow --new --json | jq -r .message',
  flags: { values: ['--count', '--timeout'], switches: ['--new'] },
  async run(ctx) {
    positionals(ctx.args, []);
    const count = intFlag(ctx.args, '--count', 0, 0, 1_000_000);
    const timeout = intFlag(ctx.args, '--timeout', 0, 0, 86_400 * 365);
    const onlyNew = ctx.args.switches.has('--new');
    const account = await ctx.account();
    await register(ctx, account);
    const started = nowNs();
    const api = new ChatApi(ctx.client);
    const stop = new AbortController();
    const timer = timeout > 0 ? setTimeout(() => stop.abort(), timeout * 1000) : undefined;
    const onSignal = () => stop.abort();
    process.once('SIGINT', onSignal);
    let seen = 0;
    let last: string | undefined;
    let backoff = 1000;
    try {
      while (!stop.signal.aborted) {
        try {
          last = await api.stream(
            prover(account),
            (e) => {
              if (e.kind !== 'message' || (onlyNew && e.message.timestamp < started)) return;
              ctx.io.stdout.write(
                ctx.json
                  ? `${exactJson(messageJson(e.message)).replace(/\n\s*/g, ' ')}\n`
                  : `${messageLine(e.message, account.pub_key)}\n`,
              );
              if (count > 0 && ++seen >= count) stop.abort();
            },
            { ...(last ? { lastEventId: last } : {}), signal: stop.signal },
          );
          backoff = 1000;
        } catch (e) {
          if (stop.signal.aborted) break;
          if (e instanceof WalletUsageError) throw e;
          ctx.io.stderr.write(`chat follow: ${(e as Error).message}; reconnecting in ${backoff / 1000} s\n`);
          await new Promise((r) => setTimeout(r, backoff));
          backoff = Math.min(30_000, backoff * 2);
        }
      }
    } finally {
      if (timer) clearTimeout(timer);
      process.off('SIGINT', onSignal);
    }
  },
};

export const chatCommands: WalletCommand[] = [send, read, follow];
