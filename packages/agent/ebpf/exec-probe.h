/* SPDX-License-Identifier: GPL-2.0 OR Apache-2.0 */
/* The event guard-exec-probe's kernel half sends its loader (one per matching exec). Shared by
 * exec-probe.bpf.c and exec-probe.c; the includer provides __u32/__u64 (vmlinux.h or
 * <linux/types.h>). Sizes that index arrays in BPF are powers of two (the verifier's masks). */
#ifndef GUARD_EXEC_PROBE_H
#define GUARD_EXEC_PROBE_H

#define PROBE_MAX_PREFIXES 8
#define PROBE_PREFIX_MAX 64 /* bytes of one prefix, NUL included */
#define PROBE_FILENAME_MAX 256 /* bprm->filename, NUL included; longer is cut */
#define PROBE_PATH_MAX 1024 /* the rebuilt path's buffer */
#define PROBE_NAME_MAX 256 /* one component, NUL included (NAME_MAX + 1) */
#define PROBE_PATH_DEPTH 32 /* components walked; deeper paths are not rebuilt */
#define PROBE_ARGS_MAX 1024 /* bytes of argv read from the new image */
#define PROBE_COMM_LEN 16

enum probe_path_status {
	PROBE_PATH_OK = 0,
	PROBE_PATH_TRUNCATED = 1, /* longer than PROBE_PATH_MAX: the start is right, the end is cut */
	PROBE_PATH_TOO_DEEP = 2, /* more than PROBE_PATH_DEPTH components: path left empty */
	PROBE_PATH_UNREADABLE = 3, /* a component could not be read: path not trusted */
};

struct probe_event {
	__u64 ktime_ns;
	__u32 pid;
	__u32 ppid;
	__u32 uid;
	__u32 gid;
	__u32 args_len;
	__u32 args_truncated;
	__u32 path_status; /* of path */
	__u32 cwd_status; /* of cwd */
	__u32 script; /* 1: an interpreter runs filename (bprm->interp != bprm->filename) */
	__u32 reserved;
	char comm[PROBE_COMM_LEN];
	char filename[PROBE_FILENAME_MAX];
	char path[PROBE_PATH_MAX]; /* bprm->file's path: for a script, its interpreter's */
	char cwd[PROBE_PATH_MAX]; /* the working directory + "/", only for a relative filename */
	char args[PROBE_ARGS_MAX];
};

#endif
