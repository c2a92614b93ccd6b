export * from './status.ts';
export * from './errors.ts';
export * from './names.ts';
export * from './ids.ts';
export * from './clock.ts';
export * from './model.ts';
export * from './run.ts';
export * from './ports.ts';
