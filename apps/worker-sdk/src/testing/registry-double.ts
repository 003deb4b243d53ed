/**
 * A stand-in for registry-sync's agent API, for the SDK's own tests: `node:http`, answering
 * register / heartbeat / deregister per the contract, creating the consumer groups in real Redis
 * the way the server does (the inbox's, and for a pull agent each capability pool's, listed in
 * the reply's `pools`), and keeping a two-phase start's readiness. Knobs let a test lose the
 * record (404), take the agent over with a newer instance (409), fail registrations (503) or
 * list pools to push agents too. The end-to-end tests use the real server.
 *
 * Each agent's record hash in Redis is written here as the server's scripts write it, with the
 * fields the real delivery re-verifies (send-path.ts): a task reaches only an agent whose record
 * shows it live, at its epoch, with a free slot.
 */
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import { randomUUID } from 'node:crypto';
import type { AddressInfo } from 'node:net';
import { Value } from '@sinclair/typebox/value';
import {
  AgentRecordField as F,
  HeartbeatBody,
  mergeCard,
  readAgentCard,
  RegisterRequest,
  WORKER_GROUP,
  reachKeys,
  type ErrorCode,
  type RegisterReply,
  type ReachKeys,
} from '@agent-reach/protocol';
import type { Redis } from 'ioredis';

interface AgentRecord {
  instanceId: string;
  epoch: number;
  token: string;
  /** Tokens of older epochs: they get 409, not 401. */
  staleTokens: Set<string>;
  /** False after a register with `ready: false`, until a heartbeat says `ready: true`. */
  ready: boolean;
  capabilities: string[];
  channel: 'push' | 'pull';
  maxConcurrency: number;
  /** Registered in observation mode: probes only. */
  observe: boolean;
}

/** Settings of {@link startRegistryDouble}. */
export interface RegistryDoubleOptions {
  redis: Redis;
  prefix: string;
  heartbeatIntervalMs?: number;
}

/** A running stand-in. */
export interface RegistryDouble {
  url: string;
  keys: ReachKeys;
  registers: RegisterRequest[];
  heartbeats: { agentId: string; body: HeartbeatBody }[];
  deregisters: string[];
  /** Answer the next `n` registrations with 503 STORE_UNAVAILABLE. */
  failRegistrations(n: number): void;
  /** Answer every registration with this error from now on. */
  refuseRegistrations(code: ErrorCode | undefined): void;
  /** List the capability pools (and create their groups) for push agents too, which the real server never does. */
  sendPoolsToPush(on: boolean): void;
  /** Drop the agent's record: its next heartbeat gets 404. */
  forget(agentId: string): void;
  /** A newer instance registers: epoch + 1, the old token now gets 409. */
  takeOver(agentId: string): RegisterReply;
  epochOf(agentId: string): number | undefined;
  /** The agent's status as the registry would report it: STARTING until ready, then HEALTHY. */
  statusOf(agentId: string): 'STARTING' | 'HEALTHY' | undefined;
  close(): Promise<void>;
}

function send(res: ServerResponse, status: number, body: unknown): void {
  res.writeHead(status, { 'content-type': 'application/json' }).end(JSON.stringify(body));
}

function fail(res: ServerResponse, status: number, code: ErrorCode, message: string): void {
  send(res, status, { error: code, message });
}

async function readJson(req: IncomingMessage): Promise<unknown> {
  let text = '';
  for await (const chunk of req) text += String(chunk);
  return text.length === 0 ? undefined : (JSON.parse(text) as unknown);
}

/** Starts the stand-in on a free 127.0.0.1 port. */
export async function startRegistryDouble(options: RegistryDoubleOptions): Promise<RegistryDouble> {
  const keys = reachKeys(options.prefix);
  const agents = new Map<string, AgentRecord>();
  let failing = 0;
  let refusing: ErrorCode | undefined;
  let poolsToPush = false;
  const double: Omit<RegistryDouble, 'url' | 'close'> = {
    keys,
    registers: [],
    heartbeats: [],
    deregisters: [],
    failRegistrations: (n) => void (failing = n),
    refuseRegistrations: (code) => void (refusing = code),
    sendPoolsToPush: (on) => void (poolsToPush = on),
    forget: (agentId) => {
      agents.delete(agentId);
      void options.redis.del(keys.agent(agentId)).catch(() => undefined);
    },
    takeOver: (agentId) => {
      const old = agents.get(agentId);
      const body = {
        agent_id: agentId,
        instance_id: randomUUID(),
        capabilities: old?.capabilities ?? ['echo'],
        channel: old?.channel,
        max_concurrency: old?.maxConcurrency ?? 1,
      };
      const rec = upsert(body, body.instance_id, true);
      // On the harness's connection, ahead of any command a test sends after this returns.
      void writeRecord(body.agent_id, rec).catch(() => undefined);
      return reply(agentId, rec);
    },
    epochOf: (agentId) => agents.get(agentId)?.epoch,
    statusOf: (agentId) => {
      const rec = agents.get(agentId);
      return rec === undefined ? undefined : rec.ready ? 'HEALTHY' : 'STARTING';
    },
  };

  /** Like the server: the body's capabilities with an inline AgentCard's skills added. */
  function capabilitiesOf(body: RegisterRequest): string[] {
    const own = body.capabilities ?? [];
    if (body.card === undefined) return [...own];
    return mergeCard({ capabilities: own }, readAgentCard(body.card)).capabilities;
  }

  function upsert(body: RegisterRequest, instanceId: string, ready: boolean): AgentRecord {
    const old = agents.get(body.agent_id);
    // Like the server, every registration sets readiness, capabilities and channel from its body.
    const fromBody = {
      ready,
      capabilities: capabilitiesOf(body),
      channel: body.channel ?? 'push',
      maxConcurrency: body.max_concurrency,
      observe: body.observe === true,
    };
    const rec: AgentRecord =
      old === undefined
        ? { instanceId, epoch: 1, token: randomUUID(), staleTokens: new Set(), ...fromBody }
        : old.instanceId === instanceId
          ? { ...old, ...fromBody }
          : {
              instanceId,
              epoch: old.epoch + 1,
              token: randomUUID(),
              staleTokens: new Set([...old.staleTokens, old.token]),
              ...fromBody,
            };
    agents.set(body.agent_id, rec);
    return rec;
  }

  /**
   * Writes the agent's record as registry-sync's register and heartbeat scripts do: its epoch,
   * status, slots and a lease renewed now, which the delivery re-verifies, and what a send reads.
   */
  async function writeRecord(
    agentId: string,
    rec: AgentRecord,
    status: 'STARTING' | 'HEALTHY' | 'DRAINING' = rec.ready ? 'HEALTHY' : 'STARTING',
  ): Promise<void> {
    await options.redis.hset(keys.agent(agentId), {
      [F.agentId]: agentId,
      [F.instanceId]: rec.instanceId,
      [F.epoch]: rec.epoch,
      [F.status]: status,
      [F.capabilities]: JSON.stringify(rec.capabilities),
      [F.maxConcurrency]: rec.maxConcurrency,
      [F.channel]: rec.channel,
      [F.ready]: rec.ready ? '1' : '0',
      [F.observe]: rec.observe ? '1' : '0',
      [F.leaseAt]: Date.now(),
    });
  }

  function poolsOf(rec: AgentRecord): string[] {
    return rec.channel === 'pull' || poolsToPush ? rec.capabilities.map((c) => keys.pool(c)) : [];
  }

  /** XGROUP CREATE … MKSTREAM, as the server does at every registration. */
  async function createGroup(stream: string): Promise<void> {
    try {
      await options.redis.xgroup('CREATE', stream, WORKER_GROUP, '0', 'MKSTREAM');
    } catch {
      // BUSYGROUP: it exists already.
    }
  }

  function reply(agentId: string, rec: AgentRecord): RegisterReply {
    return {
      agent_id: agentId,
      instance_id: rec.instanceId,
      epoch: rec.epoch,
      token: rec.token,
      stream: keys.inbox(agentId),
      group: WORKER_GROUP,
      acks_stream: keys.acks(),
      heartbeat_interval_ms: options.heartbeatIntervalMs ?? 5000,
      lease_ms: 30_000,
      pools: poolsOf(rec),
    };
  }

  async function handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const url = new URL(req.url ?? '/', 'http://x');
    const body = await readJson(req);
    if (req.method === 'POST' && url.pathname === '/v1/agents/register') {
      if (!Value.Check(RegisterRequest, body))
        return fail(res, 400, 'INVALID_BODY', 'register body does not match RegisterRequest');
      double.registers.push(body);
      if (refusing !== undefined) return fail(res, 400, refusing, 'refused by the test');
      if (failing > 0) {
        failing -= 1;
        return fail(res, 503, 'STORE_UNAVAILABLE', 'failing on purpose');
      }
      const rec = upsert(body, body.instance_id ?? randomUUID(), body.ready ?? true);
      await writeRecord(body.agent_id, rec);
      const answer = reply(body.agent_id, rec);
      for (const stream of [answer.stream, ...answer.pools]) await createGroup(stream);
      return send(res, 200, answer);
    }
    const m = /^\/v1\/agents\/([^/]+)\/(heartbeat|deregister)$/.exec(url.pathname);
    if (req.method !== 'POST' || m === null) return fail(res, 404, 'NOT_FOUND', 'no such route');
    const agentId = decodeURIComponent(m[1] ?? '');
    const rec = agents.get(agentId);
    const token = (req.headers.authorization ?? '').replace(/^Bearer /, '');
    if (rec === undefined) return fail(res, 404, 'AGENT_NOT_FOUND', 'register first');
    if (rec.staleTokens.has(token))
      return fail(res, 409, 'STALE_EPOCH', 'a newer instance took over');
    if (rec.token !== token) return fail(res, 401, 'UNAUTHORIZED', 'bad token');
    if (m[2] === 'heartbeat') {
      if (!Value.Check(HeartbeatBody, body))
        return fail(res, 400, 'INVALID_BODY', 'heartbeat body does not match');
      double.heartbeats.push({ agentId, body });
      if (body.ready === true) rec.ready = true;
      await writeRecord(agentId, rec);
      return send(res, 200, {
        agent_id: agentId,
        epoch: rec.epoch,
        status: double.statusOf(agentId),
        lease_ms: 30_000,
      });
    }
    double.deregisters.push(agentId);
    agents.delete(agentId);
    // Draining: no new tasks (the server removes the record once nothing is left in flight).
    await writeRecord(agentId, rec, 'DRAINING');
    return send(res, 200, {
      agent_id: agentId,
      epoch: rec.epoch,
      status: 'DRAINING',
      lease_ms: 30_000,
    });
  }

  const server: Server = createServer((req, res) => {
    handle(req, res).catch((err: unknown) => fail(res, 500, 'INTERNAL', String(err)));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    ...double,
    url: `http://127.0.0.1:${port}`,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
