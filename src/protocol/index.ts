export * from './schemas';
export { describeZodError, isRecord } from './fields';
export type { JsonObject, Normalized } from './fields';
export * from './normalize';
export * from './normalizeObservation';
export * from './normalizeResponse';
export * from './ndjson';
export * from './client';
