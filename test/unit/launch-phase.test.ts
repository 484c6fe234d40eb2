import { spawn, type ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { rmSync, writeFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { killLaunch, launchExited, launchPhase, processesMentioning } from '../../node-core/vm/host-tools.ts';

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

  it('a launch killed before it became the program does not go on to run, nor what it started', async () => {
    const m = `${marker}-abort`;
    // The shape of bubblewrap and its namespace's init: a group of two that both name the marker.
    const script = `${m}.sh`;
    writeFileSync(script, `sh -c 'sleep 30; :' "$1" &\nsleep 30\n:\n`);
    try {
      // Starting for 300 ms (its command line lacks the marker), then that group.
      const child = spawn('sh', ['-c', 'sleep 0.3; exec sh "$S" "$M"'], {
        detached: true,
        stdio: 'ignore',
        env: { ...process.env, S: script, M: m },
      });
      await once(child, 'spawn');
      expect(launchPhase(child.pid!, m)).toBe('starting');
      await killLaunch(child, m);
      expect(child.signalCode).toBe('SIGKILL');
      await new Promise((r) => setTimeout(r, 600));
      expect(processesMentioning(m)).toEqual([]);

      // One that runs, with what it started in its group.
      const running = spawn('sh', [script, m], { detached: true, stdio: 'ignore' });
      await once(running, 'spawn');
      const deadline = Date.now() + 5000;
      while (processesMentioning(m).length < 2 && Date.now() < deadline)
        await new Promise((r) => setTimeout(r, 10));
      expect(processesMentioning(m)).toHaveLength(2);
      await killLaunch(running, m);
      expect(processesMentioning(m)).toEqual([]);
      expect(launchPhase(running.pid!, m)).toBe('gone');
    } finally {
      for (const pid of processesMentioning(m)) process.kill(pid, 'SIGKILL');
      rmSync(script, { force: true });
    }
  });
});
