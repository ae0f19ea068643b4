// Versions come from one place (issue 13): the root package.json. `npm version <v>
// --workspaces --include-workspace-root --no-git-tag-version` moves every manifest together;
// this test fails when one drifted, and when CHANGELOG.md has no section for the version.

import assert from 'node:assert/strict';
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { ROOT, releaseVersion } from '../build/paths.ts';

describe('release version', () => {
  it('every package.json carries the root version', () => {
    const version = releaseVersion();
    assert.match(version, /^\d+\.\d+\.\d+(-[0-9A-Za-z.-]+)?$/);
    for (const pkg of readdirSync(join(ROOT, 'packages'))) {
      const manifest = JSON.parse(readFileSync(join(ROOT, 'packages', pkg, 'package.json'), 'utf8'));
      assert.equal(manifest.version, version, `packages/${pkg}/package.json`);
      for (const [dep, range] of Object.entries<string>(manifest.dependencies ?? {}))
        if (dep.startsWith('@guard/')) assert.equal(range, version, `packages/${pkg} depends on ${dep}@${range}`);
    }
  });

  it('CHANGELOG.md has a section for it', () => {
    const changelog = readFileSync(join(ROOT, 'CHANGELOG.md'), 'utf8');
    assert.match(changelog, new RegExp(`^## \\[?${releaseVersion().replaceAll('.', '\\.')}\\]?`, 'm'));
  });
});
