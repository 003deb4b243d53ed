/**
 * The shape check of an A2A JSON-RPC call's params, before the SDK reads them. The SDK converts
 * params with code that assumes their types (`String(id)`, `part.file.mimeType`,
 * `schemes.join`): a field of the wrong type made it throw a TypeError, answered `-32603`
 * (internal error) for the caller's mistake. Each field the gateway or the SDK reads is checked
 * here by its name, in both protocol versions' forms, and a call that does not fit is answered
 * `-32602` (invalid params) naming the field. Fields this file does not name pass through as
 * they are: the SDK ignores them.
 */

/** Fields that are strings when present (ids, URLs, texts, names). */
const STRINGS = new Set([
  'id',
  'taskId',
  'messageId',
  'contextId',
  'url',
  'token',
  'text',
  'raw',
  'uri',
  'bytes',
  'name',
  'mimeType',
  'mediaType',
  'filename',
  'kind',
  'credentials',
  'scheme',
  'pushNotificationConfigId',
  'pageToken',
  'tenant',
]);

/** Fields that are arrays of strings when present. */
const STRING_ARRAYS = new Set(['acceptedOutputModes', 'schemes', 'extensions', 'referenceTaskIds']);

/** Fields that are objects (not null, not arrays) when present. */
const OBJECTS = new Set([
  'message',
  'configuration',
  'metadata',
  'file',
  'authentication',
  'pushNotificationConfig',
  'taskPushNotificationConfig',
]);

/** Fields that are numbers (or, in the 1.0 JSON form, numeric strings) when present. */
const NUMBERS = new Set(['historyLength', 'pageSize']);

/** Fields that are booleans when present. */
const BOOLEANS = new Set(['blocking', 'returnImmediately']);

/** What a method's params must hold besides the field types: the fields it cannot do without. */
const REQUIRED: Record<string, readonly string[]> = {
  SendMessage: ['message'],
  SendStreamingMessage: ['message'],
  'message/send': ['message'],
  'message/stream': ['message'],
  'tasks/pushNotificationConfig/set': ['taskId', 'pushNotificationConfig'],
};

/** The methods the gateway serves, A2A 1.0 and 0.3 names: others are the SDK's -32601. */
const METHODS = new Set([
  'SendMessage',
  'SendStreamingMessage',
  'GetTask',
  'ListTasks',
  'CancelTask',
  'SubscribeToTask',
  'CreateTaskPushNotificationConfig',
  'GetTaskPushNotificationConfig',
  'ListTaskPushNotificationConfigs',
  'DeleteTaskPushNotificationConfig',
  'GetExtendedAgentCard',
  'message/send',
  'message/stream',
  'tasks/get',
  'tasks/cancel',
  'tasks/resubscribe',
  'tasks/pushNotificationConfig/set',
  'tasks/pushNotificationConfig/get',
  'tasks/pushNotificationConfig/list',
  'tasks/pushNotificationConfig/delete',
  'agent/getAuthenticatedExtendedCard',
]);

/** How deep params are walked: far past any real call's, short of a stack's end. */
const MAX_DEPTH = 32;

const isObject = (v: unknown): v is Record<string, unknown> =>
  typeof v === 'object' && v !== null && !Array.isArray(v);

/**
 * Why the params of `method` cannot be read, or undefined when they can (or the method is not
 * one the gateway serves): `params` an object,
 * the method's required fields present, each named field of its type, each message part an
 * object (in the 0.3 form, with the field its `kind` names).
 */
export function paramsProblem(method: string, params: unknown): string | undefined {
  if (!METHODS.has(method)) return undefined;
  if (params === undefined) return REQUIRED[method] ? 'params are missing' : undefined;
  if (!isObject(params)) return 'params must be an object';
  for (const field of REQUIRED[method] ?? [])
    if (params[field] === undefined || params[field] === null) return `params.${field} is missing`;
  return fieldProblem(params, 'params', 0);
}

function fieldProblem(
  value: Record<string, unknown>,
  path: string,
  depth: number,
): string | undefined {
  if (depth > MAX_DEPTH) return `${path} is nested too deep`;
  for (const [key, v] of Object.entries(value)) {
    if (v === undefined || v === null) continue;
    const at = `${path}.${key}`;
    if (STRINGS.has(key) && typeof v !== 'string') return `${at} must be a string`;
    if (NUMBERS.has(key) && typeof v !== 'number' && !(typeof v === 'string' && /^\d+$/.test(v)))
      return `${at} must be a number`;
    if (BOOLEANS.has(key) && typeof v !== 'boolean') return `${at} must be true or false`;
    if (STRING_ARRAYS.has(key) && !(Array.isArray(v) && v.every((s) => typeof s === 'string')))
      return `${at} must be an array of strings`;
    if (OBJECTS.has(key)) {
      if (!isObject(v)) return `${at} must be an object`;
      // Metadata is the caller's own: free-form.
      if (key === 'metadata') continue;
      const inner = fieldProblem(v, at, depth + 1);
      if (inner) return inner;
    }
    if (key === 'parts') {
      const problem = partsProblem(v, at, depth);
      if (problem) return problem;
    }
  }
  return undefined;
}

/** Parts: an array of objects; a 0.3 part (one with `kind`) carries what its kind names. */
function partsProblem(parts: unknown, path: string, depth: number): string | undefined {
  if (!Array.isArray(parts)) return `${path} must be an array`;
  for (const [i, part] of parts.entries()) {
    const at = `${path}[${i}]`;
    if (!isObject(part)) return `${at} must be an object`;
    const kind = part.kind;
    if (kind === 'text' && typeof part.text !== 'string') return `${at}.text must be a string`;
    if (kind === 'file') {
      const file = part.file;
      if (!isObject(file)) return `${at}.file must be an object`;
      if (typeof file.uri !== 'string' && typeof file.bytes !== 'string')
        return `${at}.file needs uri or bytes (a string)`;
    }
    if (kind === 'data' && !isObject(part.data)) return `${at}.data must be an object`;
    if (kind !== undefined && kind !== 'text' && kind !== 'file' && kind !== 'data')
      return `${at}.kind must be text, file or data`;
    const inner = fieldProblem(part, at, depth + 1);
    if (inner) return inner;
  }
  return undefined;
}
