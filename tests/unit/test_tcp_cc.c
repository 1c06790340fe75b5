/* Congestion control: RFC 6928 (initial window), RFC 5681 (slow start, fast retransmit), RFC 6582 (NewReno),
 * RFC 6675 (SACK loss recovery), RFC 3042 (limited transmit). */
#include "tcp_helpers.h"

#define MSS 1460

static void done(struct th_host *h, struct tp *t)
{
	tp_fini(t);
	th_host_fini(h);
}

/* Passive open (peer MSS 1460, optional SACK), RTT sample ~0 (RTO = minimum), Nagle off, n packets queued. */
static void open_and_queue(struct th_host *h, struct tp *t, uint8_t sack, uint32_t n)
{
	struct tp_synopts so = tp_synopts_none();
	uint32_t i;
	so.sackp = sack;
	th_host_init(h);
	tp_init(t, h);
	tp_passive_open(t, &so);
	iip_tcp_set_nodelay(h->ws, t->c, 1);
	for (i = 0; i < n; i++)
		CHECK_EQ(th_app_send_pat(h, t->c, i * MSS, MSS), 0);
}

static uint32_t count_data(struct tp *t, uint32_t *first_seq)
{
	uint32_t n = 0;
	while (tp_pop(t)) {
		if (t->p.payload_len) {
			if (!n && first_seq)
				*first_seq = t->p.seq;
			n++;
		}
	}
	return n;
}

static struct iip_tcp_info info_of(struct tp *t)
{
	struct iip_tcp_info i;
	iip_tcp_get_info(t->h->ws, t->c, &i);
	return i;
}

/* the peer's ACK with one SACK block [s, e) (relative to ISS + 1, in segments) */
static void ack_sack(struct tp *t, uint32_t ack_seg, int32_t s_seg, int32_t e_seg)
{
	t->rcv = t->iss + 1 + ack_seg * MSS;
	t->opts_len = 0;
	if (s_seg >= 0) {
		t->opts[0] = 1; t->opts[1] = 1; t->opts[2] = 5; t->opts[3] = 10;
		put32_(t->opts + 4, t->iss + 1 + (uint32_t) s_seg * MSS);
		put32_(t->opts + 8, t->iss + 1 + (uint32_t) e_seg * MSS);
		t->opts_len = 12;
	}
	tp_send(t, ACK, NULL, 0);
	t->opts_len = 0;
}

/* RFC 6928 2: the initial window is min(10 MSS, max(2 MSS, 14600)): 10 segments before any ACK */
TEST(rfc6928_initial_window_10_segments)
{
	struct th_host h;
	struct tp t;
	uint32_t first = 0;
	open_and_queue(&h, &t, 0, 30);
	CHECK_EQ(count_data(&t, &first), 10);
	CHECK_EQ(first, t.iss + 1);
	CHECK_EQ(info_of(&t).cwnd, 10 * MSS);
	done(&h, &t);
}

/* RFC 5681 3.1: slow start: an ACK for 2 segments opens cwnd by 2 segments (4 go out) */
TEST(rfc5681_3_1_slow_start_growth)
{
	struct th_host h;
	struct tp t;
	uint32_t first = 0;
	open_and_queue(&h, &t, 0, 40);
	CHECK_EQ(count_data(&t, NULL), 10);
	t.rcv = t.iss + 1 + 2 * MSS;
	tp_send(&t, ACK, NULL, 0);
	CHECK_EQ(count_data(&t, &first), 4);
	CHECK_EQ(first, t.iss + 1 + 10 * MSS);
	CHECK_EQ(info_of(&t).cwnd, 12 * MSS);
	t.rcv = t.iss + 1 + 14 * MSS;
	tp_send(&t, ACK, NULL, 0);
	CHECK_EQ(count_data(&t, NULL), 24);
	CHECK_EQ(info_of(&t).cwnd, 24 * MSS);
	done(&h, &t);
}

/* RFC 5681 3.2: the third duplicate ACK retransmits the missing segment, ssthresh = FlightSize/2,
 * cwnd = ssthresh + 3 SMSS; RFC 6582 3.2: a full ACK ends recovery with cwnd <= ssthresh */
TEST(rfc5681_3_2_fast_retransmit_three_dupacks)
{
	struct th_host h;
	struct tp t;
	struct iip_tcp_info i;
	open_and_queue(&h, &t, 0, 10);
	CHECK_EQ(count_data(&t, NULL), 10);
	t.rcv = t.iss + 1;
	tp_send(&t, ACK, NULL, 0);
	tp_send(&t, ACK, NULL, 0);
	EXPECT_NONE(&t);
	tp_send(&t, ACK, NULL, 0);
	EXPECT_DATA(&t, t.iss + 1, 1001, MSS);
	CHECK(pat_check(t.p.payload, 0, MSS));
	EXPECT_NONE(&t);
	i = info_of(&t);
	CHECK_EQ(i.ssthresh, 5 * MSS);
	CHECK_EQ(i.cwnd, 8 * MSS);
	CHECK_EQ(th_stats(&h).tx_tcp_fast_retrans, 1);
	t.rcv = t.iss + 1 + 10 * MSS;
	tp_send(&t, ACK, NULL, 0);
	i = info_of(&t);
	CHECK(i.cwnd <= 5 * MSS);
	CHECK_EQ(h.n_acked, 10);
	done(&h, &t);
}

/* RFC 6582 3.2 step 4: a partial ACK retransmits the next unacknowledged segment at once, recovery goes on */
TEST(rfc6582_3_2_newreno_partial_ack)
{
	struct th_host h;
	struct tp t;
	open_and_queue(&h, &t, 0, 10);
	CHECK_EQ(count_data(&t, NULL), 10);
	/* segments 0 and 4 lost */
	t.rcv = t.iss + 1;
	tp_send(&t, ACK, NULL, 0);
	tp_send(&t, ACK, NULL, 0);
	tp_send(&t, ACK, NULL, 0);
	EXPECT_DATA(&t, t.iss + 1, 1001, MSS);
	EXPECT_NONE(&t);
	t.rcv = t.iss + 1 + 4 * MSS; /* partial ACK: up to the second hole */
	tp_send(&t, ACK, NULL, 0);
	EXPECT_DATA(&t, t.iss + 1 + 4 * MSS, 1001, MSS);
	CHECK(pat_check(t.p.payload, 4 * MSS, MSS));
	CHECK_EQ(((struct iip_tcp_conn *) t.c)->in_recovery, 1);
	tp_drain(&t);
	t.rcv = t.iss + 1 + 10 * MSS;
	tp_send(&t, ACK, NULL, 0);
	CHECK_EQ(((struct iip_tcp_conn *) t.c)->in_recovery, 0);
	done(&h, &t);
}

/* RFC 6675 5: SACK-based recovery: three SACKed segments trigger the retransmission of the first hole,
 * later SACKs lead to the retransmission of the other holes, never of SACKed data */
TEST(rfc6675_5_sack_recovery_retransmits_holes)
{
	struct th_host h;
	struct tp t;
	uint32_t n;
	open_and_queue(&h, &t, 1, 10);
	CHECK_EQ(count_data(&t, NULL), 10);
	/* segments 0 and 4 lost; 1, 2, 3 arrive */
	ack_sack(&t, 0, 1, 2);
	ack_sack(&t, 0, 1, 3);
	EXPECT_NONE(&t);
	ack_sack(&t, 0, 1, 4);
	EXPECT_DATA(&t, t.iss + 1, 1001, MSS);
	EXPECT_NONE(&t);
	/* 5..9 arrive: SACK 5..10 (RFC 2018: most recent first; one block per ACK here) */
	t.opts_len = 0;
	{
		uint32_t k;
		for (k = 6; k <= 10; k++) {
			t.rcv = t.iss + 1;
			t.opts[0] = 1; t.opts[1] = 1; t.opts[2] = 5; t.opts[3] = 18;
			put32_(t.opts + 4, t.iss + 1 + 5 * MSS);
			put32_(t.opts + 8, t.iss + 1 + k * MSS);
			put32_(t.opts + 12, t.iss + 1 + 1 * MSS);
			put32_(t.opts + 16, t.iss + 1 + 4 * MSS);
			t.opts_len = 20;
			tp_send(&t, ACK, NULL, 0);
		}
		t.opts_len = 0;
	}
	n = 0;
	while (tp_pop(&t)) {
		if (!t.p.payload_len)
			continue;
		n++;
		/* only the hole [4, 5) may be resent */
		CHECK_EQ(t.p.seq, t.iss + 1 + 4 * MSS);
		CHECK(pat_check(t.p.payload, 4 * MSS, MSS));
	}
	CHECK_EQ(n, 1);
	ack_sack(&t, 4, 5, 10);
	ack_sack(&t, 10, -1, -1);
	CHECK_EQ(((struct iip_tcp_conn *) t.c)->in_recovery, 0);
	CHECK_EQ(h.n_acked, 10);
	done(&h, &t);
}

/* RFC 3042: limited transmit: the first two duplicate ACKs each send one new segment if the peer's window allows */
TEST(rfc3042_limited_transmit)
{
	struct th_host h;
	struct tp t;
	open_and_queue(&h, &t, 0, 20);
	CHECK_EQ(count_data(&t, NULL), 10);
	t.rcv = t.iss + 1;
	tp_send(&t, ACK, NULL, 0);
	EXPECT_DATA(&t, t.iss + 1 + 10 * MSS, 1001, MSS);
	tp_send(&t, ACK, NULL, 0);
	EXPECT_DATA(&t, t.iss + 1 + 11 * MSS, 1001, MSS);
	EXPECT_NONE(&t);
	CHECK_EQ(info_of(&t).cwnd, 10 * MSS); /* cwnd itself unchanged */
	/* third: fast retransmit; ssthresh from FlightSize without the two (RFC 5681 3.2 step 2) */
	tp_send(&t, ACK, NULL, 0);
	EXPECT_DATA(&t, t.iss + 1, 1001, MSS);
	CHECK_EQ(info_of(&t).ssthresh, 5 * MSS);
	done(&h, &t);
}

/* RFC 5681 3.1: congestion avoidance above ssthresh: about one MSS per RTT */
TEST(rfc5681_3_1_congestion_avoidance)
{
	struct th_host h;
	struct tp t;
	struct iip_tcp_info i;
	uint32_t k, acked = 0;
	open_and_queue(&h, &t, 0, 200);
	((struct iip_tcp_conn *) t.c)->ssthresh = 10 * MSS; /* start in congestion avoidance */
	CHECK_EQ(count_data(&t, NULL), 10);
	/* a window's worth of ACKs, one per segment */
	for (k = 1; k <= 10; k++) {
		t.rcv = t.iss + 1 + k * MSS;
		tp_send(&t, ACK, NULL, 0);
		acked++;
	}
	tp_drain(&t);
	i = info_of(&t);
	CHECK_EQ(i.cwnd, 11 * MSS);
	done(&h, &t);
}

/* more SACKed ranges than the scoreboard holds, bogus blocks (beyond SND.MAX, inverted): no crash, recovery
 * retransmits only holes below SACKed data, every packet is acknowledged in the end */
TEST(rfc6675_scoreboard_overflow_and_bogus_blocks)
{
	struct th_host h;
	struct tp t;
	uint32_t k, sent;
	open_and_queue(&h, &t, 1, 0);
	/* a big window: slow start through 4 round trips of full ACKs */
	for (k = 0; k < 60; k++)
		CHECK_EQ(th_app_send_pat(&h, t.c, k * MSS, MSS), 0);
	tp_drain(&t);
	{
		uint32_t acked = 0;
		while (acked < 20) {
			acked += 5;
			t.rcv = t.iss + 1 + acked * MSS;
			tp_send(&t, ACK, NULL, 0);
		}
	}
	tp_drain(&t);
	sent = (tp_conn(&t)->snd_max - t.iss - 1) / MSS;
	CHECK_EQ(sent, 50);
	/* every other segment from 20 on arrives: SACK blocks for 21, 23, 25, ... (one per ACK) */
	for (k = 21; k < 60; k += 2) {
		t.rcv = t.iss + 1 + 20 * MSS;
		t.opts[0] = 1; t.opts[1] = 1; t.opts[2] = 5; t.opts[3] = 26;
		put32_(t.opts + 4, t.iss + 1 + k * MSS);
		put32_(t.opts + 8, t.iss + 1 + (k + 1) * MSS);
		put32_(t.opts + 12, t.iss + 1 + 1000 * MSS);	/* beyond SND.MAX */
		put32_(t.opts + 16, t.iss + 1 + 2000 * MSS);
		put32_(t.opts + 20, t.iss + 1 + 30 * MSS);	/* inverted */
		put32_(t.opts + 24, t.iss + 1 + 29 * MSS);
		t.opts_len = 28;
		tp_send(&t, ACK, NULL, 0);
		t.opts_len = 0;
		CHECK(tp_conn(&t)->scoreboard_cnt <= IIP_TCP_SCOREBOARD_MAX);
	}
	CHECK_EQ(tp_conn(&t)->in_recovery, 1);
	while (tp_pop(&t)) {
		uint32_t seg = (t.p.seq - t.iss - 1) / MSS;
		if (!t.p.payload_len)
			continue;
		if (seg < sent)
			CHECK_EQ(seg % 2, 0); /* a retransmission: never a SACKed (odd) segment */
		CHECK(pat_check(t.p.payload, seg * MSS, t.p.payload_len));
	}
	t.rcv = tp_conn(&t)->snd_max;
	sent = (t.rcv - t.iss - 1) / MSS;
	tp_send(&t, ACK, NULL, 0);
	CHECK_EQ(h.n_acked, sent);
	CHECK(h.n_acked >= 50);
	CHECK_EQ(tp_conn(&t)->in_recovery, 0);
	done(&h, &t);
}

int main(void)
{
	RUN(rfc6928_initial_window_10_segments);
	RUN(rfc5681_3_1_slow_start_growth);
	RUN(rfc5681_3_2_fast_retransmit_three_dupacks);
	RUN(rfc6582_3_2_newreno_partial_ack);
	RUN(rfc6675_5_sack_recovery_retransmits_holes);
	RUN(rfc3042_limited_transmit);
	RUN(rfc5681_3_1_congestion_avoidance);
	RUN(rfc6675_scoreboard_overflow_and_bogus_blocks);
	TH_SUMMARY();
}
