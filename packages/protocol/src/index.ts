export * from './ids.ts';
export * from './keys.ts';
export * from './states.ts';
export * from './fields.ts';
export * from './codecs.ts';
export * from './schemas.ts';
export * from './errors.ts';
export * from './snapshot.ts';
