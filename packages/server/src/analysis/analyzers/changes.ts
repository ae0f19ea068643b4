// Analyzers that compare a bundle with the same server's previous analysed one: error
// messages not logged before, and a changed agent version or kernel.

import { type Analyzer, type AnalyzerInput, finding, plural, quote } from './analyzer.ts';

const NEW_ERRORS_SHOWN = 5;

const since = ({ ctx }: AnalyzerInput) =>
  ctx.previous ? `since the previous bundle (${ctx.previous.bundleId}, ${ctx.previous.uploadedAt})` : '';

export const newErrors: Analyzer = {
  name: 'new errors',
  description: "Error messages that the same server's previous analysed bundle did not have (up to 5 named).",
  codes: ['change.new_errors'],
  analyze(input) {
    const prev = input.ctx.previous;
    if (!prev) return [];
    const messages = input.summary.error_messages;
    const fresh = Object.keys(messages).filter((k) => !(k in prev.summary.error_messages));
    if (fresh.length === 0) return [];
    return [
      finding(
        'warning',
        'change.new_errors',
        `${plural(fresh.length, 'new error message')} ${since(input)}`,
        `Not logged in the previous bundle: ${fresh
          .slice(0, NEW_ERRORS_SHOWN)
          .map((k) => quote(messages[k]))
          .join(', ')}${fresh.length > NEW_ERRORS_SHOWN ? `, and ${fresh.length - NEW_ERRORS_SHOWN} more` : ''}.`,
        fresh.slice(0, NEW_ERRORS_SHOWN).flatMap((k) => input.firstLines.get(k) ?? []),
      ),
    ];
  },
};

export const agentVersionChanged: Analyzer = {
  name: 'agent version changed',
  description: "The agent version differs from the same server's previous bundle.",
  codes: ['change.agent_version'],
  analyze(input) {
    const prev = input.ctx.previous;
    if (!prev || prev.summary.agent_version === input.manifest.agent_version) return [];
    return [
      finding(
        'info',
        'change.agent_version',
        `Agent ${prev.summary.agent_version} → ${input.manifest.agent_version}`,
        `The agent version changed ${since(input)}.`,
        [input.inManifest('"agent_version"')],
      ),
    ];
  },
};

export const kernelChanged: Analyzer = {
  name: 'kernel changed',
  description: "The kernel release differs from the same server's previous bundle.",
  codes: ['change.kernel'],
  analyze(input) {
    const prev = input.ctx.previous;
    const { kernel } = input;
    if (!prev || kernel === null || prev.summary.kernel_release === null || prev.summary.kernel_release === kernel)
      return [];
    return [
      finding(
        'info',
        'change.kernel',
        `Kernel ${prev.summary.kernel_release} → ${kernel}`,
        `The kernel changed ${since(input)}.`,
        [input.inSystem('"release"')],
      ),
    ];
  },
};
