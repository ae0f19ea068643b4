import listenPackage from '../package.json' with { type: 'json' };

/** The CLI's version, from its package.json (a bundler inlines it: packaging/build/listen-package.ts). */
export const LISTEN_VERSION: string = listenPackage.version;
