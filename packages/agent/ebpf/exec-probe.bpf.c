// SPDX-License-Identifier: GPL-2.0 OR Apache-2.0
// The kernel half of guard-exec-probe (docs/decisions/0012-exec-probe.md).
//
// Contract: on every successful execve/execveat (tracepoint sched_process_exec, attached as a
// BTF-enabled raw tracepoint, so no tracefs mount is needed) decide IN THE KERNEL whether the
// executed file lies under one of the configured prefixes; only then copy one event to the ring
// buffer. An exec that does not match costs a path walk and a few compares, nothing in
// userspace.
//
// Which name is matched against the prefixes:
//   - a binary: the path of bprm->file rebuilt from its dentries and mounts (what d_path gives
//     relative to the mount namespace's root), so relative names, "..", symlinks into the
//     prefixes and fexecve (/dev/fd/N) are all seen as the file they are. bpf_d_path is not
//     allowed from tp_btf, hence the walk below. Only when that path cannot be rebuilt (deeper
//     than PROBE_PATH_DEPTH, an unreadable name) does bprm->filename, the name as given, decide;
//   - a script (#! or binfmt_misc): bprm->file is its interpreter by now, so the name as given;
//     a relative one is joined to the working directory (rebuilt the same way). A name with
//     ".." through other directories ("/tmp/../x.sh", "../tmp/x.sh") is taken literally.
// All names are sent; userspace says which one was the evidence.

#include "vmlinux.h"
#include <bpf/bpf_core_read.h>
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_tracing.h>

#include "exec-probe.h"

char LICENSE[] SEC("license") = "Dual BSD/GPL";

// Keeps clang from dropping a mask it can prove redundant: the verifier cannot prove it.
#define opaque(var) asm volatile("" : "+r"(var))

// Set by the loader before load (rodata: the verifier sees them as constants).
const volatile __u32 prefix_count = 0;
const volatile __u32 prefix_len[PROBE_MAX_PREFIXES] = {};
const volatile char prefixes[PROBE_MAX_PREFIXES][PROBE_PREFIX_MAX] = {};

// Events the ring buffer had no room for; the loader reports growth as {"type":"lost"}.
__u64 lost_events = 0;

struct {
	__uint(type, BPF_MAP_TYPE_RINGBUF);
	__uint(max_entries, 512 * 1024); // ~130 events
} events SEC(".maps");

// Per-CPU scratch: the event is built here (too big for the 512-byte stack) and copied to the
// ring buffer only on a match.
struct scratch {
	struct probe_event event;
	struct dentry *dentries[PROBE_PATH_DEPTH];
	// Never written, so always 0 at run time, but the verifier does not know its value: the
	// walk's counters start from it so that it does not verify the rest of the program once per
	// possible path depth (a counter it knows exactly is a different state at every value).
	__u32 unknown_zero;
};

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct scratch);
} scratch_map SEC(".maps");

static __always_inline bool has_prefix(const char *name)
{
	for (__u32 i = 0; i < PROBE_MAX_PREFIXES; i++) {
		if (i >= prefix_count)
			return false;
		__u32 len = prefix_len[i];
		bool same = len > 0;
		for (__u32 j = 0; j < PROBE_PREFIX_MAX; j++) {
			if (j >= len)
				break;
			if (name[j] != prefixes[i][j]) {
				same = false;
				break;
			}
		}
		if (same)
			return true;
	}
	return false;
}

struct path_walk {
	struct scratch *s;
	char *buf; // PROBE_PATH_MAX bytes inside s->event
	struct dentry *dentry;
	struct mount *mnt;
	__u32 depth; // components remembered in s->dentries
	__u32 off; // bytes written to buf
	__u32 status; // enum probe_path_status
	bool reached_root;
};

// One step from leaf towards root: a mount's root crosses to where that mount is mounted, any
// other dentry is remembered and left for its parent. Returns 1 (stop) at the namespace's root.
// bpf_loop callbacks are verified once, whatever the number of steps: a plain loop with these
// two branches per step makes the verifier walk every combination.
static long walk_step(__u32 index, void *ctx)
{
	struct path_walk *w = ctx;
	// Locals, not w->...: BPF_CORE_READ would relocate the access to our own struct too.
	struct mount *mnt = w->mnt;
	struct dentry *dentry = w->dentry;
	struct dentry *mnt_root = BPF_CORE_READ(mnt, mnt.mnt_root);
	struct dentry *parent = BPF_CORE_READ(dentry, d_parent);
	if (dentry == mnt_root || dentry == parent) {
		struct mount *mnt_parent = BPF_CORE_READ(mnt, mnt_parent);
		if (mnt_parent == mnt || !mnt_parent) {
			w->reached_root = true;
			return 1;
		}
		w->dentry = BPF_CORE_READ(mnt, mnt_mountpoint);
		w->mnt = mnt_parent;
		return 0;
	}
	if (w->depth >= PROBE_PATH_DEPTH)
		return 1; // too deep: reached_root stays false
	w->s->dentries[w->depth & (PROBE_PATH_DEPTH - 1)] = dentry;
	w->depth++;
	w->dentry = parent;
	return 0;
}

// Appends "/" and the name of the index-th component counted from the root.
static long append_step(__u32 index, void *ctx)
{
	struct path_walk *w = ctx;
	char *buf = w->buf;
	__u32 off = w->off;
	if (off >= PROBE_PATH_MAX - PROBE_NAME_MAX - 2) {
		w->status = PROBE_PATH_TRUNCATED;
		return 1;
	}
	struct dentry *d = w->s->dentries[(w->depth - 1 - index) & (PROBE_PATH_DEPTH - 1)];
	const unsigned char *name = BPF_CORE_READ(d, d_name.name);
	opaque(off);
	buf[off & (PROBE_PATH_MAX - 1)] = '/';
	off++;
	opaque(off);
	// off < PROBE_PATH_MAX - PROBE_NAME_MAX here, so the read ends inside buf.
	long n = bpf_probe_read_kernel_str(&buf[off & (PROBE_PATH_MAX - 1)], PROBE_NAME_MAX, name);
	if (n <= 1) { // an empty or unreadable component: the path cannot be trusted
		w->status = PROBE_PATH_UNREADABLE;
		return 1;
	}
	w->off = off + n - 1;
	return 0;
}

// Writes the path of (mnt, dentry) into buf (PROBE_PATH_MAX bytes): dentries up to each
// mount's root, crossing to the parent mount, up to the mount namespace's root (what d_path
// gives for a task whose root is its namespace's root), then `trailer` when it is not 0 and
// the path is not "/". Returns an enum probe_path_status; buf is "" unless OK or TRUNCATED.
static __always_inline __u32 resolve_path(struct scratch *s, char *buf, struct vfsmount *vfsmnt,
					   struct dentry *dentry, char trailer)
{
	struct path_walk w = {
		.s = s,
		.buf = buf,
		.dentry = dentry,
		.mnt = container_of(vfsmnt, struct mount, mnt),
		.depth = s->unknown_zero,
		.off = s->unknown_zero,
		.status = PROBE_PATH_OK,
	};

	buf[0] = 0;
	bpf_loop(PROBE_PATH_DEPTH * 2, walk_step, &w, 0);
	if (!w.reached_root)
		return PROBE_PATH_TOO_DEEP;
	bpf_loop(w.depth, append_step, &w, 0);
	if (w.status == PROBE_PATH_UNREADABLE) {
		buf[0] = 0;
		return w.status;
	}
	__u32 off = w.off;
	if (trailer && off > 0 && off < PROBE_PATH_MAX - 1) {
		__u32 at = off++;
		opaque(at);
		buf[at & (PROBE_PATH_MAX - 1)] = trailer;
	}
	opaque(off);
	buf[off & (PROBE_PATH_MAX - 1)] = 0;
	if (buf[0] == 0) { // depth 0: the namespace's root itself
		buf[0] = '/';
		buf[1] = 0;
	}
	return w.status;
}

static __always_inline bool path_usable(__u32 status)
{
	return status == PROBE_PATH_OK || status == PROBE_PATH_TRUNCATED;
}

SEC("tp_btf/sched_process_exec")
int BPF_PROG(handle_exec, struct task_struct *task, pid_t old_pid, struct linux_binprm *bprm)
{
	__u32 zero = 0;
	struct scratch *s = bpf_map_lookup_elem(&scratch_map, &zero);
	if (!s)
		return 0;
	struct probe_event *e = &s->event;

	const char *filename = BPF_CORE_READ(bprm, filename);
	if (bpf_probe_read_kernel_str(e->filename, sizeof(e->filename), filename) < 0)
		e->filename[0] = 0;
	struct file *file = BPF_CORE_READ(bprm, file);
	e->path_status = resolve_path(s, e->path, BPF_CORE_READ(file, f_path.mnt),
				      BPF_CORE_READ(file, f_path.dentry), 0);
	e->cwd[0] = 0;
	e->cwd_status = PROBE_PATH_TOO_DEEP; // "not resolved" unless the script case below runs

	// bprm->interp starts as bprm->filename; binfmt_script and binfmt_misc point it at the
	// interpreter, and bprm->file is by now the interpreter: the script's own file is gone.
	e->script = BPF_CORE_READ(bprm, interp) != filename;
	bool matched;
	if (!e->script)
		matched = path_usable(e->path_status) ? has_prefix(e->path) : has_prefix(e->filename);
	else if (e->filename[0] == '/')
		matched = has_prefix(e->filename);
	else {
		// A script by a relative name ("./x.sh"): the working directory decides.
		struct fs_struct *fs = BPF_CORE_READ(task, fs);
		e->cwd_status = resolve_path(s, e->cwd, BPF_CORE_READ(fs, pwd.mnt),
					     BPF_CORE_READ(fs, pwd.dentry), '/');
		matched = path_usable(e->cwd_status) && has_prefix(e->cwd);
	}
	if (!matched)
		return 0;

	e->ktime_ns = bpf_ktime_get_ns();
	e->pid = BPF_CORE_READ(task, tgid);
	e->ppid = BPF_CORE_READ(task, real_parent, tgid);
	__u64 uid_gid = bpf_get_current_uid_gid();
	e->uid = (__u32)uid_gid;
	e->gid = (__u32)(uid_gid >> 32);
	bpf_get_current_comm(e->comm, sizeof(e->comm));

	// The new image's argv: NUL-separated strings at mm->arg_start..arg_end in the task's own
	// memory (this tracepoint runs in the exec'ing task, after the new mm is installed).
	unsigned long arg_start = BPF_CORE_READ(task, mm, arg_start);
	unsigned long arg_end = BPF_CORE_READ(task, mm, arg_end);
	__u64 args_len = arg_end > arg_start ? arg_end - arg_start : 0;
	e->args_truncated = args_len > PROBE_ARGS_MAX;
	if (args_len > PROBE_ARGS_MAX)
		args_len = PROBE_ARGS_MAX;
	e->args_len = 0;
	if (args_len > 0 && bpf_probe_read_user(e->args, (__u32)args_len, (const void *)arg_start) == 0)
		e->args_len = args_len;

	if (bpf_ringbuf_output(&events, e, sizeof(*e), 0) != 0)
		__sync_fetch_and_add(&lost_events, 1);
	return 0;
}
