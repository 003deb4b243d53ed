/**
 * The event streams with a hostile `Last-Event-ID`: a task's events (`GET
 * /v1/tasks/:task_id/events`, whose ids are `<entry id>.<stages sent>`) and the console's fleet
 * events (`GET /v1/console/events`, whose ids are stream entry ids). The values that match each
 * route's pattern but name no entry Redis could hold (past 2^64 − 1) are the ones that reach
 * Redis. Each stream is read up to its first event. A2A's streaming methods get the same
 * headers (a2a.ts).
 */
import fc from 'fast-check';
import type { FuzzTarget } from './campaign.ts';
import { badAuthorization, hostileSegment } from './hostile.ts';
import type { FuzzRequest, Headers } from './requests.ts';

const MAX_U64 = '18446744073709551615';

/** `Last-Event-ID` values: well-formed, out of range, malformed, oversized. */
export const lastEventIdArb: fc.Arbitrary<string> = fc.oneof(
  {
    weight: 4,
    arbitrary: fc.constantFrom(
      '0-0',
      '0-0.0',
      '0-0.999999',
      '1-1.1',
      `${MAX_U64}-${MAX_U64}`,
      `${MAX_U64}-${MAX_U64}.0`,
      '18446744073709551616-0',
      '18446744073709551616-0.0',
      '99999999999999999999-99999999999999999999',
      '99999999999999999999-99999999999999999999.999999',
      '00000000000000000000-00000000000000000000.000000',
      '9999999999999-0.3',
      '$',
      '+',
      '-',
      '>',
      '0',
      '-1-0.0',
      '1-1.-1',
      '1-1.1.1',
      '1-1,2-2',
      '',
      ' ',
      '0-0 ',
      'x',
      '%30-0',
      'é',
      'x'.repeat(8 * 1024),
    ),
  },
  {
    weight: 2,
    arbitrary: fc
      .tuple(
        fc.bigInt({ min: 0n, max: 2n ** 70n }),
        fc.bigInt({ min: 0n, max: 2n ** 70n }),
        fc.nat(),
      )
      .map(([ms, seq, stages]) => `${ms}-${seq}.${stages}`),
  },
  {
    weight: 1,
    arbitrary: fc.string({ maxLength: 30 }).map((s) => s.replace(/[^\x20-\x7e]/g, '?')),
  },
);

/** What the stream targets are built from. */
export interface SseContext {
  routerUrl: string;
  /** Ids of tasks that exist (seeded), and some that do not. */
  knownIds: readonly string[];
  auth: fc.Arbitrary<string | undefined>;
  /** Requests of the console stream, and of the task stream (it takes a task id). */
  count: number;
  idCount: number;
}

/** The targets: the task events stream and the console's fleet events stream. */
export function sseTargets(ctx: SseContext): FuzzTarget[] {
  const lastEventId = fc.oneof(
    { weight: 8, arbitrary: lastEventIdArb.map((v): string | string[] => v) },
    { weight: 1, arbitrary: fc.tuple(lastEventIdArb, lastEventIdArb).map(([a, b]) => [a, b]) },
  );
  const taskSegment = fc.oneof(
    {
      weight: 6,
      arbitrary: ctx.knownIds.length > 0 ? fc.constantFrom(...ctx.knownIds) : fc.constant('x'),
    },
    { weight: 2, arbitrary: fc.nat().map((n) => `fuzz-unknown-${n}`) },
    { weight: 2, arbitrary: hostileSegment },
  );
  const auth = fc.oneof(
    { weight: 9, arbitrary: ctx.auth },
    { weight: 1, arbitrary: badAuthorization },
  );
  const stream = (
    category: string,
    target: string,
    id: string | string[],
    a: string | string[] | undefined,
  ): FuzzRequest => {
    const headers: Headers = { 'last-event-id': id, accept: 'text/event-stream' };
    if (a !== undefined) headers.authorization = a;
    return { category, method: 'GET', target, headers, firstEvent: true };
  };
  return [
    {
      key: 'router GET /v1/tasks/{task_id}/events Last-Event-ID',
      baseUrl: ctx.routerUrl,
      count: ctx.idCount,
      arb: fc
        .tuple(taskSegment, lastEventId, auth)
        .map(([seg, id, a]) => stream('last-event-id', `/v1/tasks/${seg}/events`, id, a)),
    },
    {
      key: 'router GET /v1/console/events Last-Event-ID',
      baseUrl: ctx.routerUrl,
      count: ctx.count,
      arb: fc
        .tuple(fc.constantFrom('', '?backlog=0', '?backlog=500', '?backlog=1'), lastEventId, auth)
        .map(([q, id, a]) => stream('last-event-id', `/v1/console/events${q}`, id, a)),
    },
  ];
}
