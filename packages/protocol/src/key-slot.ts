/**
 * Redis Cluster's hash slot of a key (CRC16/XMODEM of the key, or of its hash tag — the part
 * between the first `{` and the next `}` when that part is not empty — modulo 16384), as
 * `CLUSTER KEYSLOT` answers it. Keys of one slot may share a script, a MULTI or a pipeline on a
 * Cluster; keys of different slots may not.
 */
export function keySlot(key: string): number {
  const bytes = Buffer.from(hashedPart(key), 'utf8');
  let crc = 0;
  for (const byte of bytes) {
    crc ^= byte << 8;
    for (let bit = 0; bit < 8; bit++) crc = crc & 0x8000 ? (crc << 1) ^ 0x1021 : crc << 1;
    crc &= 0xffff;
  }
  return crc % 16384;
}

function hashedPart(key: string): string {
  const open = key.indexOf('{');
  if (open === -1) return key;
  const close = key.indexOf('}', open + 1);
  if (close === -1 || close === open + 1) return key;
  return key.slice(open + 1, close);
}
