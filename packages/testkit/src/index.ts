/**
 * Test helpers for Agent-Reach: real Redis and InfluxDB (from env, containers or local
 * processes), Node services started as child processes, polling with deadlines, key prefixes.
 */
import { inject } from 'vitest';
import type { ReachServicesInfo } from './provided.ts';

export { startServices, type Services, type StartServicesOptions } from './services.ts';
export { startOwnRedis, type OwnRedis } from './own-redis.ts';
export {
  startTestCluster,
  testRedisMode,
  type TestCluster,
  type TestRedisMode,
} from './test-cluster.ts';
export { makeTlsFiles, startTlsRedis, type TlsFiles, type TlsRedis } from './tls-redis.ts';
export { startSentinel, type OwnSentinel } from './sentinel.ts';
export { startTcpProxy, type TcpProxy } from './tcp-proxy.ts';
// Processes, ports and polling come from @agent-reach/process-kit, which the launcher shares.
export {
  startNodeService,
  type NodeServiceOptions,
  type ServiceProcess,
  waitFor,
  WaitTimeoutError,
  isWaitTimeoutError,
  type WaitForOptions,
  freePort,
  onFreePort,
  randomPrefix,
  livePidFrom,
  removePid,
  writePid,
  MissingBinaryError,
  isMissingBinaryError,
  INSTALL_HINT,
  startLocalCluster,
  parseClusterNodes,
  startLoadBalancer,
  findBinary,
  type LocalCluster,
  type LocalClusterOptions,
  type ClusterNode,
  type ClusterNodeState,
} from '@agent-reach/process-kit';
export type { ReachServicesInfo } from './provided.ts';

/**
 * The service URLs started by the global setup (`@agent-reach/testkit/global-setup`) for this
 * vitest run. Call it inside a test file.
 * @throws when the vitest config does not list the global setup.
 */
export function testServices(): ReachServicesInfo {
  const info = inject('reachServices');
  if (!info) {
    throw new Error(
      "testServices(): no services provided — add globalSetup: ['@agent-reach/testkit/global-setup'] to vitest.config.ts",
    );
  }
  return info;
}
