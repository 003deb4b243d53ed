/**
 * Demo endpoint agents that know nothing of Agent-Reach — a stock A2A server, a plain HTTP JSON
 * endpoint and an MCP server — for tests, the launcher and benchmarks of the relay.
 */
export { startA2AServer, type A2AServerOptions } from './a2a-server.ts';
export { startHttpServer } from './http-server.ts';
export { startMcpServer } from './mcp-server.ts';
export type { DemoServer, DemoServerOptions } from './listen.ts';
