// Analyzers of the logs read: agent.log's levels and most frequent errors, restarts and crash
// traces across every log member, and rotated segments that could not be read whole.

import { AGENT_LOG_MEMBER } from '@guard/contract';
import { type Analyzer, evidence, finding, plural, quote } from './analyzer.ts';

export const FREQUENT_ERRORS_SHOWN = 5;
const CRASHES_SHOWN = 5;
const STARTS_SHOWN = 10;

export const logLevels: Analyzer = {
  name: 'log levels',
  description: "agent.log's ERROR and WARN lines, its line count and time span, and each rotated segment's.",
  codes: ['log.levels'],
  analyze({ agentLog, logs }) {
    if (!agentLog) return [];
    const span = agentLog.firstTime && agentLog.lastTime ? ` from ${agentLog.firstTime} to ${agentLog.lastTime}` : '';
    const segments = logs.filter((l) => l.member !== AGENT_LOG_MEMBER);
    const segmentText =
      segments.length === 0
        ? ''
        : ` Rotated segments read: ${segments
            .map(
              (s) =>
                `${s.member} (${plural(s.lines, 'line')}, ${s.errors} ERROR, ${s.warnings} WARN${s.firstTime ? `, ${s.firstTime} to ${s.lastTime ?? '?'}` : ''})`,
            )
            .join('; ')}.`;
    return [
      finding(
        agentLog.errors > 0 ? 'warning' : 'info',
        'log.levels',
        `agent.log: ${plural(agentLog.errors, 'ERROR line')} and ${plural(agentLog.warnings, 'WARN line')}`,
        `${plural(agentLog.lines, 'line')}${span}.${agentLog.longLines ? ` ${plural(agentLog.longLines, 'line')} longer than 64 KiB were read in part.` : ''}${segmentText}`,
        [evidence(AGENT_LOG_MEMBER)],
      ),
    ];
  },
};

export const frequentErrors: Analyzer = {
  name: 'frequent errors',
  description:
    'The 5 most frequent error messages of agent.log (numbers and hex folded), with counts and first and last lines.',
  codes: ['log.frequent_error'],
  analyze({ agentLog }) {
    if (!agentLog) return [];
    const frequent = [...agentLog.messages.values()].sort((a, b) => b.count - a.count || a.first.line - b.first.line);
    return frequent.slice(0, FREQUENT_ERRORS_SHOWN).map((m) => {
      const when =
        m.count === 1
          ? `once, at line ${m.first.line}${m.first.time ? ` (${m.first.time})` : ''}`
          : `${plural(m.count, 'time')}: first at line ${m.first.line}${m.first.time ? ` (${m.first.time})` : ''}, last at line ${m.last.line}${m.last.time ? ` (${m.last.time})` : ''}`;
      return finding(
        'warning',
        'log.frequent_error',
        `${quote(m.message)} ×${m.count}`,
        `This error was logged ${when}.`,
        m.count === 1
          ? [evidence(AGENT_LOG_MEMBER, m.first.line)]
          : [evidence(AGENT_LOG_MEMBER, m.first.line), evidence(AGENT_LOG_MEMBER, m.last.line)],
      );
    });
  },
};

export const manyMessages: Analyzer = {
  name: 'many messages',
  description: 'More than 1,000 distinct error messages in agent.log (the rest are only counted).',
  codes: ['log.many_messages'],
  analyze({ agentLog }) {
    if (!agentLog || agentLog.otherErrors === 0) return [];
    return [
      finding(
        'info',
        'log.many_messages',
        'More distinct error messages than are counted one by one',
        `${plural(agentLog.otherErrors, 'ERROR line')} had messages beyond the first 1,000 distinct ones and are counted only in the total.`,
        [evidence(AGENT_LOG_MEMBER)],
      ),
    ];
  },
};

export const restarts: Analyzer = {
  name: 'restarts',
  description: 'More than one agent start in the logs.',
  codes: ['agent.restarts'],
  analyze({ logs }) {
    const starts = logs.flatMap((l) => l.starts.map((s) => ({ ...s, member: l.member })));
    const startCount = logs.reduce((n, l) => n + l.startCount, 0);
    if (startCount <= 1) return [];
    const times = starts
      .map((s) => s.time)
      .filter((t): t is string => t !== undefined)
      .sort();
    return [
      finding(
        'warning',
        'agent.restarts',
        `The agent started ${startCount} times`,
        `The logs read show ${startCount} agent starts${times.length ? `, from ${times[0]} to ${times.at(-1)}` : ''}: it was restarted ${plural(startCount - 1, 'time')} (by an operator, an update, or after a crash).`,
        starts.slice(0, STARTS_SHOWN).map((s) => evidence(s.member, s.line)),
      ),
    ];
  },
};

export const crashes: Analyzer = {
  name: 'crash traces',
  description: 'Crash traces in any log: panic, fatal error, goroutine [running], SIGSEGV (up to 5).',
  codes: ['agent.crash'],
  analyze({ logs }) {
    const all = logs.flatMap((l) => l.crashes.map((c) => ({ ...c, member: l.member })));
    const crashCount = logs.reduce((n, l) => n + l.crashCount, 0);
    return all
      .slice(0, CRASHES_SHOWN)
      .map((c) =>
        finding(
          'error',
          'agent.crash',
          `Crash trace: ${c.text.length > 100 ? `${c.text.slice(0, 99)}…` : c.text}`,
          `A crash trace starts at line ${c.line} of ${c.member}${c.time ? ` (${c.time})` : ''}.${crashCount > CRASHES_SHOWN ? ` ${crashCount} crash traces in all; the first ${CRASHES_SHOWN} are listed.` : ''}`,
          [evidence(c.member, c.line)],
        ),
      );
  },
};

export const unreadableSegments: Analyzer = {
  name: 'unreadable segments',
  description: 'A rotated segment that is not valid gzip, or inflates beyond what a bundle may read.',
  codes: ['log.segment_unreadable'],
  analyze({ facts }) {
    return facts.segmentProblems.map((p) =>
      finding('warning', 'log.segment_unreadable', `${p.member} could not be read whole`, p.message, [
        evidence(p.member),
      ]),
    );
  },
};
