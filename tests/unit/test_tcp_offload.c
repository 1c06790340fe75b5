/* Zero-copy transmission over scatter-gather, TSO and checksum offloads (tx and rx). */
#include "tcp_helpers.h"

#define MSS 1460

static void open_conn(struct th_host *h, struct tp *t, uint8_t sg, uint8_t csum, uint8_t tso, uint8_t ts, uint16_t peer_mss)
{
	struct tp_synopts so = tp_synopts_none();
	so.ts = ts;
	so.mss = peer_mss;
	th_host_init(h);
	h->f_sg = sg;
	h->f_tcp_tx_csum = csum;
	h->f_tso = tso;
	tp_init(t, h);
	tp_passive_open(t, &so);
	iip_tcp_set_nodelay(h->ws, t->c, 1);
}

static void done(struct th_host *h, struct tp *t)
{
	tp_fini(t);
	th_host_fini(h);
}

/* with scatter-gather the payload is chained by reference; the frame is byte-identical to the copied one */
TEST(zero_copy_chain_identical_to_copy)
{
	static struct th_host h[2];
	struct tp t[2];
	struct th_frame *f[2][4];
	uint32_t k, i;
	for (k = 0; k < 2; k++) {
		open_conn(&h[k], &t[k], (uint8_t) k, 0, 0, 1, 1460);
		/* two queued packets, the segment spans both: 1000 + 1000 -> 1448 + 552 */
		t[k].win = 0;
		tp_send(&t[k], ACK, NULL, 0);
		CHECK_EQ(th_app_send_pat(&h[k], t[k].c, 0, 1000), 0);
		CHECK_EQ(th_app_send_pat(&h[k], t[k].c, 1000, 1000), 0);
		t[k].win = 65535;
		tp_send(&t[k], ACK, NULL, 0);
		for (i = 0; i < 2; i++)
			f[k][i] = th_pop(&h[k]);
		CHECK(f[k][0] != NULL && f[k][1] != NULL);
	}
	if (f[0][0] && f[0][1] && f[1][0] && f[1][1]) {
		for (i = 0; i < 2; i++) {
			struct th_parsed p;
			CHECK_EQ(f[0][i]->chained, 0);
			CHECK_EQ(f[1][i]->chained, 1);
			CHECK_EQ(f[0][i]->len, f[1][i]->len);
			CHECK(!memcmp(f[0][i]->data, f[1][i]->data, f[0][i]->len));
			th_parse(f[1][i], &p);
			CHECK(p.l4_csum_ok);
			CHECK(pat_check(p.payload, i ? 1448 : 0, p.payload_len));
		}
		th_parse(f[1][0], &t[1].p);
		CHECK_EQ(t[1].p.payload_len, 1448);
	}
	for (k = 0; k < 2; k++) {
		for (i = 0; i < 2; i++)
			free(f[k][i]);
		/* the retransmission path is zero-copy too */
		th_advance_ms(&h[k], 1000);
		f[k][0] = th_pop(&h[k]);
		CHECK(f[k][0] != NULL);
	}
	if (f[0][0] && f[1][0]) {
		CHECK_EQ(f[1][0]->chained, 1);
		CHECK_EQ(f[0][0]->len, f[1][0]->len);
		CHECK(!memcmp(f[0][0]->data, f[1][0]->data, f[0][0]->len));
	}
	for (k = 0; k < 2; k++) {
		free(f[k][0]);
		done(&h[k], &t[k]);
	}
}

/* TCP checksum offload: the field holds the pseudo-header sum and the packet is marked */
TEST(tx_checksum_offload_pseudo_header_sum)
{
	static struct th_host h;
	struct tp t;
	open_conn(&h, &t, 0, 1, 0, 0, 1460);
	CHECK_EQ(th_app_send_pat(&h, t.c, 0, 333), 0);
	CHECK(tp_pop(&t));
	CHECK_EQ(t.last->ol_tcp_csum, 1);
	CHECK(t.p.l4_csum_ok); /* th_parse checks the pseudo-header sum for marked frames */
	CHECK_EQ(t.last->ol_tso, 0);
	done(&h, &t);
}

/* TSO: with SG + TSO + checksum offload and MSS = MTU - 40 (- 12 with timestamps) one frame carries many
 * segments, marked for the NIC; never when the MSS is smaller than what the NIC would cut */
static void check_tso(uint8_t ts, uint16_t peer_mss, uint8_t expect_tso)
{
	static struct th_host h;
	struct tp t;
	uint32_t i, total = 0, frames = 0;
	open_conn(&h, &t, 1, 1, 1, ts, peer_mss);
	t.win = 0; /* queue first, then open the window: the batch's output has everything to send */
	tp_send(&t, ACK, NULL, 0);
	for (i = 0; i < 20; i++)
		CHECK_EQ(th_app_send_pat(&h, t.c, i * 1000, 1000), 0);
	t.win = 65535;
	tp_send(&t, ACK, NULL, 0);
	while (tp_pop(&t)) {
		uint32_t mss = (ts ? MSS - 12 : MSS) < peer_mss ? (ts ? MSS - 12 : MSS) : peer_mss;
		CHECK(t.p.l4_csum_ok);
		CHECK(pat_check(t.p.payload, total, t.p.payload_len));
		if (expect_tso) {
			CHECK_EQ(t.last->ol_tso, t.p.payload_len > mss);
			CHECK_EQ(t.p.payload_len % mss, 0);
		} else {
			CHECK_EQ(t.last->ol_tso, 0);
			CHECK(t.p.payload_len <= mss);
		}
		total += t.p.payload_len;
		frames++;
	}
	CHECK_EQ(total, 10 * (ts ? MSS - 12 : (peer_mss < MSS ? peer_mss : MSS))); /* the initial window */
	if (expect_tso)
		CHECK_EQ(frames, 1);
	done(&h, &t);
}

TEST(tso_marked_only_when_mss_matches_mtu)
{
	check_tso(0, 1460, 1);
	check_tso(1, 1460, 1);
	check_tso(0, 1000, 0);
}

/* RX checksum offload: the NIC's verdict is used (a bad one drops, a good one skips the software sum) */
TEST(rx_checksum_offload_verdict)
{
	static struct th_host h;
	struct tp t;
	struct th_seg s;
	static uint8_t f[2048];
	struct th_pkt *p;
	uint8_t data[10];
	open_conn(&h, &t, 0, 0, 0, 0, 1460);
	h.f_tcp_rx_csum = 1;
	pat_fill(data, 0, 10);
	s = tp_seg_at(&t, 1001, ACK, data, 10);
	p = th_pkt_from(f, th_build_tcp(f, &s));
	p->rx_csum_bad = 1;
	th_run_pkt(&h, p);
	CHECK_EQ(h.rx_len, 0);
	CHECK_EQ(th_stats(&h).rx_tcp_bad_csum, 1);
	s.bad_csum = 1; /* wrong in the frame, but the NIC says good: trusted */
	p = th_pkt_from(f, th_build_tcp(f, &s));
	th_run_pkt(&h, p);
	CHECK_EQ(h.rx_len, 10);
	/* without the offload, a bad sum is found by software */
	h.f_tcp_rx_csum = 0;
	s = tp_seg_at(&t, 1011, ACK, data, 10);
	s.bad_csum = 1;
	th_send_seg(&h, &s);
	CHECK_EQ(h.rx_len, 10);
	CHECK_EQ(th_stats(&h).rx_tcp_bad_csum, 2);
	done(&h, &t);
}

int main(void)
{
	RUN(zero_copy_chain_identical_to_copy);
	RUN(tx_checksum_offload_pseudo_header_sum);
	RUN(tso_marked_only_when_mss_matches_mtu);
	RUN(rx_checksum_offload_verdict);
	TH_SUMMARY();
}
