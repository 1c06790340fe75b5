/*
 * Tests for io/common/corelist.h: DPDK -l style core lists, good inputs give
 * the exact list in written order, bad inputs give -1 and a message naming
 * the problem (never a crash).
 */
#include <stdlib.h>
#include <string.h>

#include "../../io/common/corelist.h"
#include "check.h"

static void expect_list(const char *input, const uint16_t *want, uint16_t want_count)
{
	static struct io_corelist list;
	char err[256] = "", what[300], got[4096];
	int rc = io_corelist_parse(input, &list, err, sizeof(err));
	int ok = rc == 0 && list.count == want_count && memcmp(list.cores, want, want_count * sizeof(uint16_t)) == 0;

	got[0] = '\0';
	if (rc == 0)
		io_corelist_format(&list, got, sizeof(got));
	snprintf(what, sizeof(what), "parse \"%s\" -> %u cores", input, want_count);
	check(ok, what, "rc %d, %u cores \"%s\", err \"%s\"", rc, list.count, got, err);
}

static void expect_error(const char *input, const char *err_must_contain)
{
	static struct io_corelist list;
	char err[256] = "", what[300];
	int rc = io_corelist_parse(input, &list, err, sizeof(err));

	snprintf(what, sizeof(what), "reject \"%s\" (message mentions \"%s\")", input ? input : "(null)",
		 err_must_contain);
	check(rc == -1 && strstr(err, err_must_contain) != NULL, what, "rc %d, err \"%s\"", rc, err);
}

int main(void)
{
	static const uint16_t l0[] = { 0 };
	static const uint16_t l0_3[] = { 0, 1, 2, 3 };
	static const uint16_t l025[] = { 0, 2, 5 };
	static const uint16_t l01_45[] = { 0, 1, 4, 5 };
	static const uint16_t l_order[] = { 5, 1, 2, 3, 0 };
	static const uint16_t l_single_range[] = { 7 };
	static const uint16_t l_max[] = { 1022, 1023 };
	static const uint16_t l_zeros[] = { 7, 10 };
	static uint16_t all[IO_CORELIST_MAX];

	expect_list("0", l0, 1);
	expect_list("0-3", l0_3, 4);
	expect_list("0,2,5", l025, 3);
	expect_list("0-1,4-5", l01_45, 4);
	expect_list("5,1-3,0", l_order, 5);
	expect_list("7-7", l_single_range, 1);
	expect_list("1022-1023", l_max, 2);
	expect_list("007,0010", l_zeros, 2);
	for (unsigned i = 0; i < IO_CORELIST_MAX; i++)
		all[i] = (uint16_t) i;
	expect_list("0-1023", all, IO_CORELIST_MAX);

	expect_error("", "empty");
	expect_error(NULL, "empty");
	expect_error(",", "position 0");
	expect_error("0,", "position 2");
	expect_error(",0", "position 0");
	expect_error("0,,1", "position 2");
	expect_error("a", "expected a core number");
	expect_error("0-", "has no end");
	expect_error("-1", "expected a core number");
	expect_error("3-1", "reversed");
	expect_error("0-1-2", "unexpected '-'");
	expect_error("1024", "exceeds 1023");
	expect_error("0-99999999999999999999", "exceeds 1023");
	expect_error("0,1,0", "core 0 is listed more than once");
	expect_error("0-3,2", "core 2 is listed more than once");
	expect_error("0 ,1", "unexpected ' '");
	expect_error(" 0", "expected a core number");
	expect_error("1;2", "unexpected ';'");
	expect_error("0x1", "unexpected 'x'");

	{
		/* a message longer than the caller's buffer is cut, not overrun */
		static struct io_corelist list;
		char small[8];
		memset(small, 'Z', sizeof(small));
		int rc = io_corelist_parse("0,0", &list, small, 5);
		check(rc == -1 && small[4] == '\0' && small[5] == 'Z', "error message respects the buffer size",
		      "rc %d", rc);
		rc = io_corelist_parse("x", &list, NULL, 0);
		check(rc == -1, "NULL error buffer with size 0 is allowed", "rc %d", rc);
	}
	{
		static struct io_corelist list;
		char buf[64], err[128];
		io_corelist_parse("0-3,6,8-9,12", &list, err, sizeof(err));
		io_corelist_format(&list, buf, sizeof(buf));
		check(strcmp(buf, "0-3,6,8-9,12") == 0, "format gives back the compact form", "got \"%s\"", buf);
		io_corelist_format(&list, buf, 4);
		check(strlen(buf) < 4, "format truncates to the buffer", "got \"%s\"", buf);
	}
	return check_failures ? 1 : 0;
}
