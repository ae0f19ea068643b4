// Running a program as an operator who is not root would, from a suite that runs as root.

/** True when the suite runs as root (CI does). */
export const IS_ROOT = process.getuid?.() === 0;

/**
 * The command prefix that runs a program as an operator who is not root would: when the
 * suite runs as root, setpriv drops the capabilities that let root ignore file modes and bind
 * low ports (DAC override and read-search, fowner, net_bind_service) from the bounding set,
 * so a mode-000 file, a 0555 directory or port 1 is refused as it is to any other user. The
 * uid stays 0, so the program and the test's files stay reachable wherever the checkout is
 * (a fresh clone under a 0700 directory keeps a user such as `nobody` out of the whole tree).
 * setpriv execs: the PID stays the program's. Run by an unprivileged user, the prefix is empty.
 */
export const UNPRIVILEGED: readonly string[] = IS_ROOT
  ? ['setpriv', '--bounding-set=-dac_override,-dac_read_search,-fowner,-net_bind_service', '--']
  : [];
