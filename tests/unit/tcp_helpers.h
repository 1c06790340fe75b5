/*
 * tcp_helpers.h: a scripted TCP peer on top of harness.h.  A "struct tp"
 * remembers both sides' sequence numbers so a test reads like a packet
 * trace: tp_send(&t, ACK, data, n) sends the next peer segment,
 * tp_pop(&t) captures the next segment the stack emitted (parsed into t.p).
 */
#ifndef TESTS_UNIT_TCP_HELPERS_H
#define TESTS_UNIT_TCP_HELPERS_H

#include "harness.h"

#define SYN IIP_TCP_FLAG_SYN
#define ACK IIP_TCP_FLAG_ACK
#define FIN IIP_TCP_FLAG_FIN
#define RST IIP_TCP_FLAG_RST
#define PSH IIP_TCP_FLAG_PSH

/* Deterministic payload bytes: byte number i of a stream. */
static uint8_t pat(uint32_t i) { return (uint8_t) (i * 31 + 7 + (i >> 8)); }
static void pat_fill(uint8_t *b, uint32_t from, uint32_t n)
{
	uint32_t i;
	for (i = 0; i < n; i++)
		b[i] = pat(from + i);
}
static int pat_check(const uint8_t *b, uint32_t from, uint32_t n)
{
	uint32_t i;
	if (!b)
		return 0;
	for (i = 0; i < n; i++)
		if (b[i] != pat(from + i))
			return 0;
	return 1;
}

/* What the peer offers in its SYN. */
struct tp_synopts {
	uint16_t mss;		/* 0: no MSS option */
	int16_t ws;		/* -1: no window scale option */
	uint8_t sackp;
	uint8_t ts;
};

static struct tp_synopts tp_synopts_none(void)
{
	struct tp_synopts o;
	o.mss = 1460;
	o.ws = -1;
	o.sackp = 0;
	o.ts = 0;
	return o;
}

static struct tp_synopts tp_synopts_all(void)
{
	struct tp_synopts o;
	o.mss = 1460;
	o.ws = 7;
	o.sackp = 1;
	o.ts = 1;
	return o;
}

struct tp {
	struct th_host *h;
	uint16_t sport, dport;	/* the peer's port, the stack's port */
	uint32_t iss;		/* the stack's ISS */
	uint32_t irs;		/* the peer's ISS */
	uint32_t snd;		/* the peer's next sequence number */
	uint32_t rcv;		/* the next sequence number expected from the stack */
	uint16_t win;		/* window field the peer sends */
	uint8_t ts;		/* the peer sends timestamps */
	uint8_t sack_perm;
	uint32_t tsval;		/* the peer's timestamp clock */
	uint32_t ts_ecr;	/* the last TSval the stack sent */
	uint8_t opts[40];
	uint8_t opts_len;	/* extra options for the next tp_send (after TS) */
	void *c;		/* the stack's handle */
	struct th_frame *last;	/* the last popped frame (p points into it) */
	struct th_parsed p;
};

static void tp_init(struct tp *t, struct th_host *h)
{
	memset(t, 0, sizeof(*t));
	t->h = h;
	t->sport = 40000;
	t->dport = 80;
	t->win = 65535;
	t->irs = 1000;
	t->snd = 1000;
	t->tsval = 5000;
}

static void tp_fini(struct tp *t)
{
	free(t->last);
	t->last = NULL;
}

static void th_listen(struct th_host *h, uint16_t port)
{
	h->accept_ports[port >> 3] |= (uint8_t) (1 << (port & 7));
}

/* SYN options as a peer like Linux lays them out. */
static uint8_t tp_syn_opts(uint8_t *o, const struct tp_synopts *so, uint32_t tsval)
{
	uint8_t n = 0;
	if (so->mss) {
		o[n++] = 2; o[n++] = 4; put16_(o + n, so->mss); n += 2;
	}
	if (so->sackp) {
		o[n++] = 1; o[n++] = 1; o[n++] = 4; o[n++] = 2;
	}
	if (so->ts) {
		o[n++] = 1; o[n++] = 1; o[n++] = 8; o[n++] = 10;
		put32_(o + n, tsval); put32_(o + n + 4, 0); n += 8;
	}
	if (so->ws >= 0) {
		o[n++] = 1; o[n++] = 3; o[n++] = 3; o[n++] = (uint8_t) so->ws;
	}
	return n;
}

/* A segment from the peer at sequence seq with the current ack and options. */
static struct th_seg tp_seg_at(struct tp *t, uint32_t seq, uint8_t flags, const uint8_t *data, uint32_t len)
{
	struct th_seg s = th_seg_default();
	static uint8_t o[40];
	uint8_t n = 0;
	s.sport = t->sport;
	s.dport = t->dport;
	s.seq = seq;
	s.ack = (flags & ACK) ? t->rcv : 0;
	s.flags = flags;
	s.win = t->win;
	s.payload = data;
	s.payload_len = len;
	if (t->ts && !(flags & RST)) {
		o[n++] = 1; o[n++] = 1; o[n++] = 8; o[n++] = 10;
		put32_(o + n, t->tsval); put32_(o + n + 4, t->ts_ecr); n += 8;
	}
	if (t->opts_len) {
		memcpy(o + n, t->opts, t->opts_len);
		n = (uint8_t) (n + t->opts_len);
	}
	s.opts = o;
	s.opts_len = n;
	return s;
}

static void tp_send_at(struct tp *t, uint32_t seq, uint8_t flags, const uint8_t *data, uint32_t len)
{
	struct th_seg s = tp_seg_at(t, seq, flags, data, len);
	th_send_seg(t->h, &s);
}

/* Sends the peer's next segment and advances its sequence number. */
static void tp_send(struct tp *t, uint8_t flags, const uint8_t *data, uint32_t len)
{
	tp_send_at(t, t->snd, flags, data, len);
	t->snd += len + ((flags & SYN) ? 1 : 0) + ((flags & FIN) ? 1 : 0);
}

/* Sends len bytes of the pattern stream starting at stream offset off (relative to irs + 1). */
static void tp_send_pat(struct tp *t, uint32_t seq, uint32_t len, uint8_t flags)
{
	static uint8_t buf[TH_BUF_SIZE];
	pat_fill(buf, seq - t->irs - 1, len);
	tp_send_at(t, seq, flags, buf, len);
	if (__iip_seq_gt(seq + len, t->snd))
		t->snd = seq + len;
}

/* Pops the next frame the stack sent into t->p; 0 if there was none. */
static int tp_pop(struct tp *t)
{
	struct th_frame *f = th_pop(t->h);
	free(t->last);
	t->last = f;
	memset(&t->p, 0, sizeof(t->p));
	if (!f)
		return 0;
	th_parse(f, &t->p);
	if (t->p.has_ts)
		t->ts_ecr = t->p.tsval;
	return 1;
}

/* Pops a frame and checks flags, seq and ack (ack only when ACK is set). */
#define EXPECT_SEG(t, fl, sq, ak) \
	do { \
		CHECK(tp_pop(t)); \
		CHECK_EQ((t)->p.flags, (fl)); \
		CHECK_EQ((t)->p.seq, (uint32_t) (sq)); \
		if ((fl) & ACK) \
			CHECK_EQ((t)->p.ack, (uint32_t) (ak)); \
		CHECK((t)->p.l4_csum_ok); \
		CHECK((t)->p.ip_csum_ok); \
	} while (0)

/* Same, but PSH may or may not be set (data segments cut from a larger queue). */
#define EXPECT_DATA(t, sq, ak, n) \
	do { \
		CHECK(tp_pop(t)); \
		CHECK_EQ((t)->p.flags & ~PSH, ACK); \
		CHECK_EQ((t)->p.seq, (uint32_t) (sq)); \
		CHECK_EQ((t)->p.ack, (uint32_t) (ak)); \
		CHECK_EQ((t)->p.payload_len, (uint32_t) (n)); \
		CHECK((t)->p.l4_csum_ok); \
	} while (0)

#define EXPECT_NONE(t) CHECK_EQ(th_out_count((t)->h), 0)

/*
 * Passive open on t->dport: SYN with so, SYN-ACK checked, final ACK.  The
 * connection is ESTABLISHED and accepted afterwards (t->c).
 */
static void tp_passive_open(struct tp *t, const struct tp_synopts *so)
{
	struct th_seg s;
	uint8_t o[40];
	th_listen(t->h, t->dport);
	s = th_seg_default();
	s.sport = t->sport;
	s.dport = t->dport;
	s.seq = t->irs;
	s.flags = SYN;
	s.win = t->win;
	s.opts = o;
	s.opts_len = tp_syn_opts(o, so, t->tsval);
	t->ts = so->ts;
	t->sack_perm = so->sackp;
	th_send_seg(t->h, &s);
	t->snd = t->irs + 1;
	CHECK(tp_pop(t));
	CHECK_EQ(t->p.flags, SYN | ACK);
	CHECK_EQ(t->p.ack, t->irs + 1);
	t->iss = t->p.seq;
	t->rcv = t->iss + 1;
	tp_send(t, ACK, NULL, 0);
	t->c = t->h->handle;
	CHECK(t->c != NULL);
}

/* Active open from the stack to the peer: returns after SYN, SYN-ACK and our ACK. */
static void tp_active_open(struct tp *t, const struct tp_synopts *so)
{
	struct th_seg s;
	uint8_t o[40];
	uint8_t peer_mac[6] = TH_MAC_PEER;
	uint16_t r = iip_tcp_connect(t->h->ws, t->h->mac, t->h->ip_be, htons_(t->dport), peer_mac, htonl_(TH_IP_PEER),
				     htons_(t->sport), t->h->opaque);
	CHECK_EQ(r, 0);
	CHECK(tp_pop(t));
	CHECK_EQ(t->p.flags, SYN);
	t->iss = t->p.seq;
	t->rcv = t->iss + 1;
	t->ts_ecr = t->p.tsval;
	s = tp_seg_at(t, t->irs, SYN | ACK, NULL, 0);
	s.opts = o;
	s.opts_len = tp_syn_opts(o, so, t->tsval);
	if (so->ts)
		put32_(o + s.opts_len - (so->ws >= 0 ? 4 : 0) - 4, t->ts_ecr);
	t->ts = so->ts;
	t->sack_perm = so->sackp;
	th_send_seg(t->h, &s);
	t->snd = t->irs + 1;
	t->c = t->h->handle;
	CHECK(t->c != NULL);
	EXPECT_SEG(t, ACK, t->iss + 1, t->irs + 1);
}

/* The application sends len pattern bytes (stream offset off); returns iip_tcp_send's result. */
static uint16_t th_app_send_pat(struct th_host *h, void *c, uint32_t off, uint32_t len)
{
	struct th_pkt *p = th_pkt_new();
	uint16_t r;
	pat_fill(p->data, off, len);
	p->len = (uint16_t) len;
	r = iip_tcp_send(h->ws, c, p, 0, h->opaque);
	if (r)
		th_pkt_free(p);
	return r;
}

/* Runs the stack once with several frames in one batch (one iip_run call). */
static void th_run_batch(struct th_host *h, const struct th_seg *segs, uint32_t n)
{
	void *pkts[64];
	uint32_t i;
	for (i = 0; i < n && i < 64; i++) {
		struct th_pkt *p = th_pkt_new();
		p->len = (uint16_t) th_build_tcp(p->data, &segs[i]);
		pkts[i] = p;
	}
	iip_run(h->ws, h->mac, h->ip_be, pkts, (uint16_t) i, &h->next_us, h->opaque);
}

static struct iip_tcp_conn *tp_conn(struct tp *t) { return (struct iip_tcp_conn *) t->c; }

/* Counts the frames queued in the host's output without consuming them. */
static uint32_t th_pending(struct th_host *h) { return th_out_count(h); }

/* Frees every frame the stack sent so far. */
static void tp_drain(struct tp *t) { th_drain(t->h); }

#endif /* TESTS_UNIT_TCP_HELPERS_H */
