import type { Logger } from 'pino';
import { DEFAULT_TENANT } from '@agent-reach/protocol';
import type { AgentRegistry } from '../registry/agent-registry.ts';
import { sameDeclaration, storedDeclaration, type StoredDeclaration } from './endpoint-record.ts';
import type { EndpointStore, ReadDeclaration } from './endpoint-store.ts';
import type { EndpointsFileEntry } from './endpoints-file.ts';

/** What applying the endpoints file needs. */
export interface EndpointsFileApplierOptions {
  store: EndpointStore;
  /** Where a registered agent's tenant is read: an entry whose agent_id another tenant holds is skipped. */
  agents: Pick<AgentRegistry, 'get'>;
  logger: Logger;
  /** @default Date.now */
  now?: () => number;
}

/** What one application of the file changed. */
export interface FileApplication {
  /** Entries written: new, or changed since they were stored. */
  written: string[];
  /** File entries removed: they left the file. */
  removed: string[];
  /** Entries not applied: their agent_id is a registered agent of another tenant. */
  skipped: string[];
}

/** How often one entry's write is tried again when another writer changed it meanwhile. */
const SWAP_TRIES = 5;

/**
 * Makes the stored declarations of source `file` what the endpoints file says: each entry stored
 * with source `file` and the declaring key's capabilities `['*']` (the file is the operator's),
 * written only when it changed; file entries that left the file removed; API declarations never
 * removed (an entry of the file with the same agent_id replaces one, with a warning). Safe to run
 * in every registry-sync at once: each write is a compare and set, and an unchanged entry is
 * not written.
 */
export class EndpointsFileApplier {
  private readonly log: Logger;

  constructor(private readonly o: EndpointsFileApplierOptions) {
    this.log = o.logger.child({ module: 'endpoints-file' });
  }

  /** Applies the file's checked entries (endpoints-file.ts). */
  async apply(entries: readonly EndpointsFileEntry[]): Promise<FileApplication> {
    const { store } = this.o;
    const [stored, secrets] = await Promise.all([store.list(), store.secretTexts()]);
    const byId = new Map(stored.map((d) => [d.record.agent_id, d]));
    const out: FileApplication = { written: [], removed: [], skipped: [] };
    for (const entry of entries) {
      const tenant = entry.tenant ?? DEFAULT_TENANT;
      const agent = await this.o.agents.get(entry.agent_id);
      if (agent && agent.tenant !== tenant) {
        this.log.warn(
          { agent_id: entry.agent_id, tenant, agent_tenant: agent.tenant },
          'endpoints file entry skipped: a registered agent of another tenant holds its agent_id',
        );
        out.skipped.push(entry.agent_id);
        continue;
      }
      const { agent_id: agentId, tenant: _tenant, ...body } = entry;
      let current = byId.get(agentId);
      const next = (at: ReadDeclaration | undefined): StoredDeclaration =>
        storedDeclaration(body, {
          agentId,
          tenant,
          keyCapabilities: ['*'],
          source: 'file',
          now: (this.o.now ?? Date.now)(),
          ...(at ? { createdAt: at.record.created_at } : {}),
        });
      if (current && sameDeclaration(next(current), { ...current, secrets: secrets[agentId] }))
        continue;
      if (current?.record.source === 'api')
        this.log.warn(
          { agent_id: agentId, tenant, declared_tenant: current.record.tenant },
          'endpoints file entry replaces a declaration made through the API',
        );
      for (let i = 0; i < SWAP_TRIES; i++) {
        if (await store.swap(agentId, current, next(current))) {
          out.written.push(agentId);
          break;
        }
        current = await store.read(agentId);
      }
    }
    const inFile = new Set(entries.map((e) => e.agent_id));
    for (const declaration of stored) {
      const agentId = declaration.record.agent_id;
      if (declaration.record.source !== 'file' || inFile.has(agentId)) continue;
      let current: ReadDeclaration | undefined = declaration;
      for (let i = 0; i < SWAP_TRIES && current?.record.source === 'file'; i++) {
        if (await store.swap(agentId, current, undefined)) {
          out.removed.push(agentId);
          break;
        }
        current = await store.read(agentId);
      }
    }
    if (out.written.length + out.removed.length + out.skipped.length > 0)
      this.log.info(
        { written: out.written, removed: out.removed, skipped: out.skipped },
        'endpoints file applied',
      );
    return out;
  }
}
