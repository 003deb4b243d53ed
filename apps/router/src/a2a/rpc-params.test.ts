import { describe, expect, it } from 'vitest';
import { paramsProblem } from './rpc-params.ts';

describe('paramsProblem', () => {
  it('lets through the calls the A2A SDK client sends, in both versions', () => {
    const ok: [string, unknown][] = [
      ['GetTask', { id: 't-1', historyLength: 2 }],
      ['GetTask', { id: 't-1', historyLength: '2' }],
      ['CancelTask', { id: 'acme/t-1', metadata: { why: [1, { deep: null }] } }],
      [
        'SendMessage',
        {
          message: {
            messageId: 'm-1',
            role: 'ROLE_USER',
            parts: [{ text: 'hi' }, { data: [1, 2] }, { raw: 'aGk=', mediaType: 'text/plain' }],
          },
          configuration: {
            returnImmediately: true,
            acceptedOutputModes: ['text/plain'],
            taskPushNotificationConfig: { url: 'http://127.0.0.1/h', token: 't' },
          },
        },
      ],
      [
        'message/send',
        {
          message: {
            kind: 'message',
            messageId: 'm-1',
            role: 'user',
            parts: [
              { kind: 'text', text: 'hi' },
              { kind: 'file', file: { uri: 'http://x/f', mimeType: 'text/plain' } },
              { kind: 'data', data: { a: 1 } },
            ],
          },
          configuration: { blocking: false, pushNotificationConfig: { url: 'http://x/h' } },
        },
      ],
      [
        'tasks/pushNotificationConfig/set',
        {
          taskId: 't',
          pushNotificationConfig: { url: 'http://x', authentication: { schemes: ['Bearer'] } },
        },
      ],
      ['ListTaskPushNotificationConfigs', { taskId: 't' }],
      ['SomethingUnknown', { id: { not: 'checked: the SDK answers -32601' } }],
    ];
    for (const [method, params] of ok)
      expect(paramsProblem(method, params), method).toBeUndefined();
  });

  it('names the field of the wrong shape that made the SDK throw', () => {
    const bad: [string, unknown, RegExp][] = [
      ['GetTask', { id: { toString: 'x' } }, /params\.id must be a string/],
      ['GetTask', 'tasks', /params must be an object/],
      ['SubscribeToTask', { id: 42 }, /params\.id must be a string/],
      ['SendMessage', {}, /params\.message is missing/],
      [
        'SendMessage',
        { message: { messageId: 'm', parts: [{ raw: 5 }] } },
        /params\.message\.parts\[0\]\.raw must be a string/,
      ],
      [
        'SendStreamingMessage',
        { message: { messageId: 'm', parts: [null] } },
        /parts\[0\] must be an object/,
      ],
      [
        'message/send',
        { message: { messageId: 'm', parts: [{ kind: 'file' }] } },
        /parts\[0\]\.file must be an object/,
      ],
      [
        'message/stream',
        { message: { messageId: 'm', parts: [{ kind: 'file', file: null }] } },
        /parts\[0\]\.file must be an object/,
      ],
      [
        'message/send',
        { message: { messageId: 'm', parts: [] }, configuration: { acceptedOutputModes: 'x' } },
        /acceptedOutputModes must be an array of strings/,
      ],
      ['tasks/pushNotificationConfig/set', { taskId: 'x' }, /pushNotificationConfig is missing/],
      [
        'tasks/pushNotificationConfig/set',
        {
          taskId: 'x',
          pushNotificationConfig: { url: 'u', authentication: { schemes: 'Bearer' } },
        },
        /schemes must be an array of strings/,
      ],
    ];
    for (const [method, params, why] of bad)
      expect(paramsProblem(method, params), method).toMatch(why);
  });
});
