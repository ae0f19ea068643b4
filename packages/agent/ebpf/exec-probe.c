// SPDX-License-Identifier: Apache-2.0
// guard-exec-probe: loads exec-probe.bpf.c, then writes one JSON object per line on stdout
// (docs/decisions/0012-exec-probe.md):
//   {"type":"ready"}                                   once the program is attached
//   {"type":"exec","pid":..,"ppid":..,"uid":..,"gid":..,"comm":"..","filename":"..",
//    "path":"..","cwd":"..","script":bool,"argv":[..],"ktime_ns":..}   one per matching exec
//   {"type":"lost","count":N}                          when the ring buffer overflowed (N total)
// "filename" is the name the caller gave execve, "path" the executed file's path rebuilt from
// the kernel's dentries ("" when it could not be; for a script, its interpreter's), "cwd" the
// working directory with a trailing "/" when a script was run by a relative name (else ""),
// "script" whether an interpreter runs filename. Strings are JSON-escaped byte for byte:
// valid UTF-8 passes, control bytes are \u00XX, and a byte that is not part of valid UTF-8 is
// \udcXX (XX = the byte, Python's "surrogateescape"), so no name is lost or made ambiguous.
// On failure: one line on stderr saying why, exit status 1. Usage errors: exit status 2.
// Ends with status 0 on SIGTERM/SIGINT, when stdout's reader goes away (EPIPE) and when the
// parent dies (PR_SET_PDEATHSIG).

#include <errno.h>
#include <fcntl.h>
#include <linux/types.h>
#include <poll.h>
#include <signal.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <unistd.h>

#include <bpf/libbpf.h>

#include "exec-probe.h"
#include "exec-probe.skel.h"

#define BTF_PATH "/sys/kernel/btf/vmlinux"
#define POLL_INTERVAL_MS 500
#define MAX_ARGV 8

static volatile sig_atomic_t stopping;
static char first_libbpf_warning[320];

static void on_signal(int sig)
{
	(void)sig;
	stopping = 1;
}

// libbpf's own messages are kept, not printed (GUARD_EXEC_PROBE_DEBUG=1 prints them): the
// failure line names the cause in words and adds libbpf's first warning, the root cause (for a
// verifier rejection, the start of its log), on the same line.
static int on_libbpf_print(enum libbpf_print_level level, const char *format, va_list args)
{
	if (level == LIBBPF_WARN && !first_libbpf_warning[0]) {
		va_list copy;
		va_copy(copy, args);
		vsnprintf(first_libbpf_warning, sizeof(first_libbpf_warning), format, copy);
		va_end(copy);
		for (char *c = first_libbpf_warning; *c; c++)
			if (*c == '\n' || *c == '\t')
				*c = ' ';
	}
	if (getenv("GUARD_EXEC_PROBE_DEBUG"))
		return vfprintf(stderr, format, args);
	return 0;
}

static int fail(const char *step, int err)
{
	err = err < 0 ? -err : err;
	// EPERM is a missing capability; EACCES from a program load is the verifier's "no".
	if (err == EPERM)
		fprintf(stderr,
			"guard-exec-probe: bpf() refused: operation not permitted (needs CAP_BPF and "
			"CAP_PERFMON, or root)\n");
	else
		fprintf(stderr, "guard-exec-probe: kernel refused the probe (%s): %s%s%s\n", step,
			strerror(err), first_libbpf_warning[0] ? "; libbpf: " : "", first_libbpf_warning);
	return 1;
}

// --- JSON output -------------------------------------------------------------------------

// Length of the valid UTF-8 sequence at s (at most n bytes), or 0 when it is not one.
static size_t utf8_sequence(const unsigned char *s, size_t n)
{
	unsigned char c = s[0];
	size_t len;
	unsigned int min, cp;
	if (c >= 0xc2 && c <= 0xdf) {
		len = 2, min = 0x80, cp = c & 0x1f;
	} else if (c >= 0xe0 && c <= 0xef) {
		len = 3, min = 0x800, cp = c & 0x0f;
	} else if (c >= 0xf0 && c <= 0xf4) {
		len = 4, min = 0x10000, cp = c & 0x07;
	} else {
		return 0;
	}
	if (len > n)
		return 0;
	for (size_t i = 1; i < len; i++) {
		if ((s[i] & 0xc0) != 0x80)
			return 0;
		cp = (cp << 6) | (s[i] & 0x3f);
	}
	if (cp < min || cp > 0x10ffff || (cp >= 0xd800 && cp <= 0xdfff))
		return 0;
	return len;
}

static void json_string(FILE *out, const char *str, size_t n)
{
	const unsigned char *s = (const unsigned char *)str;
	fputc('"', out);
	for (size_t i = 0; i < n;) {
		unsigned char c = s[i];
		if (c == '"' || c == '\\') {
			fputc('\\', out);
			fputc(c, out);
			i++;
		} else if (c < 0x20 || c == 0x7f) {
			fprintf(out, "\\u%04x", c);
			i++;
		} else if (c < 0x80) {
			fputc(c, out);
			i++;
		} else {
			size_t len = utf8_sequence(s + i, n - i);
			if (len == 0) {
				fprintf(out, "\\udc%02x", c);
				i++;
			} else {
				fwrite(s + i, 1, len, out);
				i += len;
			}
		}
	}
	fputc('"', out);
}

static size_t bounded_strlen(const char *s, size_t max)
{
	const char *end = memchr(s, 0, max);
	return end ? (size_t)(end - s) : max;
}

static __u64 reported_lost;

static int on_event(void *ctx, void *data, size_t size)
{
	FILE *out = ctx;
	const struct probe_event *e = data;
	if (size < sizeof(*e))
		return 0;

	fprintf(out, "{\"type\":\"exec\",\"pid\":%u,\"ppid\":%u,\"uid\":%u,\"gid\":%u,\"comm\":", e->pid,
		e->ppid, e->uid, e->gid);
	json_string(out, e->comm, bounded_strlen(e->comm, sizeof(e->comm)));
	fputs(",\"filename\":", out);
	json_string(out, e->filename, bounded_strlen(e->filename, sizeof(e->filename)));
	fputs(",\"path\":", out);
	bool path_known = e->path_status == PROBE_PATH_OK || e->path_status == PROBE_PATH_TRUNCATED;
	json_string(out, e->path, path_known ? bounded_strlen(e->path, sizeof(e->path)) : 0);
	fputs(",\"cwd\":", out);
	bool cwd_known = e->cwd_status == PROBE_PATH_OK || e->cwd_status == PROBE_PATH_TRUNCATED;
	json_string(out, e->cwd, cwd_known ? bounded_strlen(e->cwd, sizeof(e->cwd)) : 0);
	fprintf(out, ",\"script\":%s,\"argv\":[", e->script ? "true" : "false");
	size_t args_len = e->args_len < sizeof(e->args) ? e->args_len : sizeof(e->args);
	size_t at = 0;
	for (int k = 0; k < MAX_ARGV && at < args_len; k++) {
		size_t len = bounded_strlen(e->args + at, args_len - at);
		if (k > 0)
			fputc(',', out);
		json_string(out, e->args + at, len);
		at += len + 1;
	}
	fprintf(out, "],\"ktime_ns\":%llu}\n", (unsigned long long)e->ktime_ns);
	return 0;
}

// --- arguments -----------------------------------------------------------------------------

static int usage(const char *why)
{
	fprintf(stderr,
		"guard-exec-probe: %s\n"
		"usage: guard-exec-probe [--prefix /DIR/]... (at most %d, each 1-%d bytes, absolute)\n",
		why, PROBE_MAX_PREFIXES, PROBE_PREFIX_MAX - 1);
	return 2;
}

int main(int argc, char **argv)
{
	const char *prefixes[PROBE_MAX_PREFIXES];
	int prefix_count = 0;
	for (int i = 1; i < argc; i++) {
		if (strcmp(argv[i], "--prefix") != 0 || i + 1 >= argc)
			return usage("unknown argument or --prefix without a value");
		const char *p = argv[++i];
		size_t len = strlen(p);
		if (p[0] != '/' || len >= PROBE_PREFIX_MAX)
			return usage("a prefix must be an absolute path shorter than 64 bytes");
		if (prefix_count == PROBE_MAX_PREFIXES)
			return usage("too many prefixes");
		prefixes[prefix_count++] = p;
	}
	if (prefix_count == 0) {
		prefixes[0] = "/tmp/";
		prefixes[1] = "/var/tmp/";
		prefixes[2] = "/dev/shm/";
		prefix_count = 3;
	}

	// The agent that started us reads our stdout: when it dies, so do we.
	prctl(PR_SET_PDEATHSIG, SIGTERM);
	if (getppid() == 1)
		return 0;

	struct sigaction sa = {.sa_handler = on_signal}; // no SA_RESTART: poll returns EINTR
	sigaction(SIGTERM, &sa, NULL);
	sigaction(SIGINT, &sa, NULL);
	signal(SIGPIPE, SIG_IGN); // a closed stdout is an EPIPE from write, handled below

	libbpf_set_print(on_libbpf_print);
	if (access(BTF_PATH, R_OK) != 0) {
		fprintf(stderr, "guard-exec-probe: no BTF at %s (%s); the kernel needs CONFIG_DEBUG_INFO_BTF\n",
			BTF_PATH, strerror(errno));
		return 1;
	}

	struct exec_probe *skel = exec_probe__open();
	if (!skel)
		return fail("open", errno);
	skel->rodata->prefix_count = prefix_count;
	for (int i = 0; i < prefix_count; i++) {
		size_t len = strlen(prefixes[i]);
		skel->rodata->prefix_len[i] = len;
		memcpy((char *)skel->rodata->prefixes[i], prefixes[i], len);
	}

	int status = 1;
	struct ring_buffer *rb = NULL;
	int err = exec_probe__load(skel);
	if (err) {
		status = fail("load", err);
		goto out;
	}
	err = exec_probe__attach(skel);
	if (err) {
		status = fail("attach to sched_process_exec", err);
		goto out;
	}
	rb = ring_buffer__new(bpf_map__fd(skel->maps.events), on_event, stdout, NULL);
	if (!rb) {
		status = fail("ring buffer", errno);
		goto out;
	}

	static char out_buffer[1 << 16];
	setvbuf(stdout, out_buffer, _IOFBF, sizeof(out_buffer));
	fputs("{\"type\":\"ready\"}\n", stdout);
	status = 0;
	while (!stopping) {
		if (fflush(stdout) != 0)
			break; // EPIPE: nobody reads us any more
		err = ring_buffer__poll(rb, POLL_INTERVAL_MS);
		if (err < 0 && err != -EINTR) {
			status = fail("ring buffer poll", err);
			break;
		}
		__u64 lost = skel->bss->lost_events;
		if (lost != reported_lost) {
			reported_lost = lost;
			fprintf(stdout, "{\"type\":\"lost\",\"count\":%llu}\n", (unsigned long long)lost);
		}
		// A pipe whose reader closed reports POLLERR on the write end: notice it while idle too.
		struct pollfd pfd = {.fd = STDOUT_FILENO, .events = 0};
		if (poll(&pfd, 1, 0) > 0 && (pfd.revents & (POLLERR | POLLHUP | POLLNVAL)))
			break;
	}
	if (status == 0)
		fflush(stdout);

out:
	ring_buffer__free(rb);
	exec_probe__destroy(skel);
	return status;
}
