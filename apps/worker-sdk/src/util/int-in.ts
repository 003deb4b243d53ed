/** An option that must be an integer within `min`..`max`; a RangeError names it otherwise. */
export function intIn(name: string, value: number, min: number, max: number): number {
  if (!Number.isInteger(value) || value < min || value > max) {
    throw new RangeError(`${name} must be an integer within ${min}..${max}, got ${value}`);
  }
  return value;
}
