/**
 * What signed acks cost (REACH_AGENT_ACL=on): the agent's signature and registry-sync's check per
 * ack, against encoding and decoding the same ack, for a receipt and for completions with a 100 B
 * and a 4 KB result. Run from the repository root:
 *
 *   node --import tsx apps/registry-sync/scripts/ack-signature-cost.ts
 */
import { randomBytes } from 'node:crypto';
import {
  ackSignatureValid,
  decodeAck,
  encodeAck,
  withAckSignature,
  type AckMessage,
} from '@agent-reach/protocol';

const KEY = randomBytes(32).toString('hex');
const ROUNDS = 200_000;

function ackWith(stage: AckMessage['stage'], resultBytes: number): AckMessage {
  return {
    task_id: 'acme/task-0123456789',
    stage,
    agent_id: 'echo-agent-7',
    instance_id: '3f1c2a7e-5b8d-4f2a-9c1e-7d6b5a4f3e2d',
    epoch: 12,
    attempt: 1,
    ...(stage === 'completed'
      ? { result: JSON.stringify('x'.repeat(resultBytes)), duration_ms: 3, capability: 'echo' }
      : {}),
  };
}

/** Mean µs per call of `fn` over ROUNDS calls, after a warm-up. */
function perCall(fn: () => unknown): number {
  for (let i = 0; i < 20_000; i++) fn();
  const start = process.hrtime.bigint();
  for (let i = 0; i < ROUNDS; i++) fn();
  return Number(process.hrtime.bigint() - start) / 1000 / ROUNDS;
}

const rows: string[][] = [];
for (const [label, ack] of [
  ['receipt', ackWith('received', 0)],
  ['completion, 100 B result', ackWith('completed', 100)],
  ['completion, 4 KB result', ackWith('completed', 4096)],
] as const) {
  const fields = encodeAck(ack);
  const signed = withAckSignature(fields, KEY);
  if (!ackSignatureValid(signed, KEY)) throw new Error('signature does not verify');
  const encode = perCall(() => encodeAck(ack));
  const sign = perCall(() => withAckSignature(encodeAck(ack), KEY)) - encode;
  const decode = perCall(() => decodeAck(signed));
  const verify = perCall(() => ackSignatureValid(signed, KEY));
  rows.push(
    [label, encode, sign, decode, verify].map((v) => (typeof v === 'string' ? v : v.toFixed(2))),
  );
}
const lines = [
  `µs per ack (node ${process.version}, ${ROUNDS} rounds)`,
  ['ack', 'encode', '+ sign', 'decode', 'verify'].join(' | '),
  ...rows.map((row) => row.join(' | ')),
];
process.stdout.write(`${lines.join('\n')}\n`);
