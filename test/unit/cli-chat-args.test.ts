import { describe, expect, it } from 'vitest';
import { HELP, parseArgs } from '../../node-core/cli/args.ts';
import { DEFAULT_CHAT_RETENTION } from '../../node-core/chat/chat-store.ts';

/** Chat retention on the command line (issue #13): a count and an age per account, both documented. */
describe('chat retention flags', () => {
  it('are unset by default, so the store applies its documented defaults', () => {
    expect(parseArgs([]).chatRetention).toEqual({});
    expect(DEFAULT_CHAT_RETENTION.maxPerAccount).toBe(10_000);
    expect(DEFAULT_CHAT_RETENTION.maxAgeNs).toBe(90n * 86_400_000_000_000n);
  });

  it('take a count from 1 and whole days from 1', () => {
    const o = parseArgs(['--chat-retention-count', '500', '--chat-retention-days=7']);
    expect(o.chatRetention).toEqual({ maxPerAccount: 500, maxAgeNs: 7n * 86_400_000_000_000n });
    expect(() => parseArgs(['--chat-retention-count', '0'])).toThrow(/--chat-retention-count: "0"/);
    expect(() => parseArgs(['--chat-retention-days', '1.5'])).toThrow(/whole number of days/);
    expect(() => parseArgs(['--chat-retention-days'])).toThrow(/needs a value/);
  });

  it('are documented in --help with their defaults', () => {
    expect(HELP).toMatch(/--chat-retention-count N[\s\S]*default 10000/);
    expect(HELP).toMatch(/--chat-retention-days D .*default 90/);
  });
});
