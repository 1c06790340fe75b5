/* tests/io/test_pkt.c — the packet pool of io/common/pkt.h: allocation,
 * exhaustion, chains, clones and reference counts, slicing, copy-out,
 * linearisation and the leak counters. */
#include "../../io/common/pkt.h"
#include "check.h"

static struct io_pkt *make_seg(struct io_pkt_pool *p, uint8_t first, uint16_t len)
{
	struct io_pkt *s = io_pkt_alloc(p);
	uint16_t i;
	if (!s)
		return NULL;
	for (i = 0; i < len; i++)
		s->data[i] = (uint8_t) (first + i);
	io_pkt_set_len(s, len);
	return s;
}

int main(void)
{
	struct io_pkt_pool p, q;
	struct io_pkt *a, *b, *c, *cl, *lin, *big, *all[8];
	uint8_t buf[4096];
	int i, ok;

	CHECK("pool rejects zero sizes", io_pkt_pool_init(&p, 0, 4, 2048, 0, 0) == -1, "accepted");
	CHECK("pool init", io_pkt_pool_init(&p, 16, 8, 2048, 2, 65664) == 0, "failed");

	a = io_pkt_alloc(&p);
	CHECK("fresh packet: len 0, data after the alignment pad", a && a->len == 0 && a->data == a->buf + IO_PKT_ALIGN_PAD && ((uintptr_t) (a->data + 14) & 3) == 0 && !a->next,
	      "len %u", a ? a->len : 0);
	CHECK("counters after one alloc", io_pkt_pool_descs_in_use(&p) == 1 && io_pkt_pool_bufs_in_use(&p) == 1,
	      "%u %u", io_pkt_pool_descs_in_use(&p), io_pkt_pool_bufs_in_use(&p));
	io_pkt_free(a);
	CHECK("free returns descriptor and buffer", io_pkt_pool_descs_in_use(&p) == 0 && io_pkt_pool_bufs_in_use(&p) == 0,
	      "%u %u", io_pkt_pool_descs_in_use(&p), io_pkt_pool_bufs_in_use(&p));

	/* exhaustion of normal buffers: 8 succeed, the 9th fails cleanly */
	for (i = 0, ok = 1; i < 8; i++)
		ok &= (all[i] = io_pkt_alloc(&p)) != NULL;
	CHECK("8 of 8 buffers allocated", ok, "an alloc failed");
	CHECK("9th alloc fails and is counted", io_pkt_alloc(&p) == NULL && p.n_alloc_fail == 1,
	      "fail count %llu", (unsigned long long) p.n_alloc_fail);
	for (i = 0; i < 8; i++)
		io_pkt_free(all[i]);
	CHECK("all returned after exhaustion", io_pkt_pool_descs_in_use(&p) + io_pkt_pool_bufs_in_use(&p) == 0, "leak");

	/* chains: a(100) + [b(201) + c(7)] appended as a chain */
	a = make_seg(&p, 0, 100);
	b = make_seg(&p, 100, 201);
	c = make_seg(&p, 45, 7);
	io_pkt_chain_append(b, c);
	io_pkt_chain_append(a, b);
	CHECK("chain append keeps order", io_pkt_next(a) == b && io_pkt_next(b) == c && !io_pkt_next(c), "order");
	CHECK("chain total length", io_pkt_total_len(a) == 308 && io_pkt_nsegs(a) == 3, "len %u segs %u",
	      io_pkt_total_len(a), io_pkt_nsegs(a));
	memset(buf, 0, sizeof(buf));
	CHECK("copy-out across segments", io_pkt_copy_out(a, 95, buf, 10) == 10 && buf[0] == 95 && buf[5] == 100 &&
	      buf[9] == 104, "bytes %u %u %u", buf[0], buf[5], buf[9]);
	CHECK("copy-out clamps at the end", io_pkt_copy_out(a, 300, buf, 100) == 8 && buf[7] == 51, "got %u",
	      io_pkt_copy_out(a, 300, buf, 100));

	/* clone: new descriptors, same buffers; survives freeing the original */
	cl = io_pkt_clone(&p, a);
	CHECK("clone clones every segment", cl && io_pkt_nsegs(cl) == 3 && cl != a && cl->data == a->data &&
	      cl->next->data == b->data, "bad clone");
	CHECK("clone: 6 descriptors, 3 buffers", io_pkt_pool_descs_in_use(&p) == 6 && io_pkt_pool_bufs_in_use(&p) == 3,
	      "%u %u", io_pkt_pool_descs_in_use(&p), io_pkt_pool_bufs_in_use(&p));
	CHECK("buffer refcount 2", p.cls[0].refcnt[a->buf_idx] == 2 && p.cls[0].refcnt[c->buf_idx] == 2, "refcnt %u",
	      p.cls[0].refcnt[a->buf_idx]);
	io_pkt_free(a); /* whole chain */
	CHECK("after freeing original: 3 descriptors, 3 buffers",
	      io_pkt_pool_descs_in_use(&p) == 3 && io_pkt_pool_bufs_in_use(&p) == 3, "%u %u",
	      io_pkt_pool_descs_in_use(&p), io_pkt_pool_bufs_in_use(&p));
	io_pkt_copy_out(cl, 0, buf, 308);
	for (i = 0, ok = 1; i < 301; i++)
		ok &= buf[i] == (uint8_t) i;
	CHECK("clone data intact after original freed", ok && buf[301] == 45, "mismatch");

	/* slicing a clone, as the stack does to cut payload */
	io_pkt_adj(cl, 10);
	io_pkt_trim(cl, 20);
	CHECK("increment head / decrement tail", cl->len == 70 && cl->data[0] == 10 && io_pkt_total_len(cl) == 278,
	      "len %u first %u", cl->len, cl->data[0]);
	io_pkt_adj(cl->next->next, 100);
	CHECK("head adjust clamps to the segment", cl->next->next->len == 0, "len %u", cl->next->next->len);
	io_pkt_set_len(cl->next, 60000);
	CHECK("set_len clamps to the buffer", cl->next->len == 2048 - IO_PKT_ALIGN_PAD, "len %u", cl->next->len);
	io_pkt_set_len(cl->next, 201);

	/* linearize: one segment (normal class), input untouched */
	lin = io_pkt_linearize(&p, cl);
	CHECK("linearize copies into one segment", lin && !lin->next && lin->len == 271 && lin->data[0] == 10 &&
	      lin->data[70] == 100 && lin != cl, "len %u", lin ? lin->len : 0);
	io_pkt_free(lin);
	io_pkt_free(cl);
	CHECK("all returned after chain/clone work", io_pkt_pool_descs_in_use(&p) + io_pkt_pool_bufs_in_use(&p) == 0,
	      "%u %u", io_pkt_pool_descs_in_use(&p), io_pkt_pool_bufs_in_use(&p));

	/* big buffers: a 60000-byte frame fits only in the big class */
	big = io_pkt_alloc_size(&p, 60000);
	CHECK("big allocation uses the big class", big && big->buf_class == IO_PKT_CLASS_BIG && big->buf_size == 65664,
	      "class %d", big ? big->buf_class : -1);
	CHECK("too-big allocation fails", io_pkt_alloc_size(&p, 70000) == NULL, "allocated");
	io_pkt_free(big);

	/* clones across pools: descriptor from q, buffer stays in p */
	CHECK("second pool", io_pkt_pool_init(&q, 4, 1, 2048, 0, 0) == 0, "failed");
	a = make_seg(&p, 1, 50);
	cl = io_pkt_clone(&q, a);
	io_pkt_free(a);
	CHECK("cross-pool clone holds the buffer", io_pkt_pool_bufs_in_use(&p) == 1 && io_pkt_pool_descs_in_use(&p) == 0 &&
	      io_pkt_pool_descs_in_use(&q) == 1 && cl->data[0] == 1, "p %u/%u q %u", io_pkt_pool_bufs_in_use(&p),
	      io_pkt_pool_descs_in_use(&p), io_pkt_pool_descs_in_use(&q));
	io_pkt_free(cl);
	CHECK("cross-pool clone freed: both pools empty",
	      io_pkt_pool_bufs_in_use(&p) + io_pkt_pool_descs_in_use(&p) + io_pkt_pool_descs_in_use(&q) == 0, "leak");

	/* a double free is counted, not corrupting: pool stays consistent */
	a = io_pkt_alloc(&p);
	io_pkt_free(a);
	io_pkt_free(a);
	CHECK("double free detected and counted", p.n_double_free == 1 && io_pkt_pool_descs_in_use(&p) == 0,
	      "count %llu", (unsigned long long) p.n_double_free);
	p.n_double_free = 0;

	/* leak report: one packet kept -> non-zero */
	a = io_pkt_alloc(&p);
	{
		FILE *devnull = fopen("/dev/null", "w");
		uint32_t leaked = io_pkt_pool_report(&p, devnull, "t");
		io_pkt_free(a);
		CHECK("leak report counts a kept packet", leaked == 2, "leaked %u", leaked);
		CHECK("leak report zero when all returned", io_pkt_pool_report(&p, devnull, "t") == 0, "non-zero");
		fclose(devnull);
	}
	io_pkt_pool_destroy(&p);
	io_pkt_pool_destroy(&q);
	return check_failures ? 1 : 0;
}
