/**
 * Child processes and local servers, shared by the launcher behind `npm start`
 * (`@agent-reach/launcher`) and the test kit: Node services started from their built JavaScript
 * or through tsx, redis-server (alone, or a local Redis Cluster of several), influxd 1.x and an
 * nginx v2-write front on local ports, pid files for what a killed parent left running, polling
 * with deadlines.
 */
export {
  startNodeService,
  nodeArgsFor,
  tsxLoaderUrl,
  DIST_CONDITION,
  type NodeServiceOptions,
  type ServiceProcess,
} from './node-service.ts';
export {
  spawnManaged,
  describeExit,
  outputTail,
  type ManagedProcess,
  type SpawnOptions,
} from './proc.ts';
export { awaitReady } from './ready.ts';
export { waitFor, WaitTimeoutError, isWaitTimeoutError, type WaitForOptions } from './wait.ts';
export {
  freePort,
  httpStatus,
  isPortFree,
  onFreePort,
  portTaken,
  randomPrefix,
  redisPing,
} from './net.ts';
export { livePidFrom, removePid, stopLeftovers, terminatePid, writePid } from './pidfile.ts';
export {
  findBinary,
  requireBinaries,
  MissingBinaryError,
  isMissingBinaryError,
  INSTALL_HINT,
  PACKAGE_OF,
  type ServerBinary,
} from './binaries.ts';
export { startRedisServer, type RedisServerOptions } from './local-redis.ts';
export {
  createInfluxDatabase,
  influxdConfig,
  startInfluxd,
  type InfluxdOptions,
} from './local-influx.ts';
export { nginxConfig, startInfluxV2Proxy, type InfluxProxyOptions } from './nginx.ts';
export {
  loadBalancerConfig,
  startLoadBalancer,
  type BalancedFront,
  type LoadBalancerOptions,
} from './nginx-balancer.ts';
export {
  startLocalCluster,
  parseClusterNodes,
  type LocalCluster,
  type LocalClusterOptions,
  type ClusterNode,
  type ClusterNodeState,
  type ClusterRole,
} from './local-cluster.ts';
