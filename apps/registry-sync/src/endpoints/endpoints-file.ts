import { Type, type Static } from '@sinclair/typebox';
import { Value } from '@sinclair/typebox/value';
import { parse as parseYaml, YAMLError } from 'yaml';
import { EndpointBody, ID_PATTERN, TENANT_PATTERN } from '@agent-reach/protocol';
import type { OutboundHosts } from '@agent-reach/service-kit';
import { declarationProblem } from './endpoint-record.ts';
import { endpointUrlProblem } from './endpoint-urls.ts';

/** One entry of the endpoints file: a declaration with its agent_id, and its tenant. */
export const EndpointsFileEntry = Type.Object(
  {
    agent_id: Type.String({ pattern: ID_PATTERN }),
    tenant: Type.Optional(
      Type.String({
        pattern: TENANT_PATTERN,
        description: 'The agent’s tenant; default `default`',
      }),
    ),
    ...EndpointBody.properties,
  },
  { additionalProperties: false },
);
export type EndpointsFileEntry = Static<typeof EndpointsFileEntry>;

/** The endpoints file (REACH_ENDPOINTS_FILE): an `endpoints` list; other top-level keys are ignored. */
export const EndpointsFile = Type.Object({ endpoints: Type.Array(EndpointsFileEntry) });

/** Why an endpoints file was not applied; its message never quotes the file (it holds secrets). */
export class EndpointsFileError extends Error {
  override readonly name = 'EndpointsFileError';
}

/** True when `err` is an {@link EndpointsFileError}. */
export function isEndpointsFileError(err: unknown): err is EndpointsFileError {
  return err instanceof EndpointsFileError;
}

/** `text` as a value: JSON for a `.json` file, YAML (which JSON also is) for any other. */
function parseText(path: string, text: string): unknown {
  if (path.toLowerCase().endsWith('.json')) {
    try {
      return JSON.parse(text) as unknown;
    } catch (err: unknown) {
      // Node's message quotes the text around the fault: only the position is kept.
      const at = /position (\d+)/.exec(err instanceof Error ? err.message : '')?.[1];
      throw new EndpointsFileError(`not valid JSON${at === undefined ? '' : ` (at offset ${at})`}`);
    }
  }
  try {
    return parseYaml(text, { merge: true }) as unknown;
  } catch (err: unknown) {
    // The parser's message quotes the line: only its code and place are kept.
    if (err instanceof YAMLError) {
      const at = err.linePos?.[0];
      throw new EndpointsFileError(
        `not valid YAML: ${err.code}${at ? ` at line ${at.line}, column ${at.col}` : ''}`,
      );
    }
    throw new EndpointsFileError('not valid YAML');
  }
}

/**
 * Reads the endpoints file's text into its entries, each checked as an API declaration is
 * (schema, `http` with capabilities, URLs on a host `allowed` allows) and agent_ids
 * unique. Any fault refuses the whole file.
 * @throws EndpointsFileError naming the entry and what is wrong
 */
export function readEndpointsFile(
  path: string,
  text: string,
  allowed: OutboundHosts,
): EndpointsFileEntry[] {
  const value = parseText(path, text);
  if (!Value.Check(EndpointsFile, value)) {
    const first = Value.Errors(EndpointsFile, value).First();
    throw new EndpointsFileError(
      first
        ? `${first.path || '/'}: ${first.message}`
        : 'expected an object with an endpoints list',
    );
  }
  const seen = new Set<string>();
  value.endpoints.forEach((entry, i) => {
    const where = `/endpoints/${i} (${entry.agent_id})`;
    if (seen.has(entry.agent_id))
      throw new EndpointsFileError(`${where}: agent_id ${entry.agent_id} is declared twice`);
    seen.add(entry.agent_id);
    const problem =
      declarationProblem(entry) ??
      endpointUrlProblem('url', entry.url, allowed) ??
      (entry.health_url === undefined
        ? undefined
        : endpointUrlProblem('health_url', entry.health_url, allowed));
    if (problem !== undefined) throw new EndpointsFileError(`${where}: ${problem}`);
  });
  return value.endpoints;
}
