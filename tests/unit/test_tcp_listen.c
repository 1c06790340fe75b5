/* Listening: SYN backlog and connection pool exhaustion answered with SYN cookies (RFC 4987 3.6), TIME-WAIT
 * reuse (RFC 6191, RFC 9293 3.10.7.4). A small backlog makes the backlog path reachable. */
#define IIP_CONF_TCP_SYN_BACKLOG (8)
#include "tcp_helpers.h"

static struct iip_workspace *WS(struct th_host *h) { return (struct iip_workspace *) h->ws; }

static void done(struct th_host *h, struct tp *t)
{
	tp_fini(t);
	th_host_fini(h);
}

/* sends a SYN from sport with all options; returns the SYN-ACK's sequence number */
static uint32_t syn_from(struct tp *t, uint16_t sport, uint32_t isn)
{
	struct tp_synopts so = tp_synopts_all();
	struct th_seg s;
	uint8_t o[40];
	t->sport = sport;
	s = tp_seg_at(t, isn, SYN, NULL, 0);
	s.opts = o;
	s.opts_len = tp_syn_opts(o, &so, 1);
	th_send_seg(t->h, &s);
	if (!tp_pop(t))
		return 0;
	return t->p.seq;
}

/* RFC 4987 3.6: a full SYN backlog is answered with a SYN cookie (no state, MSS only); the returning ACK
 * creates the connection, its data is delivered */
TEST(rfc4987_syn_cookie_when_backlog_full)
{
	struct th_host h;
	struct tp t;
	uint32_t i, cookie;
	th_host_init(&h);
	tp_init(&t, &h);
	th_listen(&h, 80);
	for (i = 0; i < IIP_CONF_TCP_SYN_BACKLOG; i++)
		syn_from(&t, (uint16_t) (1000 + i), 5000);
	CHECK_EQ(WS(&h)->conn_pool_cnt, 64 - IIP_CONF_TCP_SYN_BACKLOG);
	cookie = syn_from(&t, 2000, 7000);
	CHECK_EQ(t.p.flags, SYN | ACK);
	CHECK_EQ(t.p.ack, 7001);
	CHECK(t.p.has_mss);
	CHECK(!t.p.has_ws && !t.p.has_ts && !t.p.has_sackp); /* a cookie cannot remember them */
	CHECK_EQ(th_stats(&h).rx_tcp_syn_cookie_sent, 1);
	CHECK_EQ(WS(&h)->conn_pool_cnt, 64 - IIP_CONF_TCP_SYN_BACKLOG);
	/* the final ACK with data */
	t.rcv = cookie + 1;
	t.ts = 0;
	t.irs = 7000;
	tp_send_pat(&t, 7001, 100, ACK | PSH);
	CHECK_EQ(th_stats(&h).rx_tcp_syn_cookie_ok, 1);
	CHECK_EQ(h.n_accepted, 1);
	CHECK_EQ(h.rx_len, 100);
	CHECK(pat_check(h.rx_data, 0, 100));
	CHECK(h.handle != NULL);
	if (h.handle) {
		struct iip_tcp_conn *c = (struct iip_tcp_conn *) h.handle;
		CHECK_EQ(c->state, IIP_TCP_STATE_ESTABLISHED);
		CHECK_EQ(c->snd_mss, 1460);
		CHECK_EQ(c->iss, cookie);
		/* it works: our data goes out with the right numbers */
		iip_tcp_set_nodelay(h.ws, c, 1);
		CHECK_EQ(th_app_send_pat(&h, c, 0, 10), 0);
		th_drain(&h);
		CHECK_EQ(c->snd_nxt, cookie + 11);
	}
	done(&h, &t);
}

/* RFC 4987 3.6: an ACK with a wrong cookie is treated like any segment for no connection: RST */
TEST(rfc4987_invalid_cookie_rst)
{
	struct th_host h;
	struct tp t;
	uint32_t i, cookie;
	th_host_init(&h);
	tp_init(&t, &h);
	th_listen(&h, 80);
	for (i = 0; i < IIP_CONF_TCP_SYN_BACKLOG; i++)
		syn_from(&t, (uint16_t) (1000 + i), 5000);
	cookie = syn_from(&t, 2000, 7000);
	t.rcv = cookie + 2; /* off by one */
	tp_send_at(&t, 7001, ACK, NULL, 0);
	EXPECT_SEG(&t, RST, cookie + 2, 0);
	CHECK_EQ(th_stats(&h).rx_tcp_syn_cookie_bad, 1);
	CHECK_EQ(h.n_accepted, 0);
	/* right cookie, wrong sequence number (another ISN): also invalid */
	t.rcv = cookie + 1;
	tp_send_at(&t, 7002, ACK, NULL, 0);
	EXPECT_SEG(&t, RST, cookie + 1, 0);
	/* right cookie, but from another port */
	t.sport = 2001;
	tp_send_at(&t, 7001, ACK, NULL, 0);
	EXPECT_SEG(&t, RST, cookie + 1, 0);
	/* a cookie too old (two 64 s ticks later) */
	t.sport = 2000;
	th_advance_ms(&h, 200000);
	tp_drain(&t);
	tp_send_at(&t, 7001, ACK, NULL, 0);
	EXPECT_SEG(&t, RST, cookie + 1, 0);
	CHECK_EQ(h.n_accepted, 0);
	done(&h, &t);
}

/* connection pool exhausted by established connections: cookies too; the cookie's ACK, still without an
 * object, is counted and refused (no crash) */
TEST(rfc4987_syn_cookie_when_pool_exhausted)
{
	struct th_host h;
	struct tp t;
	uint32_t i, iss, cookie;
	th_host_init(&h);
	tp_init(&t, &h);
	th_listen(&h, 80);
	for (i = 0; i < 64; i++) {
		iss = syn_from(&t, (uint16_t) (1000 + i), 5000);
		t.rcv = iss + 1;
		t.ts = 0;
		tp_send_at(&t, 5001, ACK, NULL, 0);
	}
	CHECK_EQ(h.n_accepted, 64);
	CHECK_EQ(WS(&h)->conn_pool_cnt, 0);
	cookie = syn_from(&t, 3000, 9000);
	CHECK_EQ(t.p.flags, SYN | ACK);
	CHECK_EQ(th_stats(&h).rx_tcp_syn_cookie_sent, 1);
	t.rcv = cookie + 1;
	tp_send_at(&t, 9001, ACK, NULL, 0);
	CHECK_EQ(th_stats(&h).rx_tcp_conn_exhausted, 1);
	CHECK_EQ(h.n_accepted, 64);
	tp_drain(&t);
	done(&h, &t);
}

/* the pool exhausted by TIME-WAIT connections: a new SYN reuses the oldest one */
TEST(rfc6191_time_wait_reused_when_pool_exhausted)
{
	struct th_host h;
	struct tp t;
	uint32_t i, iss;
	th_host_init(&h);
	tp_init(&t, &h);
	th_listen(&h, 80);
	for (i = 0; i < 64; i++) {
		iss = syn_from(&t, (uint16_t) (1000 + i), 5000);
		t.rcv = iss + 1;
		t.ts = 0;
		tp_send_at(&t, 5001, ACK, NULL, 0);
		CHECK_EQ(iip_tcp_close(h.ws, h.handle, h.opaque), 0);
		t.rcv = iss + 2;
		tp_send_at(&t, 5001, FIN | ACK, NULL, 0);
		th_advance_ms(&h, 1);
		tp_drain(&t);
	}
	tp_drain(&t);
	CHECK_EQ(h.n_closed, 64);
	CHECK_EQ(WS(&h)->conn_pool_cnt, 0);
	iss = syn_from(&t, 4000, 5000);
	CHECK_EQ(t.p.flags, SYN | ACK);
	CHECK_EQ(th_stats(&h).rx_tcp_syn_cookie_sent, 0);
	CHECK_EQ(h.n_closed, 64); /* TIME-WAIT already told the app */
	done(&h, &t);
}

/* RFC 9293 3.10.7.4 / RFC 6191: a SYN with a higher sequence number on a TIME-WAIT pair opens a new connection */
TEST(rfc6191_syn_in_time_wait_new_incarnation)
{
	struct th_host h;
	struct tp t;
	uint32_t iss;
	th_host_init(&h);
	tp_init(&t, &h);
	th_listen(&h, 80);
	iss = syn_from(&t, 1000, 5000);
	t.rcv = iss + 1;
	t.ts = 0;
	tp_send_at(&t, 5001, ACK, NULL, 0);
	CHECK_EQ(iip_tcp_close(h.ws, h.handle, h.opaque), 0);
	t.rcv = iss + 2;
	tp_send_at(&t, 5001, FIN | ACK, NULL, 0);
	tp_drain(&t);
	CHECK_EQ(WS(&h)->conn_pool_cnt, 63);
	/* an old-sequence SYN gets the TIME-WAIT treatment (challenge ACK), not a new connection */
	syn_from(&t, 1000, 4000);
	CHECK_EQ(t.p.flags, ACK);
	/* a higher one: new connection */
	syn_from(&t, 1000, 9000);
	CHECK_EQ(t.p.flags, SYN | ACK);
	CHECK_EQ(t.p.ack, 9001);
	CHECK_EQ(h.n_accept, 2);
	done(&h, &t);
}

int main(void)
{
	RUN(rfc4987_syn_cookie_when_backlog_full);
	RUN(rfc4987_invalid_cookie_rst);
	RUN(rfc4987_syn_cookie_when_pool_exhausted);
	RUN(rfc6191_time_wait_reused_when_pool_exhausted);
	RUN(rfc6191_syn_in_time_wait_new_incarnation);
	TH_SUMMARY();
}
