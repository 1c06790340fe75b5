/*
 * fuzz_frames.c: libFuzzer target feeding arbitrary frames and API calls to
 * one stack (fuzz_input.h gives the input layout, README.md the why).
 *
 * Build as a fuzzer:  clang -fsanitize=fuzzer,address,undefined fuzz_frames.c
 * Build as a replayer: cc -DFUZZ_REPLAY_MAIN -fsanitize=address,undefined fuzz_frames.c
 *   (runs each file named on the command line once; FUZZ_TRACE=1 prints
 *   every operation, which is how a reproducer is read).
 */
#include "fuzz_host.h"
#include "fuzz_input.h"

/* ---------- reading the input ---------- */

struct fz_in {
	const uint8_t *p;
	size_t n, i;
};

static int fz_more(const struct fz_in *in) { return in->i < in->n; }
static uint8_t fz_u8(struct fz_in *in) { return in->i < in->n ? in->p[in->i++] : 0; }
static uint16_t fz_u16(struct fz_in *in)
{
	uint16_t hi = fz_u8(in);
	return (uint16_t) ((hi << 8) | fz_u8(in));
}

#define FZ_TRACE(...) \
	do { \
		if (fz_trace) \
			printf(__VA_ARGS__); \
	} while (0)

/* per-input state of the fake peer */
static uint32_t fz_peer_ts;	/* the peer's timestamp clock */
static uint16_t fz_frag_id;
static uint8_t fz_frame[70000];	/* scratch for building frames */

static uint32_t fz_peer_isn(uint16_t port) { return (uint32_t) port * 2654435761U; }

/* ---------- feeding the stack ---------- */

static void fz_run(struct fz_host *h, struct fz_pkt **pkts, uint16_t cnt)
{
	void *v[80];
	uint16_t i;
	for (i = 0; i < cnt; i++)
		v[i] = pkts[i];
	iip_run(h->ws, h->mac, h->ip_be, v, cnt, &h->next_us, h->opaque);
	fz_check_accounting(h);
}


/* A received frame in a buffer of exactly its size (plus 2 for alignment). */
static struct fz_pkt *fz_rx_pkt(const uint8_t *bytes, uint32_t len)
{
	struct fz_pkt *p = fz_pkt_new(len + 2, 2);
	memcpy(p->data, bytes, len);
	p->len = (uint16_t) len;
	return p;
}

static void fz_inject(struct fz_host *h, const uint8_t *f, uint32_t len)
{
	struct fz_pkt *p = fz_rx_pkt(f, len);
	fz_run(h, &p, 1);
}

/* Rewrites addresses and checksums of a frame the fuzzer wrote, as asked. */
FZ_NO_COV static void fz_fix_frame(uint8_t *f, uint32_t len, uint8_t flags)
{
	uint8_t *ip;
	uint32_t ihl;
	if ((flags & FZ_FR_ADDRESS) && len >= 14) {
		memcpy(f, fz_mac_self, 6);
		memcpy(f + 6, fz_mac_peer, 6);
	}
	if (len < 34 || fz_be16(f + 12) != 0x0800)
		return;
	ip = f + 14;
	ihl = (uint32_t) (ip[0] & 15) * 4;
	if (flags & FZ_FR_ADDRESS) {
		fz_put32(ip + 12, FZ_IP_PEER);
		fz_put32(ip + 16, FZ_IP_SELF);
	}
	if (ihl < 20 || 14 + ihl > len)
		return;
	if ((flags & FZ_FR_FIX_L4_CSUM) && !(fz_be16(ip + 6) & 0x3fff)) {
		uint32_t tot = fz_be16(ip + 2), end = tot < len - 14 ? tot : len - 14;
		uint8_t *l4 = ip + ihl;
		uint32_t l4_len = end > ihl ? end - ihl : 0;
		uint16_t c;
		if (ip[9] == 6 && l4_len >= 20) {
			fz_put16(l4 + 16, 0);
			fz_put16(l4 + 16, fz_fold(fz_sum(l4, l4_len, fz_pseudo(ip, 6, l4_len))));
		} else if (ip[9] == 17 && l4_len >= 8) {
			fz_put16(l4 + 6, 0);
			c = fz_fold(fz_sum(l4, l4_len, fz_pseudo(ip, 17, l4_len)));
			fz_put16(l4 + 6, c ? c : 0xffff);
		} else if (ip[9] == 1 && l4_len >= 4) {
			fz_put16(l4 + 2, 0);
			fz_put16(l4 + 2, fz_fold(fz_sum(l4, l4_len, 0)));
		}
	}
	if (flags & FZ_FR_FIX_IP_CSUM) {
		fz_put16(ip + 10, 0);
		fz_put16(ip + 10, fz_fold(fz_sum(ip, ihl, 0)));
	}
}

/* Reads one frame (FZ_OP_FRAME's arguments) into a packet, chained if asked. */
static struct fz_pkt *fz_read_frame(struct fz_host *h, struct fz_in *in)
{
	uint8_t flags = fz_u8(in), split = 0;
	uint32_t len, avail;
	struct fz_pkt *p;
	if (flags & FZ_FR_CHAIN)
		split = fz_u8(in);
	len = fz_u16(in);
	avail = (uint32_t) (in->n - in->i);
	if (len > avail)
		len = avail;
	memcpy(fz_frame, in->p + in->i, len);
	in->i += len;
	fz_fix_frame(fz_frame, len, flags);
	if (len >= 34 && fz_be16(fz_frame + 12) == 0x0800 && fz_frame[14 + 9] == 6)
		h->raw_tcp = 1; /* TCP payload of the fuzzer's own */
	FZ_TRACE("  frame %u bytes, flags 0x%02x%s\n", len, flags, (flags & FZ_FR_CHAIN) ? " (chained)" : "");
	if ((flags & FZ_FR_CHAIN) && 1U + split < len) {
		p = fz_rx_pkt(fz_frame, 1U + split);
		p->next = fz_rx_pkt(fz_frame + 1 + split, len - 1 - split);
	} else
		p = fz_rx_pkt(fz_frame, len);
	p->rx_csum_bad = (flags & FZ_FR_NIC_CSUM_BAD) != 0;
	p->l2_skip = (flags & FZ_FR_L2_SKIP) != 0;
	return p;
}

/* ---------- building segments ---------- */

FZ_NO_COV static uint32_t fz_build_ip(uint8_t *f, uint32_t src, uint32_t dst, uint8_t proto, uint16_t id, uint16_t frag, uint32_t l4_len)
{
	uint8_t *ip = f + 14;
	memcpy(f, fz_mac_self, 6);
	memcpy(f + 6, fz_mac_peer, 6);
	fz_put16(f + 12, 0x0800);
	ip[0] = 0x45;
	ip[1] = 0;
	fz_put16(ip + 2, (uint16_t) (20 + l4_len));
	fz_put16(ip + 4, id);
	fz_put16(ip + 6, frag);
	ip[8] = 64;
	ip[9] = proto;
	fz_put16(ip + 10, 0);
	fz_put32(ip + 12, src);
	fz_put32(ip + 16, dst);
	fz_put16(ip + 10, fz_fold(fz_sum(ip, 20, 0)));
	return 34;
}

struct fz_seg {
	uint32_t src, dst;	/* host order */
	uint16_t sport, dport;
	uint32_t seq, ack;
	uint8_t flags;
	uint16_t win;
	uint8_t opt[40];
	uint32_t opt_len;	/* multiple of 4 */
	uint32_t plen;
};

FZ_NO_COV static uint32_t fz_build_tcp(uint8_t *f, const struct fz_seg *s)
{
	uint32_t thl = 20 + s->opt_len, i;
	uint8_t *t = f + 34;
	fz_build_ip(f, s->src, s->dst, 6, 0, 0x4000, thl + s->plen);
	fz_put16(t, s->sport);
	fz_put16(t + 2, s->dport);
	fz_put32(t + 4, s->seq);
	fz_put32(t + 8, s->ack);
	t[12] = (uint8_t) ((thl / 4) << 4);
	t[13] = s->flags;
	fz_put16(t + 14, s->win);
	fz_put16(t + 16, 0);
	fz_put16(t + 18, 0);
	memcpy(t + 20, s->opt, s->opt_len);
	/* each payload byte is its sequence number's low byte: the app checks it */
	for (i = 0; i < s->plen; i++)
		t[thl + i] = (uint8_t) (s->seq + ((s->flags & IIP_TCP_FLAG_SYN) ? 1 : 0) + i);
	fz_put16(t + 16, fz_fold(fz_sum(t, thl + s->plen, fz_pseudo(f + 14, 6, thl + s->plen))));
	return 34 + thl + s->plen;
}

static void fz_send_seg(struct fz_host *h, const struct fz_seg *s)
{
	FZ_TRACE("  segment %u -> %u flags 0x%02x seq %u ack %u win %u opts %u payload %u\n",
		 s->sport, s->dport, s->flags, s->seq, s->ack, s->win, s->opt_len, s->plen);
	fz_inject(h, fz_frame, fz_build_tcp(fz_frame, s));
}

static void fz_opt_ts(struct fz_seg *s, uint32_t val, uint32_t ecr)
{
	uint8_t *o = s->opt + s->opt_len;
	o[0] = 1;
	o[1] = 1;
	o[2] = 8;
	o[3] = 10;
	fz_put32(o + 4, val);
	fz_put32(o + 8, ecr);
	s->opt_len += 12;
}

/* SYN options the way Linux orders them: MSS, SACK-permitted, timestamps, window scale. */
static void fz_opt_syn(struct fz_seg *s, uint8_t which, uint16_t mss, uint8_t ws, uint32_t ecr)
{
	uint8_t *o = s->opt;
	uint32_t n = 0;
	if (which & 2) {
		o[n++] = 2; o[n++] = 4; o[n++] = (uint8_t) (mss >> 8); o[n++] = (uint8_t) mss;
	}
	if (which & 8) {
		o[n++] = 1; o[n++] = 1; o[n++] = 4; o[n++] = 2;
	}
	if (which & 16) {
		o[n++] = 1; o[n++] = 1; o[n++] = 8; o[n++] = 10;
		fz_put32(o + n, fz_peer_ts++);
		fz_put32(o + n + 4, ecr);
		n += 8;
	}
	if (which & 4) {
		o[n++] = 1; o[n++] = 3; o[n++] = 3; o[n++] = ws;
	}
	s->opt_len = n;
}

static void fz_opt_sack(struct fz_seg *s, const uint32_t *blocks, uint32_t n)
{
	uint8_t *o = s->opt + s->opt_len;
	uint32_t i;
	o[0] = 1;
	o[1] = 1;
	o[2] = 5;
	o[3] = (uint8_t) (2 + 8 * n);
	for (i = 0; i < 2 * n; i++)
		fz_put32(o + 4 + 4 * i, blocks[i]);
	s->opt_len += 4 + 8 * n;
}

/* The latest segment the stack sent from port sport to port dport whose flags include want. */
static const struct fz_seen *fz_seen_find(struct fz_host *h, uint16_t sport, uint16_t dport, uint8_t want)
{
	uint32_t k;
	for (k = 0; k < FZ_RING && k < h->n_seen; k++) {
		const struct fz_seen *s = &h->seen[(h->n_seen - 1 - k) % FZ_RING];
		if (s->sport == sport && s->dport == dport && (s->flags & want) == want)
			return s;
	}
	return NULL;
}

/* A segment of the peer of connection c: its real 4-tuple, timestamps if negotiated. */
static void fz_seg_of(struct fz_host *h, struct iip_tcp_conn *c, struct fz_seg *s)
{
	memset(s, 0, sizeof(*s));
	s->src = __iip_ntohl(c->peer_ip4_be);
	s->dst = __iip_ntohl(c->local_ip4_be);
	s->sport = __iip_ntohs(c->peer_port_be);
	s->dport = __iip_ntohs(c->local_port_be);
	s->win = 65535;
	s->flags = IIP_TCP_FLAG_ACK;
	if (c->opt_ts)
		fz_opt_ts(s, fz_peer_ts++, __iip_tcp_ts_now((struct iip_workspace *) h->ws, c));
}

static void fz_peer_send(struct fz_host *h, struct iip_tcp_conn *c, uint8_t flags, uint32_t seq, uint32_t ack, uint16_t win, uint32_t plen)
{
	struct fz_seg s;
	fz_seg_of(h, c, &s);
	s.flags = flags;
	s.seq = seq;
	s.ack = ack;
	s.win = win;
	s.plen = plen;
	fz_send_seg(h, &s);
}

static struct iip_tcp_conn *fz_nth_conn(struct fz_host *h, uint32_t k)
{
	struct iip_workspace *ws = (struct iip_workspace *) h->ws;
	struct iip_tcp_conn *c = ws->conn_all;
	if (!ws->conn_live)
		return NULL;
	for (k %= ws->conn_live; k && c; k--)
		c = c->all_next;
	return c;
}

static void *fz_pick_handle(struct fz_host *h, uint8_t idx)
{
	void *handle;
	if (!h->n_handles)
		return NULL;
	handle = h->handles[idx % h->n_handles];
	fz_handle_check(h, handle, "app call");
	return handle;
}

/* ---------- TCP mode: scripted connections driven into a state ---------- */

static const char *const fz_state_names[FZ_ST_COUNT] = {
	"ESTABLISHED", "DATA_IN_FLIGHT", "OOO_QUEUED", "PEER_ZERO_WINDOW", "OUR_WINDOW_FULL", "FIN_WAIT_1",
	"FIN_WAIT_2", "CLOSE_WAIT", "CLOSING", "LAST_ACK", "TIME_WAIT", "SYN_RECEIVED", "SYN_SENT", "RECOVERY"
};

static void fz_setup_conn(struct fz_host *h, uint8_t i, uint8_t c0, uint8_t c1, uint8_t c2)
{
	struct iip_workspace *ws = (struct iip_workspace *) h->ws;
	uint8_t st = (uint8_t) (c1 % FZ_ST_COUNT), active = c0 & 1, isn_sel = (uint8_t) (c0 >> 5);
	uint32_t piss = isn_sel == 7 ? 0xffffffffU - 100U - i : isn_sel * 0x20000000U + 1000U * (i + 1U);
	uint16_t lport, pport, seg;
	uint32_t k = 1 + c2 % 8U, j, siss, tsecr;
	const struct fz_seen *seen;
	struct iip_tcp_conn *c;
	struct fz_seg s;
	FZ_TRACE("setup %u: %s open, options 0x%02x, target %s, parameter %u\n", i, active ? "active" : "passive", c0 & 0x1e, fz_state_names[st], c2);
	memset(&s, 0, sizeof(s));
	s.src = FZ_IP_PEER;
	s.dst = FZ_IP_SELF;
	s.win = 65535;
	if (!active) {
		lport = 80;
		pport = (uint16_t) (50000 + i);
		s.sport = pport;
		s.dport = lport;
		s.seq = piss;
		s.flags = IIP_TCP_FLAG_SYN;
		fz_opt_syn(&s, c0, 1460, (uint8_t) (c2 % 15), 0);
		fz_send_seg(h, &s);
		seen = fz_seen_find(h, lport, pport, IIP_TCP_FLAG_SYN | IIP_TCP_FLAG_ACK);
		if (!seen || st == FZ_ST_SYN_RECEIVED || st == FZ_ST_SYN_SENT)
			return;
		/* the final ACK of the handshake, with the ISN read from the SYN-ACK */
		siss = seen->seq;
		tsecr = seen->tsval;
		memset(&s.opt, 0, sizeof(s.opt));
		s.opt_len = 0;
		if (c0 & 16)
			fz_opt_ts(&s, fz_peer_ts++, tsecr);
		s.flags = IIP_TCP_FLAG_ACK;
		s.seq = piss + 1;
		s.ack = siss + 1;
		fz_send_seg(h, &s);
	} else {
		lport = (uint16_t) (30000 + i);
		pport = 8080;
		iip_tcp_connect(h->ws, h->mac, h->ip_be, __iip_htons(lport), (uint8_t *) fz_mac_peer, __iip_htonl(FZ_IP_PEER), __iip_htons(pport), h->opaque);
		seen = fz_seen_find(h, lport, pport, IIP_TCP_FLAG_SYN);
		if (!seen || st == FZ_ST_SYN_SENT)
			return;
		siss = seen->seq;
		tsecr = seen->tsval;
		s.sport = pport;
		s.dport = lport;
		s.seq = piss;
		if (st == FZ_ST_SYN_RECEIVED) {
			/* simultaneous open: a SYN without ACK */
			s.flags = IIP_TCP_FLAG_SYN;
			fz_opt_syn(&s, c0, 1460, (uint8_t) (c2 % 15), 0);
			fz_send_seg(h, &s);
			return;
		}
		s.flags = IIP_TCP_FLAG_SYN | IIP_TCP_FLAG_ACK;
		s.ack = siss + 1;
		fz_opt_syn(&s, c0, 1460, (uint8_t) (c2 % 15), tsecr);
		fz_send_seg(h, &s);
	}
	c = __iip_tcp_lookup(ws, h->ip_be, __iip_htons(lport), __iip_htonl(FZ_IP_PEER), __iip_htons(pport));
	if (!c || c->state != IIP_TCP_STATE_ESTABLISHED)
		return;
	seg = (uint16_t) (c->rcv_mss - (c->opt_ts ? 12 : 0));	/* the peer's full segment */
	switch (st) {
	case FZ_ST_DATA_IN_FLIGHT:
		for (j = 0; j < k; j++)
			fz_app_tcp_send(h, c, c->snd_mss, IIP_TCP_FLAG_PSH);
		break;
	case FZ_ST_OOO_QUEUED:
		for (j = 0; j <= c2 % 4U; j++)
			fz_peer_send(h, c, IIP_TCP_FLAG_ACK, c->rcv_nxt + seg * (2 * j + 1), c->snd_max, 65535, seg);
		break;
	case FZ_ST_PEER_ZERO_WINDOW:
		for (j = 0; j < k; j++)
			fz_app_tcp_send(h, c, c->snd_mss, IIP_TCP_FLAG_PSH);
		fz_peer_send(h, c, IIP_TCP_FLAG_ACK, c->rcv_nxt, c->snd_max, 0, 0);
		fz_app_tcp_send(h, c, 100, IIP_TCP_FLAG_PSH);
		break;
	case FZ_ST_OUR_WINDOW_FULL:
		h->app &= (uint8_t) ~FZ_A_CONSUME;
		for (j = 0; j < 1 + c2 % 32U && c->state == IIP_TCP_STATE_ESTABLISHED; j++)
			fz_peer_send(h, c, IIP_TCP_FLAG_ACK | IIP_TCP_FLAG_PSH, c->rcv_nxt, c->snd_max, 65535, seg);
		break;
	case FZ_ST_FIN_WAIT_1:
		if (c2 & 1)
			fz_app_tcp_send(h, c, c->snd_mss, IIP_TCP_FLAG_PSH);
		iip_tcp_close(h->ws, c, h->opaque);
		break;
	case FZ_ST_FIN_WAIT_2:
		iip_tcp_close(h->ws, c, h->opaque);
		fz_peer_send(h, c, IIP_TCP_FLAG_ACK, c->rcv_nxt, c->snd_max, 65535, 0);
		break;
	case FZ_ST_CLOSE_WAIT:
		fz_peer_send(h, c, IIP_TCP_FLAG_ACK | IIP_TCP_FLAG_FIN, c->rcv_nxt, c->snd_max, 65535, 0);
		break;
	case FZ_ST_CLOSING:
		iip_tcp_close(h->ws, c, h->opaque);
		fz_peer_send(h, c, IIP_TCP_FLAG_ACK | IIP_TCP_FLAG_FIN, c->rcv_nxt, c->snd_una, 65535, 0);
		break;
	case FZ_ST_LAST_ACK:
		fz_peer_send(h, c, IIP_TCP_FLAG_ACK | IIP_TCP_FLAG_FIN, c->rcv_nxt, c->snd_max, 65535, 0);
		if (fz_handle_index(h, c) >= 0)
			iip_tcp_close(h->ws, c, h->opaque);
		break;
	case FZ_ST_TIME_WAIT:
		iip_tcp_close(h->ws, c, h->opaque);
		fz_peer_send(h, c, IIP_TCP_FLAG_ACK | IIP_TCP_FLAG_FIN, c->rcv_nxt, c->snd_max, 65535, 0);
		break;
	case FZ_ST_RECOVERY:
		k = 4 + c2 % 5U;
		iip_tcp_set_nodelay(h->ws, c, 1);
		for (j = 0; j < k; j++)
			fz_app_tcp_send(h, c, c->snd_mss, IIP_TCP_FLAG_PSH);
		for (j = 1; j <= 4 && c->state == IIP_TCP_STATE_ESTABLISHED; j++) {
			fz_seg_of(h, c, &s);
			s.seq = c->rcv_nxt;
			s.ack = c->snd_una;
			if (c->opt_sack) {
				uint32_t b[2];
				b[0] = c->snd_una + c->snd_mss;
				b[1] = c->snd_una + c->snd_mss * (1 + j);
				fz_opt_sack(&s, b, 1);
			}
			fz_send_seg(h, &s);
		}
		break;
	default:
		break;
	}
}

/* ---------- operations ---------- */

static void fz_op_tcp_seg(struct fz_host *h, struct fz_in *in)
{
	struct iip_workspace *ws = (struct iip_workspace *) h->ws;
	uint8_t k = fz_u8(in), flags = fz_u8(in), sel = fz_u8(in);
	int32_t sd = (int16_t) fz_u16(in), ad = (int16_t) fz_u16(in);
	uint16_t win = fz_u16(in);
	uint32_t plen = fz_u16(in) % 4096U, seq_base, ack_base, ts_ecr = 0, ts_recent = 0;
	struct iip_tcp_conn *c = (k & 0x80) ? NULL : fz_nth_conn(h, k);
	struct fz_seg s;
	uint32_t blocks[8], n, i;
	if (sel & 0x80) {
		sd *= 256;
		ad *= 256;
	}
	memset(&s, 0, sizeof(s));
	if (c) {
		uint32_t rwnd = __iip_seq_gt(c->rcv_adv, c->rcv_nxt) ? c->rcv_adv - c->rcv_nxt : 0;
		const uint32_t seq_bases[4] = { c->rcv_nxt, c->rcv_nxt + rwnd, c->irs, c->rcv_nxt + rwnd / 2 };
		const uint32_t ack_bases[4] = { c->snd_una, c->snd_nxt, c->snd_max, c->snd_una - c->max_snd_wnd };
		s.src = __iip_ntohl(c->peer_ip4_be);
		s.dst = __iip_ntohl(c->local_ip4_be);
		s.sport = __iip_ntohs(c->peer_port_be);
		s.dport = __iip_ntohs(c->local_port_be);
		seq_base = seq_bases[sel & 3];
		ack_base = ack_bases[(sel >> 2) & 3];
		ts_ecr = __iip_tcp_ts_now(ws, c);
		ts_recent = c->ts_recent;
		FZ_TRACE("  on connection in state %u (rcv_nxt %u snd_una %u snd_max %u)\n", c->state, c->rcv_nxt, c->snd_una, c->snd_max);
	} else {
		const struct fz_seen *seen;
		s.src = FZ_IP_PEER;
		s.dst = FZ_IP_SELF;
		s.sport = (uint16_t) (20000 + 7 * (k & 63));
		s.dport = 80;
		seq_base = fz_peer_isn(s.sport) + ((sel & 3) == 2 ? 0 : 1);
		seen = fz_seen_find(h, 80, s.sport, IIP_TCP_FLAG_SYN | IIP_TCP_FLAG_ACK);
		ack_base = seen ? seen->seq + 1 : 0;
		ts_ecr = seen ? seen->tsval : 0;
		FZ_TRACE("  on fresh port %u\n", s.sport);
	}
	s.seq = seq_base + (uint32_t) sd;
	s.ack = ack_base + (uint32_t) ad;
	s.flags = flags;
	s.win = win;
	s.plen = plen;
	switch ((sel >> 4) & 7) {
	case FZ_SEG_OPT_TS:
		fz_opt_ts(&s, fz_peer_ts++, ts_ecr);
		break;
	case FZ_SEG_OPT_TS_SACK:
	case FZ_SEG_OPT_SACK:
		n = ((sel >> 4) & 7) == FZ_SEG_OPT_TS_SACK ? 1 + fz_u8(in) % 3U : 1 + fz_u8(in) % 4U;
		for (i = 0; i < n; i++) {
			blocks[2 * i] = ack_base + (uint32_t) (int32_t) (int16_t) fz_u16(in);
			blocks[2 * i + 1] = blocks[2 * i] + fz_u16(in);
		}
		if (((sel >> 4) & 7) == FZ_SEG_OPT_TS_SACK)
			fz_opt_ts(&s, fz_peer_ts++, ts_ecr);
		fz_opt_sack(&s, blocks, n);
		break;
	case FZ_SEG_OPT_SYN:
		{
			uint16_t mss = fz_u16(in);
			fz_opt_syn(&s, 0x1e, mss, fz_u8(in), ts_ecr);
		}
		break;
	case FZ_SEG_OPT_TS_OLD:
		fz_opt_ts(&s, ts_recent - 1 - fz_u16(in), ts_ecr);
		break;
	case FZ_SEG_OPT_RAW:
		n = fz_u8(in) % 41U;
		for (i = 0; i < n; i++)
			s.opt[i] = fz_u8(in);
		s.opt_len = (n + 3) & ~3U;
		break;
	case FZ_SEG_OPT_TS_ZERO_ECR:
		fz_opt_ts(&s, fz_peer_ts++, 0);
		break;
	default:
		break;
	}
	fz_send_seg(h, &s);
}

static void fz_op_syn_flood(struct fz_host *h, struct fz_in *in)
{
	uint32_t n = 1 + fz_u8(in) % 32U, base = fz_u8(in), i;
	struct fz_pkt *pkts[32];
	for (i = 0; i < n; i++) {
		struct fz_seg s;
		memset(&s, 0, sizeof(s));
		s.src = FZ_IP_PEER;
		s.dst = FZ_IP_SELF;
		s.sport = (uint16_t) (20000 + 7 * ((base + i) & 63));
		s.dport = 80;
		s.seq = fz_peer_isn(s.sport);
		s.flags = IIP_TCP_FLAG_SYN;
		s.win = 65535;
		fz_opt_syn(&s, (uint8_t) (base & 0x1e), 1460, 7, 0);
		pkts[i] = fz_rx_pkt(fz_frame, fz_build_tcp(fz_frame, &s));
	}
	FZ_TRACE("  %u SYNs from port %u on\n", n, 20000 + 7 * (base & 63));
	fz_run(h, pkts, (uint16_t) n);
}

static void fz_op_frags(struct fz_host *h, struct fz_in *in)
{
	static uint8_t dgram[65536];
	uint8_t proto_sel = fz_u8(in);
	uint32_t len = fz_u16(in) % 9000U, unit = 8 * (1 + fz_u8(in) % 64U);
	uint8_t order = fz_u8(in), proto;
	uint32_t hdr, total, nfrag, i, sent = 0;
	struct fz_pkt *pkts[20];
	uint16_t id = fz_frag_id++;
	uint8_t pseudo_ip[20];
	switch (proto_sel & 3) {
	case 0: proto = 17; hdr = 8; break;
	case 1: proto = 1; hdr = 8; break;
	case 2: proto = 6; hdr = 20; break;
	default: proto = 200; hdr = 0; break;
	}
	total = hdr + len;
	memset(dgram, 0, hdr);
	memset(dgram + hdr, (uint8_t) id, total - hdr);
	memset(pseudo_ip, 0, sizeof(pseudo_ip));
	fz_put32(pseudo_ip + 12, FZ_IP_PEER);
	fz_put32(pseudo_ip + 16, FZ_IP_SELF);
	if (proto == 17) {
		fz_put16(dgram, 5555);
		fz_put16(dgram + 2, 7);
		fz_put16(dgram + 4, (uint16_t) total);
		fz_put16(dgram + 6, fz_fold(fz_sum(dgram, total, fz_pseudo(pseudo_ip, 17, total))));
	} else if (proto == 1) {
		dgram[0] = 8;
		fz_put16(dgram + 4, id);
		fz_put16(dgram + 2, fz_fold(fz_sum(dgram, total, 0)));
	} else if (proto == 6) {
		uint32_t isn = fz_peer_isn((uint16_t) (20000 + 7 * (id & 63)));
		for (i = hdr; i < total; i++)
			dgram[i] = (uint8_t) (isn + 1 + i - hdr); /* as fz_build_tcp */
		fz_put16(dgram, (uint16_t) (20000 + 7 * (id & 63)));
		fz_put16(dgram + 2, 80);
		fz_put32(dgram + 4, isn);
		dgram[12] = 0x50;
		dgram[13] = IIP_TCP_FLAG_SYN;
		fz_put16(dgram + 14, 65535);
		fz_put16(dgram + 16, fz_fold(fz_sum(dgram, total, fz_pseudo(pseudo_ip, 6, total))));
	}
	if ((order & FZ_FRAG_BAD_CSUM) && hdr)
		dgram[proto == 1 ? 2 : proto == 17 ? 6 : 16] ^= 0x5a;
	nfrag = (total + unit - 1) / unit;
	if (nfrag > 16)
		nfrag = 16; /* beyond that, the rest is never sent: bounded work per operation */
	FZ_TRACE("  datagram proto %u, %u bytes, %u-byte fragments, order 0x%02x\n", proto, total, unit, order);
	for (i = 0; i < nfrag + 1 && sent < 20; i++) {
		uint32_t idx = i, off, n, last;
		uint16_t frag;
		if (i == nfrag) {
			if (!(order & FZ_FRAG_DUPLICATE))
				break;
			idx = 0;
		} else if (order & FZ_FRAG_REVERSE)
			idx = nfrag - 1 - i;
		last = (idx + 1) * unit >= total;
		if (last && (order & FZ_FRAG_DROP_ONE))
			continue;
		off = idx * unit;
		n = last ? total - off : unit;
		if (idx == 1 && (order & FZ_FRAG_OVERLAP)) {
			off -= 8;
			n += 8;
		}
		frag = (uint16_t) ((off / 8) | (!last || (order & FZ_FRAG_MF_LAST) ? 0x2000 : 0));
		fz_build_ip(fz_frame, FZ_IP_PEER, FZ_IP_SELF, proto, id, frag, n);
		memcpy(fz_frame + 34, dgram + off, n);
		pkts[sent] = fz_rx_pkt(fz_frame, 34 + n);
		if (proto_sel & 4)
			sent++;
		else
			fz_run(h, &pkts[sent], 1);
	}
	if (sent)
		fz_run(h, pkts, (uint16_t) sent);
}

static void fz_op_icmp_err(struct fz_host *h, struct fz_in *in)
{
	struct iip_tcp_conn *c = fz_nth_conn(h, fz_u8(in));
	uint8_t code = fz_u8(in), *icmp = fz_frame + 34, *q = icmp + 8;
	uint16_t mtu = fz_u16(in);
	uint32_t seq_delta = (uint32_t) (int32_t) (int16_t) fz_u16(in);
	if (!c)
		return;
	FZ_TRACE("  unreachable code %u mtu %u about seq snd_una%+d\n", code, mtu, (int) (int32_t) seq_delta);
	fz_build_ip(fz_frame, FZ_IP_PEER2, FZ_IP_SELF, 1, 7, 0, 8 + 28);
	memset(icmp, 0, 8 + 28);
	icmp[0] = 3;
	icmp[1] = code;
	fz_put16(icmp + 6, mtu);
	/* the quoted datagram: the stack's own segment, as a router returns it */
	q[0] = 0x45;
	fz_put16(q + 2, 1500);
	q[8] = 63;
	q[9] = 6;
	fz_put32(q + 12, __iip_ntohl(c->local_ip4_be));
	fz_put32(q + 16, __iip_ntohl(c->peer_ip4_be));
	fz_put16(q + 10, fz_fold(fz_sum(q, 20, 0)));
	fz_put16(q + 20, __iip_ntohs(c->local_port_be));
	fz_put16(q + 22, __iip_ntohs(c->peer_port_be));
	fz_put32(q + 24, c->snd_una + seq_delta);
	fz_put16(icmp + 2, fz_fold(fz_sum(icmp, 8 + 28, 0)));
	fz_inject(h, fz_frame, 34 + 8 + 28);
}

static void fz_ops(struct fz_host *h, struct fz_in *in)
{
	while (fz_more(in)) {
		uint8_t op = (uint8_t) (fz_u8(in) % FZ_OP_COUNT);
		switch (op) {
		case FZ_OP_FRAME:
			{
				struct fz_pkt *p;
				FZ_TRACE("FRAME\n");
				p = fz_read_frame(h, in);
				fz_run(h, &p, 1);
			}
			break;
		case FZ_OP_BATCH:
			{
				struct fz_pkt *p[4];
				uint16_t n = (uint16_t) (1 + fz_u8(in) % 4), i;
				FZ_TRACE("BATCH of %u\n", n);
				for (i = 0; i < n; i++)
					p[i] = fz_read_frame(h, in);
				fz_run(h, p, n);
			}
			break;
		case FZ_OP_CLOCK:
			{
				uint8_t v = fz_u8(in);
				uint64_t ms = v < 100 ? v * 10ULL : v < 200 ? (v - 100) * 1000ULL : v < 250 ? (v - 200) * 60000ULL : 3 * 3600000ULL;
				FZ_TRACE("CLOCK +%llu ms\n", (unsigned long long) ms);
				h->now_ns += ms * 1000000ULL;
				fz_run(h, NULL, 0);
			}
			break;
		case FZ_OP_FEATURES:
			h->feat = fz_u8(in);
			FZ_TRACE("FEATURES 0x%02x\n", h->feat);
			break;
		case FZ_OP_APP:
			h->app = fz_u8(in);
			FZ_TRACE("APP 0x%02x\n", h->app);
			break;
		case FZ_OP_TCP_SEND:
			{
				void *handle = fz_pick_handle(h, fz_u8(in));
				uint32_t len = fz_u16(in) % 9001U;
				uint8_t flags = fz_u8(in);
				FZ_TRACE("TCP_SEND %u bytes flags 0x%02x%s\n", len, flags, handle ? "" : " (no connection)");
				if (handle)
					fz_app_tcp_send(h, handle, len, flags);
			}
			break;
		case FZ_OP_TCP_CLOSE:
			{
				void *handle = fz_pick_handle(h, fz_u8(in));
				FZ_TRACE("TCP_CLOSE%s\n", handle ? "" : " (no connection)");
				if (handle)
					iip_tcp_close(h->ws, handle, h->opaque);
			}
			break;
		case FZ_OP_TCP_CONNECT:
			{
				uint8_t sel = fz_u8(in);
				uint16_t lport = fz_u16(in), pport = fz_u16(in);
				FZ_TRACE("TCP_CONNECT %u -> %u\n", lport, pport);
				iip_tcp_connect(h->ws, h->mac, h->ip_be, __iip_htons(lport), (uint8_t *) fz_mac_peer,
						__iip_htonl((sel & 1) ? FZ_IP_PEER2 : FZ_IP_PEER), __iip_htons(pport), h->opaque);
			}
			break;
		case FZ_OP_UDP_SEND:
			{
				uint32_t len = fz_u16(in);
				uint8_t sport = fz_u8(in), dport = fz_u8(in);
				if (len < 65400)
					len %= 9000U; /* keep sends cheap; the top values test the size limit */
				FZ_TRACE("UDP_SEND %u bytes\n", len);
				if (h->send_budget) {
					struct fz_pkt *p = fz_app_pkt(len, sport);
					h->send_budget--;
					if (iip_udp_send(h->ws, h->mac, h->ip_be, __iip_htons(1024 + sport), (uint8_t *) fz_mac_peer,
							 __iip_htonl(FZ_IP_PEER), __iip_htons(dport), p, h->opaque) != 0)
						fz_pkt_free(p);
				}
			}
			break;
		case FZ_OP_ARP_REQUEST:
			{
				uint8_t v = fz_u8(in);
				FZ_TRACE("ARP_REQUEST 10.0.0.%u\n", v);
				iip_arp_request(h->ws, h->mac, h->ip_be, __iip_htonl(0x0a000000U | v), h->opaque);
			}
			break;
		case FZ_OP_CONSUME:
			{
				void *handle = fz_pick_handle(h, fz_u8(in));
				uint8_t cnt = fz_u8(in);
				FZ_TRACE("CONSUME %u\n", cnt);
				if (handle)
					iip_tcp_rxbuf_consumed(h->ws, handle, cnt, h->opaque);
			}
			break;
		case FZ_OP_TCP_SEG:
			FZ_TRACE("TCP_SEG\n");
			fz_op_tcp_seg(h, in);
			break;
		case FZ_OP_CONN_OPT:
			{
				void *handle = fz_pick_handle(h, fz_u8(in));
				uint8_t v = fz_u8(in);
				FZ_TRACE("CONN_OPT 0x%02x\n", v);
				if (handle) {
					iip_tcp_set_nodelay(h->ws, handle, v & 1);
					iip_tcp_set_keepalive(h->ws, handle, (v >> 1) & 1, 1000, 500, 3);
					iip_tcp_set_cc(h->ws, handle, (v & 4) ? IIP_TCP_CC_CUBIC : IIP_TCP_CC_NEWRENO);
				}
			}
			break;
		case FZ_OP_ALLOC_FAIL:
			h->alloc_fail_every = fz_u8(in);
			FZ_TRACE("ALLOC_FAIL every %u\n", h->alloc_fail_every);
			break;
		case FZ_OP_SYN_FLOOD:
			FZ_TRACE("SYN_FLOOD\n");
			fz_op_syn_flood(h, in);
			break;
		case FZ_OP_FRAGS:
			FZ_TRACE("FRAGS\n");
			fz_op_frags(h, in);
			break;
		case FZ_OP_ICMP_ERR:
			FZ_TRACE("ICMP_ERR\n");
			fz_op_icmp_err(h, in);
			break;
		default:
			break;
		}
	}
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static const uint32_t conns[4] = { 8, 32, 64, 2 }, pbs[4] = { 64, 512, 1024, 16 };
	static const uint16_t mtus[4] = { 1500, 576, 9000, 1280 };
	static struct fz_host h;
	struct fz_in in;
	uint8_t cfg, app;
	in.p = data;
	in.n = size;
	in.i = 0;
	cfg = fz_u8(&in);
	fz_host_init(&h, conns[FZ_CFG_POOLS(cfg)], pbs[FZ_CFG_POOLS(cfg)], mtus[FZ_CFG_MTU(cfg)]);
	h.feat = fz_u8(&in);
	app = fz_u8(&in);
	h.cubic = (cfg & FZ_CFG_CUBIC) != 0;
	fz_peer_ts = 100000;
	fz_frag_id = 1;
	FZ_TRACE("config 0x%02x: %u connections, %u wrappers, MTU %u; features 0x%02x, app 0x%02x\n",
		 cfg, h.n_conn, h.n_pb, h.mtu, h.feat, app);
	if (cfg & FZ_CFG_UDP_FILTER) {
		iip_udp_port_open(h.ws, __iip_htons(7), 1);
		iip_udp_port_open(h.ws, __iip_htons(53), 1);
	}
	if (cfg & FZ_CFG_TCP_MODE) {
		uint8_t n = (uint8_t) (1 + fz_u8(&in) % 4), i;
		h.app = FZ_A_ACCEPT | FZ_A_CONSUME;
		for (i = 0; i < n; i++) {
			uint8_t c0 = fz_u8(&in), c1 = fz_u8(&in), c2 = fz_u8(&in);
			fz_setup_conn(&h, i, c0, c1, c2);
			h.app = FZ_A_ACCEPT | FZ_A_CONSUME;
		}
	}
	if (fz_trace) {
		struct iip_tcp_conn *c;
		for (c = ((struct iip_workspace *) h.ws)->conn_all; c; c = c->all_next)
			printf("connection %u -> %u: state %u, in flight %u, queued %u, out of order %u, peer window %u, unconsumed %u, recovery %u\n",
			       __iip_ntohs(c->peer_port_be), __iip_ntohs(c->local_port_be), c->state, c->snd_max - c->snd_una,
			       c->txq.cnt, c->ooo.cnt, c->snd_wnd, c->rx_unconsumed, c->in_recovery);
	}
	h.app = app;
	fz_ops(&h, &in);
	fz_host_fini(&h);
	return 0;
}

#ifdef FUZZ_REPLAY_MAIN
#include <time.h>

/* Replays each file once, for gdb and for the regression list. */
int main(int argc, char **argv)
{
	struct timespec t0, t1;
	int i, r, status = 0, repeat = getenv("FUZZ_REPEAT") ? atoi(getenv("FUZZ_REPEAT")) : 1;
	fz_trace = getenv("FUZZ_TRACE") != NULL;
	setvbuf(stdout, NULL, _IOLBF, 0); /* the trace survives an abort() */
	for (i = 1; i < argc; i++) {
		FILE *f = fopen(argv[i], "rb");
		static uint8_t buf[1 << 20];
		size_t n;
		if (!f) {
			fprintf(stderr, "fuzz_frames: cannot open %s\n", argv[i]);
			status = 2;
			continue;
		}
		n = fread(buf, 1, sizeof(buf), f);
		fclose(f);
		clock_gettime(CLOCK_MONOTONIC, &t0);
		for (r = 0; r < repeat; r++)
			LLVMFuzzerTestOneInput(buf, n);
		clock_gettime(CLOCK_MONOTONIC, &t1);
		printf("replayed %s (%zu bytes, %.3f ms per run)\n", argv[i], n,
		       ((t1.tv_sec - t0.tv_sec) * 1e3 + (t1.tv_nsec - t0.tv_nsec) / 1e6) / (repeat > 0 ? repeat : 1));
	}
	return status;
}
#endif
