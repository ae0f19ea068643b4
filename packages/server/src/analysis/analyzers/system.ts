// Analyzers of system.json: the kernel's BTF and the eBPF probe's last status.

import { type Analyzer, finding } from './analyzer.ts';

/** probe_status.state values that mean the probe works. */
const PROBE_OK = new Set(['attached', 'running', 'loaded', 'ok', 'ready']);

export const btfMissing: Analyzer = {
  name: 'kernel BTF',
  description: 'system.json says the kernel has no BTF, which the eBPF probes need.',
  codes: ['ebpf.btf_missing'],
  analyze({ system, kernel, inSystem }) {
    if (system?.ebpf?.btf_present !== false) return [];
    return [
      finding(
        'warning',
        'ebpf.btf_missing',
        'The kernel has no BTF: eBPF probes cannot load',
        `/sys/kernel/btf/vmlinux is missing on kernel ${kernel ?? '(unknown)'}: CO-RE eBPF probes need the kernel's BTF (CONFIG_DEBUG_INFO_BTF=y, or a BTF file for this kernel).`,
        [inSystem('"btf_present"')],
      ),
    ];
  },
};

export const probeFailed: Analyzer = {
  name: 'eBPF probe status',
  description: 'system.json reports a probe state other than running, or an error.',
  codes: ['ebpf.probe_failed'],
  analyze({ system, inSystem }) {
    const probe = system?.ebpf?.probe_status;
    if (!probe || typeof probe !== 'object' || Array.isArray(probe)) return [];
    const p = probe as Record<string, unknown>;
    const state = typeof p.state === 'string' ? p.state : undefined;
    const error = [p.error, p.message, p.reason].find((v) => typeof v === 'string') as string | undefined;
    if ((state === undefined || PROBE_OK.has(state.toLowerCase())) && error === undefined) return [];
    return [
      finding(
        'error',
        'ebpf.probe_failed',
        `eBPF probe ${typeof p.probe === 'string' ? `${p.probe} ` : ''}${state ?? 'failed'}`,
        `The probe's last status is ${state ?? '(no state)'}${error ? `: ${error}` : ''}${typeof p.updated_at === 'string' ? ` (at ${p.updated_at})` : ''}.`,
        [inSystem('"probe_status"')],
      ),
    ];
  },
};
