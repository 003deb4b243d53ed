/**
 * `@agent-reach/relay`: delivers tasks to endpoint agents — A2A servers, HTTP endpoints and MCP
 * servers declared by URL (docs/ENDPOINTS.md).
 * @packageDocumentation
 */
export { createRelayService, type RelayService } from './service.ts';
export { compileRelayOptions, optionsFromEnv, type RelayOptions } from './options.ts';
export { Relay, targetOf } from './relay.ts';
export { ownerOf, instanceIdOf } from './ownership.ts';
