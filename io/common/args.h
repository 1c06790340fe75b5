/*
 * io/common/args.h — the command-line pieces every backend parses the same
 * way: where its options end (the first "--"), the application's argv
 * (argv[0] and what follows), the getopt reset before the application
 * parses, and the option values several backends take (decimal numbers in
 * a range, a unicast MAC, a comma list of offload names).
 */
#ifndef IO_COMMON_ARGS_H
#define IO_COMMON_ARGS_H

#include <errno.h>
#include <getopt.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* index of the first "--" after argv[0] (argc when there is none): the
 * backend's options are argv[1 .. that-1] */
static inline int io_args_backend_end(int argc, char *const *argv)
{
	int i;
	for (i = 1; i < argc && strcmp(argv[i], "--"); i++)
		;
	return i;
}

/*
 * A new argv for the application: argv[0], then argv[from .. argc-1]
 * (nothing when from >= argc); NULL-terminated, *app_argc set. The strings
 * are the caller's; free() the array. NULL when out of memory.
 */
static inline char **io_args_app_argv(int argc, char *const *argv, int from, int *app_argc)
{
	char **app_argv = calloc((size_t) (argc > 0 ? argc : 1) + 2, sizeof(char *));
	int k, n = 1;
	if (!app_argv)
		return NULL;
	app_argv[0] = argc > 0 ? argv[0] : NULL;
	for (k = from; k < argc; k++)
		app_argv[n++] = argv[k];
	*app_argc = n;
	return app_argv;
}

/* the backend parsed its options with getopt: start afresh for the app's */
static inline void io_args_reset_getopt(void)
{
#ifdef __GLIBC__
	optind = 0; /* full reset, glibc's internal state too */
#else
	optind = 1;
#endif
	opterr = 1;
}

/* after getopt (optstring starting with ':') returned ':' (an option without
 * its value) or '?' (an unknown option): says which on stderr */
static inline void io_args_getopt_error(const char *prog, int opt)
{
	if (opt == ':')
		fprintf(stderr, "%s: option -%c needs a value\n", prog, optopt);
	else
		fprintf(stderr, "%s: unknown option -%c\n", prog, optopt);
}

/* after the getopt loop over argv[0 .. n-1]: a word left before "--" that
 * is not an option is a mistake; says so and returns -1 */
static inline int io_args_no_operands(const char *prog, int n, char *const *argv)
{
	if (optind < n) {
		fprintf(stderr, "%s: unexpected argument '%s' before \"--\"\n", prog, argv[optind]);
		return -1;
	}
	return 0;
}

/* a decimal number in [min, max]; -1 for anything else (sign, junk, range) */
static inline int io_args_u32(const char *s, uint32_t min, uint32_t max, uint32_t *out)
{
	char *end;
	unsigned long long v;
	if (*s == '-' || *s == '\0')
		return -1;
	errno = 0;
	v = strtoull(s, &end, 10);
	if (errno || *end || v < min || v > max)
		return -1;
	*out = (uint32_t) v;
	return 0;
}

/* "aa:bb:cc:dd:ee:ff", unicast only (a multicast MAC is no interface address) */
static inline int io_args_mac(const char *s, uint8_t mac[6])
{
	unsigned v[6];
	char extra;
	int i;
	if (sscanf(s, "%x:%x:%x:%x:%x:%x%c", &v[0], &v[1], &v[2], &v[3], &v[4], &v[5], &extra) != 6)
		return -1;
	for (i = 0; i < 6; i++) {
		if (v[i] > 0xff)
			return -1;
		mac[i] = (uint8_t) v[i];
	}
	return (mac[0] & 1) ? -1 : 0;
}

struct io_args_flag {
	const char *name;
	uint32_t bit;
};

/* "a,b,c" of the names in flags (ended by a NULL name), or "none": the OR of
 * their bits; -1 for an unknown name or a list longer than 127 characters */
static inline int io_args_flags(const char *s, const struct io_args_flag *flags, uint32_t *out)
{
	char buf[128], *tok, *save = NULL;
	uint32_t f = 0;
	if (strlen(s) >= sizeof(buf))
		return -1;
	strcpy(buf, s);
	for (tok = strtok_r(buf, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
		const struct io_args_flag *k;
		for (k = flags; k->name && strcmp(tok, k->name); k++)
			;
		if (k->name)
			f |= k->bit;
		else if (strcmp(tok, "none"))
			return -1;
	}
	*out = f;
	return 0;
}

#endif /* IO_COMMON_ARGS_H */
