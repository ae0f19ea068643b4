// The one table of guard-server's exit codes. Only main.ts ends the process, and only with
// these; docs/guard-server.md#exit-codes documents them (a test keeps the two equal).

export const EXIT_CODES = {
  ok: { code: 0, summary: 'success', when: 'setup done, --help, --version, or serve stopped by SIGTERM or SIGINT' },
  failure: {
    code: 1,
    summary: 'runtime failure',
    when: 'the data directory or database cannot be used (or another guard-server serves that data directory), shutdown failed, or an unexpected error',
  },
  usage: {
    code: 2,
    summary: 'usage or configuration error',
    when: 'an unknown command or flag, a missing or invalid value, an unreadable config file: nothing was started or changed',
  },
  listen: {
    code: 3,
    summary: 'cannot listen',
    when: 'serve cannot listen on its address: in use, not permitted, or not an address of this host',
  },
} as const;

export type ExitName = keyof typeof EXIT_CODES;
