import { A2AEndpointClient } from './a2a-client.ts';
import type { EndpointClient, EndpointTarget } from './endpoint-client.ts';
import { HttpEndpointClient } from './http-client.ts';
import { McpEndpointClient } from './mcp-client.ts';

export type {
  CallOutcome,
  CallRequest,
  DiscoveredCapability,
  Discovery,
  EndpointClient,
  EndpointTarget,
} from './endpoint-client.ts';
export { CallCode } from './failures.ts';
export { mapCapabilities, capabilityOf, type CapabilityMapping } from './names.ts';

/** The client for an endpoint agent, by its protocol: A2A, plain HTTP JSON, or MCP. */
export function endpointClient(target: EndpointTarget): EndpointClient {
  switch (target.protocol) {
    case 'a2a':
      return new A2AEndpointClient(target);
    case 'http':
      return new HttpEndpointClient(target);
    case 'mcp':
      return new McpEndpointClient(target);
  }
}
