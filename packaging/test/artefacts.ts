// The artefacts the package tests check. By default the tests' own builds, made when their
// sources changed (cache.ts): the .debs in the 'test' flavour (gzip -1, dist/.test/), the
// executable and the tarballs as a release makes them. With GUARD_RELEASE_ARTEFACTS=1, which
// `npm run release:build` sets when it runs these tests after building, they check the
// release's own files in dist/ instead, never rebuilt: the bytes that SHA256SUMS lists are
// the bytes tested, and a missing one fails the test rather than being made.

import { existsSync } from 'node:fs';
import { relative } from 'node:path';
import { agentDebPath, ensureAgentDeb } from '../build/agent-deb.ts';
import { AGENT_SEA, ensureAgentSea } from '../build/agent-sea.ts';
import { builtServerImage, ensureServerImage, imagePath, type ServerImage } from '../build/image.ts';
import { ensureListenPackage, listenTarball } from '../build/listen-package.ts';
import { ROOT } from '../build/paths.ts';
import { ensureServerDeb, serverDebPath } from '../build/server-deb.ts';
import { ensureWebhooksPackage, webhooksTarball } from '../build/webhooks-package.ts';

/** The environment variable release:build sets for the tests it runs. */
export const RELEASE_ARTEFACTS_ENV = 'GUARD_RELEASE_ARTEFACTS';
/** Whether this run checks the release in dist/ (read once, here). */
export const RELEASE_ARTEFACTS = process.env[RELEASE_ARTEFACTS_ENV] === '1';

function released(path: string): string {
  if (!existsSync(path))
    throw new Error(
      `${RELEASE_ARTEFACTS_ENV}=1 but ${relative(ROOT, path)} is missing: run npm run release:build (the tests never build a release artefact)`,
    );
  return path;
}

/** dist/guard-agent-linux-x64. */
export async function agentExecutable(): Promise<string> {
  return RELEASE_ARTEFACTS ? released(AGENT_SEA) : ensureAgentSea();
}

/** The agent .deb: the release's (xz) or the tests' (gzip -1, dist/.test/). */
export async function agentDeb(): Promise<string> {
  return RELEASE_ARTEFACTS ? released(agentDebPath('release')) : ensureAgentDeb('test');
}

/** The server .deb: the release's (xz) or the tests' (gzip -1, dist/.test/). */
export async function serverDeb(): Promise<string> {
  return RELEASE_ARTEFACTS ? released(serverDebPath('release')) : ensureServerDeb('test');
}

/** dist/guard-webhooks-<v>.tgz. */
export async function webhooksPackage(): Promise<string> {
  return RELEASE_ARTEFACTS ? released(webhooksTarball()) : ensureWebhooksPackage();
}

/** dist/guard-listen-<v>.tgz. */
export async function listenPackage(): Promise<string> {
  return RELEASE_ARTEFACTS ? released(listenTarball()) : ensureListenPackage();
}

/** The server image archive, dist/guard-server-<v>.image.tar (one flavour: the release's). */
export async function serverImage(): Promise<ServerImage> {
  if (!RELEASE_ARTEFACTS) return ensureServerImage();
  released(imagePath());
  return builtServerImage();
}
