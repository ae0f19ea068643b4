// The host's own names, which `collect --obfuscate` replaces wherever they stand as whole
// words (obfuscate.ts): its hostname (and the short name of an FQDN), the names /etc/hosts
// gives any address, and the user names of /etc/passwd with a uid of 1000 or more (people's
// accounts by Debian's convention; system accounts such as root, daemon or www-data are
// words in many log lines and name no person). A source that cannot be read adds nothing:
// the patterns (user=, host=, sshd phrases, addresses) still apply.

import { readFile } from 'node:fs/promises';
import os from 'node:os';
import type { KnownNames } from './obfuscate.ts';
import type { SystemSources } from './system-info.ts';

/** Debian's first uid of a person's account, and nobody's. */
const FIRST_PERSON_UID = 1000;
const NOBODY_UID = 65534;
/** Sources larger than this are not read (a real /etc/passwd or /etc/hosts is a few KiB). */
const MAX_SOURCE_BYTES = 4 * 1024 * 1024;

export async function readKnownNames(sources: SystemSources, hostname = os.hostname()): Promise<KnownNames> {
  const hosts = new Set<string>();
  const addHost = (name: string) => {
    if (!/^[A-Za-z0-9][A-Za-z0-9.-]*$/.test(name) || !/[A-Za-z]/.test(name)) return;
    hosts.add(name);
    const dot = name.indexOf('.');
    if (dot > 0) hosts.add(name.slice(0, dot));
  };
  addHost(hostname);
  const hostsText = sources.etcHosts ? await readSmall(sources.etcHosts) : '';
  for (const line of hostsText.split('\n')) {
    const fields = line.replace(/#.*/, '').trim().split(/\s+/);
    for (const name of fields.slice(1)) addHost(name);
  }
  const users = new Set<string>();
  const passwd = sources.etcPasswd ? await readSmall(sources.etcPasswd) : '';
  for (const line of passwd.split('\n')) {
    const [name, , uidText] = line.split(':');
    const uid = Number(uidText);
    if (name && /^[A-Za-z_][A-Za-z0-9._-]*\$?$/.test(name) && uid >= FIRST_PERSON_UID && uid !== NOBODY_UID)
      users.add(name);
  }
  return { hosts: [...hosts], users: [...users] };
}

async function readSmall(path: string): Promise<string> {
  try {
    const bytes = await readFile(path);
    return bytes.length > MAX_SOURCE_BYTES ? '' : bytes.toString('utf8');
  } catch {
    return '';
  }
}
