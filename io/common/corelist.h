/*
 * CPU core lists in the syntax of DPDK's -l option: comma-separated items,
 * each a core number or an inclusive range "a-b", e.g. "0", "0-3", "0,2,5",
 * "0-1,4-5".  Backends and tools use it for their -l/-c/-T options; thread i
 * runs on cores[i], so the list keeps the order it was written in.
 *
 * Header-style (static inline, include from main.c); hosted C.  Bad input
 * is reported through a message, never through an assertion.
 */
#ifndef IO_COMMON_CORELIST_H
#define IO_COMMON_CORELIST_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#define IO_CORELIST_MAX_CORE (1023) /* highest core id accepted (CPU_SETSIZE - 1) */
#define IO_CORELIST_MAX (IO_CORELIST_MAX_CORE + 1)

struct io_corelist {
	uint16_t count;
	uint16_t cores[IO_CORELIST_MAX];
};

/* Reads a decimal core id at s[*pos]; advances *pos.  -1 if there is no
 * digit there, -2 if the number exceeds IO_CORELIST_MAX_CORE. */
static inline long io_corelist_read_id(const char *s, size_t *pos)
{
	long v = 0;
	size_t start = *pos;
	while (s[*pos] >= '0' && s[*pos] <= '9') {
		v = v * 10 + (s[*pos] - '0');
		if (v > IO_CORELIST_MAX_CORE) {
			while (s[*pos] >= '0' && s[*pos] <= '9')
				(*pos)++;
			return -2;
		}
		(*pos)++;
	}
	return *pos == start ? -1 : v;
}

/*
 * Parses s into out.  Returns 0 on success; on malformed input (empty,
 * stray characters, empty items, a range whose start exceeds its end, a core
 * above IO_CORELIST_MAX_CORE, a core listed twice) returns -1 and writes a
 * one-line explanation to err (if err_len > 0).  out is unspecified then.
 */
static inline int io_corelist_parse(const char *s, struct io_corelist *out, char *err, size_t err_len)
{
	/* seen[] catches duplicates; ranges are expanded into the list */
	unsigned char seen[IO_CORELIST_MAX] = { 0 };
	size_t pos = 0;

	out->count = 0;
	if (s == NULL || s[0] == '\0') {
		snprintf(err, err_len, "core list is empty (expected e.g. \"0\", \"0-3\", \"0,2,5\")");
		return -1;
	}
	for (;;) {
		size_t item = pos;
		long first = io_corelist_read_id(s, &pos), last;
		if (first == -2) {
			snprintf(err, err_len, "core list \"%s\": core id at position %zu exceeds %d", s, item,
				 IO_CORELIST_MAX_CORE);
			return -1;
		}
		if (first < 0) {
			snprintf(err, err_len, "core list \"%s\": expected a core number at position %zu", s, pos);
			return -1;
		}
		last = first;
		if (s[pos] == '-') {
			pos++;
			last = io_corelist_read_id(s, &pos);
			if (last == -2) {
				snprintf(err, err_len, "core list \"%s\": core id in range at position %zu exceeds %d", s,
					 item, IO_CORELIST_MAX_CORE);
				return -1;
			}
			if (last < 0) {
				snprintf(err, err_len, "core list \"%s\": range at position %zu has no end", s, item);
				return -1;
			}
			if (last < first) {
				snprintf(err, err_len, "core list \"%s\": range %ld-%ld is reversed", s, first, last);
				return -1;
			}
		}
		for (long c = first; c <= last; c++) {
			if (seen[c]) {
				snprintf(err, err_len, "core list \"%s\": core %ld is listed more than once", s, c);
				return -1;
			}
			seen[c] = 1;
			out->cores[out->count++] = (uint16_t) c;
		}
		if (s[pos] == '\0')
			return 0;
		if (s[pos] != ',') {
			snprintf(err, err_len, "core list \"%s\": unexpected '%c' at position %zu", s, s[pos], pos);
			return -1;
		}
		pos++;
	}
}

/* Formats list back into the compact syntax, e.g. "0-3,6"; for messages. */
static inline void io_corelist_format(const struct io_corelist *list, char *buf, size_t buf_len)
{
	size_t used = 0;
	uint16_t i = 0;

	if (buf_len == 0)
		return;
	buf[0] = '\0';
	while (i < list->count && used < buf_len) {
		uint16_t j = i;
		int n;
		while (j + 1 < list->count && list->cores[j + 1] == list->cores[j] + 1)
			j++;
		if (j == i)
			n = snprintf(buf + used, buf_len - used, "%s%u", i ? "," : "", list->cores[i]);
		else
			n = snprintf(buf + used, buf_len - used, "%s%u-%u", i ? "," : "", list->cores[i],
				     list->cores[j]);
		if (n < 0)
			return;
		used += (size_t) n;
		i = (uint16_t) (j + 1);
	}
}

#endif /* IO_COMMON_CORELIST_H */
