export * from './bundle.ts';
export * from './bundle-requests.ts';
export * from './detection.ts';
export * from './insights.ts';
export * from './manifest.ts';
export * from './retry-after.ts';
export * from './schema-check.ts';
export * from './wire.ts';
