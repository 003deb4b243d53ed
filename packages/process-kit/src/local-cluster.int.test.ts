import { execFile } from 'node:child_process';
import { existsSync } from 'node:fs';
import { promisify } from 'node:util';
import { afterAll, describe, expect, it } from 'vitest';
import { startLocalCluster, waitFor, type LocalCluster } from './index.ts';

const run = promisify(execFile);

/** `redis-cli -c` against one node: follows MOVED like a cluster client. */
async function cli(port: number, ...args: string[]): Promise<string> {
  const { stdout } = await run('redis-cli', ['-c', '-p', String(port), ...args], {
    timeout: 5000,
  });
  return stdout.trim();
}

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

describe('startLocalCluster', () => {
  let cluster: LocalCluster | undefined;
  afterAll(async () => {
    await cluster?.stop();
  });

  it('starts 3 masters with a replica each, covers every slot, fails over and stops', async () => {
    cluster = await startLocalCluster({ masters: 3, replicasPerMaster: 1 });
    const { nodes } = cluster;
    expect(nodes.map((n) => n.role)).toEqual([
      'master',
      'master',
      'master',
      'replica',
      'replica',
      'replica',
    ]);
    expect(cluster.seeds.split(',')).toHaveLength(6);

    const view = await cluster.topology();
    const masters = view.filter((v) => v.role === 'master');
    const covered = masters.flatMap((m) => m.slots).reduce((n, [a, b]) => n + b - a + 1, 0);
    expect(covered).toBe(16384);
    for (const m of masters) expect(view.some((r) => r.masterId === m.id)).toBe(true);

    // Keys of different hash tags land on different masters, and each reads back.
    for (const tag of ['a', 'b', 'c', 'd', 'e', 'f']) {
      expect(await cli(nodes[0]!.port, 'SET', `{${tag}}:k`, tag)).toBe('OK');
    }
    for (const tag of ['a', 'b', 'c', 'd', 'e', 'f']) {
      expect(await cli(nodes[1]!.port, 'GET', `{${tag}}:k`)).toBe(tag);
    }
    const info = await cli(nodes[0]!.port, 'CONFIG', 'GET', 'appendfsync');
    expect(info).toContain('always');

    // SIGKILL the master holding {a}: its replica takes over and the key is still there.
    const slot = Number(await cli(nodes[0]!.port, 'CLUSTER', 'KEYSLOT', '{a}:k'));
    const owner = masters.find((m) => m.slots.some(([a, b]) => slot >= a && slot <= b))!;
    const ownerPid = nodes.find((n) => n.port === owner.port)!.pid;
    // The replica must have the write before the master dies (replication is asynchronous).
    await cli(owner.port, 'WAIT', '1', '2000');
    await cluster.killNode(owner.port);
    expect(alive(ownerPid)).toBe(false);
    const survivor = nodes.find((n) => n.port !== owner.port)!.port;
    await waitFor(
      async () => {
        const v = await cluster!.topology();
        const holder = v.find(
          (m) =>
            m.role === 'master' && !m.failing && m.slots.some(([a, b]) => slot >= a && slot <= b),
        );
        return holder !== undefined && holder.port !== owner.port;
      },
      { timeoutMs: 15_000, intervalMs: 200, message: 'a replica took over the killed master' },
    );
    await waitFor(
      async () => (await cli(survivor, 'CLUSTER', 'INFO')).includes('cluster_state:ok'),
      {
        timeoutMs: 10_000,
        message: 'cluster_state:ok after failover',
      },
    );
    expect(await cli(survivor, 'GET', '{a}:k')).toBe('a');

    // The old master comes back as a replica of its successor.
    await cluster.restartNode(owner.port);
    await waitFor(
      async () =>
        (await cluster!.topology()).find((v) => v.port === owner.port)?.role === 'replica',
      { timeoutMs: 15_000, intervalMs: 200, message: 'the restarted master rejoined as a replica' },
    );
    expect(nodes.find((n) => n.port === owner.port)!.role).toBe('replica');

    const pids = nodes.map((n) => n.pid);
    const dir = cluster.dir;
    await cluster.stop();
    for (const pid of pids) expect(alive(pid)).toBe(false);
    expect(existsSync(dir)).toBe(false);
  }, 90_000);
});
