export { PiscinaDispatcher, type PoolOptions } from './pool.ts';
export { MASK, createMasker } from './masking.ts';
