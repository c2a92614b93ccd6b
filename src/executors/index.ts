export { PiscinaDispatcher, type PoolOptions } from './pool.ts';
