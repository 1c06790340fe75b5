/* tests/io/check.h — one output line per check, for tests/io/run.sh:
 * "pass: <name>" or "FAIL: <name> (<detail>)". */
#ifndef TESTS_IO_CHECK_H
#define TESTS_IO_CHECK_H
#include <stdio.h>

static int check_failures;

#define CHECK(name, cond, ...)                                           \
	do {                                                             \
		if (cond) {                                              \
			printf("pass: %s\n", name);                      \
		} else {                                                 \
			printf("FAIL: %s (", name);                      \
			printf(__VA_ARGS__);                             \
			printf(") at %s:%d\n", __FILE__, __LINE__);      \
			check_failures++;                                \
		}                                                        \
	} while (0)

#endif
