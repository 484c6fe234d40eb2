import { createServer, type Server } from 'node:net';
import { describe, expect, it } from 'vitest';
import { desktopVerifyThreads, portInUse, startDesktopNode } from '../../electron/node-host.ts';
import { NodeStartError } from '../../node-core/node.ts';
import { TEST_DIFFICULTY, tempDir } from '../helpers/node.ts';

/** The node as the desktop app starts it: its usual port, or a free one when that is taken. */

function occupy(): Promise<{ server: Server; port: number }> {
  return new Promise((resolve) => {
    const server = createServer();
    server.listen(0, '127.0.0.1', () =>
      resolve({ server, port: (server.address() as { port: number }).port }),
    );
  });
}

describe('starting the desktop node', () => {
  it('takes the preferred port when it is free', async () => {
    const { server, port } = await occupy();
    await new Promise((r) => server.close(r)); // now free (and known)
    const node = await startDesktopNode(
      { dataDir: tempDir(), powDifficulty: TEST_DIFFICULTY, verifyThreads: 1, p2p: false },
      port,
    );
    try {
      expect(new URL(node.url).port).toBe(String(port));
      expect(node.opts.verifyThreads).toBe(1);
    } finally {
      await node.stop();
    }
  });

  it('falls back to a free port when the preferred one is taken, on the same data', async () => {
    const { server, port } = await occupy();
    const dataDir = tempDir();
    try {
      const node = await startDesktopNode(
        { dataDir, powDifficulty: TEST_DIFFICULTY, verifyThreads: 1, p2p: false },
        port,
      );
      try {
        expect(node.url).toMatch(/^http:\/\/127\.0\.0\.1:\d+$/);
        expect(new URL(node.url).port).not.toBe(String(port));
        expect(node.dataDir).toBe(dataDir);
        const r = await fetch(`${node.url}/node`);
        expect(r.status).toBe(200);
      } finally {
        await node.stop();
      }
    } finally {
      server.close();
    }
  });

  it('falls back to a free peer-to-peer port too', async () => {
    const api = await occupy();
    const p2p = await occupy();
    try {
      const node = await startDesktopNode(
        {
          dataDir: tempDir(),
          powDifficulty: TEST_DIFFICULTY,
          verifyThreads: 1,
          p2pPort: p2p.port,
          p2pBind: '127.0.0.1',
        },
        api.port,
      );
      try {
        expect(new URL(node.url).port).not.toBe(String(api.port));
        expect((await fetch(`${node.url}/health`)).status).toBe(200);
      } finally {
        await node.stop();
      }
    } finally {
      api.server.close();
      p2p.server.close();
    }
  });

  it('does not hide other start failures', async () => {
    await expect(
      startDesktopNode(
        { dataDir: '/dev/null/not-a-dir', powDifficulty: TEST_DIFFICULTY, verifyThreads: 1, p2p: false },
        0,
      ),
    ).rejects.toBeInstanceOf(NodeStartError);
    expect(portInUse(new NodeStartError('port 8080 on 127.0.0.1 is already in use (--api-port)'))).toBe(
      'api',
    );
    expect(portInUse(new NodeStartError('peer-to-peer port 7075 is already in use (--p2p-port)'))).toBe(
      'p2p',
    );
    const libp2p = new Error('Some configured addresses failed: listen EADDRINUSE: address already in use');
    libp2p.name = 'UnsupportedListenAddressesError';
    expect(portInUse(libp2p)).toBe('p2p');
    expect(portInUse(new Error('port 8080 on 127.0.0.1 is already in use'))).toBeUndefined();
    expect(portInUse(new NodeStartError('data directory x is not a directory'))).toBeUndefined();
  });

  it('keeps signature checks off the main thread', () => {
    expect(desktopVerifyThreads(1)).toBe(1);
    expect(desktopVerifyThreads(2)).toBe(1);
    expect(desktopVerifyThreads(4)).toBe(3);
    expect(desktopVerifyThreads(64)).toBe(4);
    expect(desktopVerifyThreads()).toBeGreaterThanOrEqual(1);
  });
});
