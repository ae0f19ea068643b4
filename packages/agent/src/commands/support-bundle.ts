// `guard-agent support-bundle`: the group of the bundle commands, each in its own file.

import type { Command } from 'commander';
import type { CommandContext } from '../context.ts';
import { addCollectCommand } from './support-bundle-collect.ts';
import { addRevealCommand } from './support-bundle-reveal.ts';
import { addUploadCommand } from './support-bundle-upload.ts';

export function addSupportBundleCommand(program: Command, contextOf: () => CommandContext): void {
  const bundle = program
    .command('support-bundle')
    .description('build and send diagnostic bundles for Guard support')
    .exitOverride();
  addCollectCommand(bundle, contextOf);
  addUploadCommand(bundle, contextOf);
  addRevealCommand(bundle, contextOf);
}
