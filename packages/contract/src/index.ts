export * from './bundle.ts';
export * from './wire.ts';
