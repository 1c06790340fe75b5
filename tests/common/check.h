/*
 * Minimal check reporting for the tests in tests/common: every check prints
 * one line, "PASS: <what>" or "FAIL: <what> (<detail>)"; run.sh counts them.
 * The process exits non-zero if any check failed.
 */
#ifndef TESTS_COMMON_CHECK_H
#define TESTS_COMMON_CHECK_H

#include <stdarg.h>
#include <stdio.h>

static unsigned check_failures;

/* Reports one check; detail (printf-style) is printed only on failure. */
__attribute__((format(printf, 3, 4), unused))
static void check(int ok, const char *what, const char *detail_fmt, ...)
{
	if (ok) {
		printf("PASS: %s\n", what);
	} else {
		va_list ap;
		check_failures++;
		printf("FAIL: %s (", what);
		va_start(ap, detail_fmt);
		vprintf(detail_fmt, ap);
		va_end(ap);
		printf(")\n");
	}
	fflush(stdout);
}

#endif
