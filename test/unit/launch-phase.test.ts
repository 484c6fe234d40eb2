import { spawn, type ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { describe, expect, it } from 'vitest';
import { launchExited, launchPhase } from '../../node-core/vm/host-tools.ts';

/**
 * How a VM driver tells a launch that is still on its way from one that died: a process whose
 * command line does not name the VM's folder yet is starting (between fork and exec), one that
 * names it is running, one that exited is gone. Real processes, read from /proc.
 */
describe('launch phase of a spawned process', () => {
  const marker = `/tmp/launch-phase-${process.pid}`;

  async function exitOf(child: ChildProcess): Promise<void> {
    if (child.exitCode === null && child.signalCode === null) await once(child, 'exit');
  }

  it('is starting while the command line lacks the marker, running once it names it, gone after exit', async () => {
    const plain = spawn('sleep', ['5'], { stdio: 'ignore' });
    const named = spawn('sh', ['-c', 'sleep 5', marker], { stdio: 'ignore' });
    try {
      await Promise.all([once(plain, 'spawn'), once(named, 'spawn')]);
      // sh's $0 is the marker from the start: no wait for the exec is needed.
      expect(launchPhase(named.pid!, marker)).toBe('running');
      expect(launchPhase(plain.pid!, marker)).toBe('starting');
      // Starting is a failure only once the grace for the exec has passed.
      expect(launchExited(plain.pid!, marker, Date.now())).toBe(false);
      expect(launchExited(plain.pid!, marker, Date.now() - 60_000)).toBe(true);
      expect(launchExited(named.pid!, marker, Date.now() - 60_000)).toBe(false);
    } finally {
      plain.kill('SIGKILL');
      named.kill('SIGKILL');
      await Promise.all([exitOf(plain), exitOf(named)]);
    }
    expect(launchPhase(named.pid!, marker)).toBe('gone');
    expect(launchExited(named.pid!, marker, Date.now())).toBe(true);
    expect(launchPhase(0, marker)).toBe('gone');
  });
});
