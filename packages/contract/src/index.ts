export * from './bundle.ts';
export * from './retry-after.ts';
export * from './wire.ts';
