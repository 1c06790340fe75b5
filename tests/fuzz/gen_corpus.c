/*
 * gen_corpus.c: writes the seed corpus of fuzz_frames into a folder, one
 * file per input: valid frames of every protocol (ARP, ICMP echo and errors,
 * fragments, UDP, TCP with every option) and TCP-mode inputs that drive
 * scripted connections into each state and then exchange segments.
 *
 *   cc -std=gnu11 -O2 gen_corpus.c -o gen_corpus && ./gen_corpus corpus
 *
 * Frames carry correct checksums of their own (computed here, independently
 * of the stack); the FRAME flags ask for nothing to be fixed.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fuzz_input.h"

static uint8_t in_buf[1 << 16];
static uint32_t in_len;
static const char *out_dir;
static int files;

static void b8(uint32_t v) { in_buf[in_len++] = (uint8_t) v; }
static void b16(uint32_t v) { b8(v >> 8); b8(v); }
static void bytes(const uint8_t *p, uint32_t n) { memcpy(in_buf + in_len, p, n); in_len += n; }

static void begin(uint8_t cfg, uint8_t feat, uint8_t app)
{
	in_len = 0;
	b8(cfg);
	b8(feat);
	b8(app);
}

static void save(const char *name)
{
	char path[512];
	FILE *f;
	snprintf(path, sizeof(path), "%s/%s", out_dir, name);
	f = fopen(path, "wb");
	if (!f || fwrite(in_buf, 1, in_len, f) != in_len) {
		fprintf(stderr, "gen_corpus: cannot write %s\n", path);
		exit(1);
	}
	fclose(f);
	files++;
}

/* ---------- frames ---------- */

static const uint8_t mac_self[6] = { 0x02, 0, 0, 0, 0, 0x01 }, mac_peer[6] = { 0x02, 0, 0, 0, 0, 0x02 };
static const uint8_t mac_bcast[6] = { 0xff, 0xff, 0xff, 0xff, 0xff, 0xff };
#define IP_SELF (0x0a000001U)
#define IP_PEER (0x0a000002U)

static void put16(uint8_t *p, uint32_t v) { p[0] = (uint8_t) (v >> 8); p[1] = (uint8_t) v; }
static void put32(uint8_t *p, uint32_t v) { put16(p, v >> 16); put16(p + 2, v); }
static uint32_t sum(const uint8_t *p, uint32_t len, uint32_t s)
{
	uint32_t i;
	for (i = 0; i + 1 < len; i += 2)
		s += (uint32_t) ((p[i] << 8) | p[i + 1]);
	if (len & 1)
		s += (uint32_t) (p[len - 1] << 8);
	return s;
}
static uint16_t fold(uint32_t s)
{
	while (s >> 16)
		s = (s & 0xffff) + (s >> 16);
	return (uint16_t) ~s;
}

static uint8_t fr[70000];

static uint32_t eth(uint8_t *f, const uint8_t *dst, uint16_t type)
{
	memcpy(f, dst, 6);
	memcpy(f + 6, mac_peer, 6);
	put16(f + 12, type);
	return 14;
}

/* IPv4 header with optional options; the L4 bytes follow at f + 14 + 20 + opt_len. */
static uint32_t ip4(uint8_t *f, uint32_t dst, uint8_t proto, uint16_t frag, uint16_t id, const uint8_t *opt, uint32_t opt_len, uint32_t l4_len)
{
	uint8_t *ip = f + 14;
	uint32_t hl = 20 + opt_len;
	eth(f, mac_self, 0x0800);
	ip[0] = (uint8_t) (0x40 | hl / 4);
	ip[1] = 0;
	put16(ip + 2, hl + l4_len);
	put16(ip + 4, id);
	put16(ip + 6, frag);
	ip[8] = 64;
	ip[9] = proto;
	put16(ip + 10, 0);
	put32(ip + 12, IP_PEER);
	put32(ip + 16, dst);
	memcpy(ip + 20, opt, opt_len);
	put16(ip + 10, fold(sum(ip, hl, 0)));
	return 14 + hl;
}

static uint32_t pseudo(const uint8_t *f, uint8_t proto, uint32_t l4_len)
{
	return sum(f + 14 + 12, 8, 0) + proto + l4_len;
}

static uint32_t arp(uint8_t *f, uint16_t op, const uint8_t *dst, uint32_t spa, uint32_t tpa)
{
	uint8_t *a = f + eth(f, dst, 0x0806);
	put16(a, 1);
	put16(a + 2, 0x0800);
	a[4] = 6;
	a[5] = 4;
	put16(a + 6, op);
	memcpy(a + 8, mac_peer, 6);
	put32(a + 14, spa);
	memcpy(a + 18, op == 2 ? mac_self : (const uint8_t *) "\0\0\0\0\0\0", 6);
	put32(a + 24, tpa);
	memset(a + 28, 0, 18);
	return 60;
}

static uint32_t icmp_echo(uint8_t *f, uint32_t data_len, const uint8_t *opt, uint32_t opt_len)
{
	uint32_t off = ip4(f, IP_SELF, 1, 0, 1, opt, opt_len, 8 + data_len), i;
	uint8_t *m = f + off;
	m[0] = 8;
	m[1] = 0;
	put16(m + 2, 0);
	put16(m + 4, 0x1234);
	put16(m + 6, 1);
	for (i = 0; i < data_len; i++)
		m[8 + i] = (uint8_t) i;
	put16(m + 2, fold(sum(m, 8 + data_len, 0)));
	return off + 8 + data_len;
}

static uint32_t udp(uint8_t *f, uint32_t dst, uint16_t sport, uint16_t dport, uint32_t data_len, int zero_csum)
{
	uint32_t off = ip4(f, dst, 17, 0, 2, NULL, 0, 8 + data_len), i;
	uint8_t *u = f + off;
	put16(u, sport);
	put16(u + 2, dport);
	put16(u + 4, 8 + data_len);
	put16(u + 6, 0);
	for (i = 0; i < data_len; i++)
		u[8 + i] = (uint8_t) ('a' + i % 26);
	if (!zero_csum) {
		uint16_t c = fold(sum(u, 8 + data_len, pseudo(f, 17, 8 + data_len)));
		put16(u + 6, c ? c : 0xffff);
	}
	if (dst == 0xffffffffU)
		memcpy(f, mac_bcast, 6);
	return off + 8 + data_len;
}

static uint32_t tcp(uint8_t *f, uint16_t sport, uint16_t dport, uint32_t seq, uint32_t ack, uint8_t flags,
		    const uint8_t *opt, uint32_t opt_len, uint32_t data_len)
{
	uint32_t thl = 20 + opt_len, off = ip4(f, IP_SELF, 6, 0x4000, 3, NULL, 0, thl + data_len), i;
	uint8_t *t = f + off;
	put16(t, sport);
	put16(t + 2, dport);
	put32(t + 4, seq);
	put32(t + 8, ack);
	t[12] = (uint8_t) ((thl / 4) << 4);
	t[13] = flags;
	put16(t + 14, 65535);
	put16(t + 16, 0);
	put16(t + 18, 0);
	memcpy(t + 20, opt, opt_len);
	for (i = 0; i < data_len; i++)
		t[thl + i] = (uint8_t) i;
	put16(t + 16, fold(sum(t, thl + data_len, pseudo(f, 6, thl + data_len))));
	return off + thl + data_len;
}

/* A fragment of an L4 datagram held in dg. */
static uint32_t frag(uint8_t *f, uint8_t proto, uint16_t id, const uint8_t *dg, uint32_t off, uint32_t n, int more)
{
	uint32_t o = ip4(f, IP_SELF, proto, (uint16_t) ((off / 8) | (more ? 0x2000 : 0)), id, NULL, 0, n);
	memcpy(f + o, dg + off, n);
	return o + n;
}

/* Frames are valid as written; the FRAME flags still ask the target to fix
 * checksums, so that mutations of these bytes stay valid too. */
static void op_frame(const uint8_t *f, uint32_t len)
{
	b8(FZ_OP_FRAME);
	b8(FZ_FR_FIX_IP_CSUM | FZ_FR_FIX_L4_CSUM);
	b16(len);
	bytes(f, len);
}

static const uint8_t syn_opts[20] = { 2, 4, 0x05, 0xb4, 1, 1, 4, 2, 1, 1, 8, 10, 0, 1, 0x86, 0xa0, 0, 0, 0, 0, };
static const uint8_t syn_opts_ws[24] = { 2, 4, 0x05, 0xb4, 1, 1, 4, 2, 1, 1, 8, 10, 0, 1, 0x86, 0xa0, 0, 0, 0, 0, 1, 3, 3, 7 };

/* ---------- operations ---------- */

static void op_clock(uint8_t v) { b8(FZ_OP_CLOCK); b8(v); }
static void op_tcp_send(uint8_t h, uint16_t len) { b8(FZ_OP_TCP_SEND); b8(h); b16(len); b8(0x08); }
static void op_close(uint8_t h) { b8(FZ_OP_TCP_CLOSE); b8(h); }

/* A segment on live connection k: sel as in fuzz_input.h, no deltas. */
static void op_seg(uint8_t k, uint8_t flags, uint8_t sel, int16_t sd, int16_t ad, uint16_t win, uint16_t plen)
{
	b8(FZ_OP_TCP_SEG);
	b8(k);
	b8(flags);
	b8(sel);
	b16((uint16_t) sd);
	b16((uint16_t) ad);
	b16(win);
	b16(plen);
}

#define SEL(seq, ack, opt) ((uint8_t) ((seq) | ((ack) << 2) | ((opt) << 4)))
#define F_FIN 0x01
#define F_SYN 0x02
#define F_RST 0x04
#define F_PSH 0x08
#define F_ACK 0x10

static const uint8_t app_server = FZ_A_ACCEPT | FZ_A_CONSUME | FZ_A_ECHO | FZ_A_CLOSE_ON_FIN | FZ_A_UDP_ECHO;

static void gen_raw(void)
{
	uint32_t n, i;
	static uint8_t dg[9000];

	begin(0, 0, app_server);
	op_frame(fr, arp(fr, 1, mac_bcast, IP_PEER, IP_SELF));
	save("arp_request");

	begin(0, 0, app_server);
	b8(FZ_OP_ARP_REQUEST); b8(2);
	op_frame(fr, arp(fr, 2, mac_self, IP_PEER, IP_SELF));
	op_frame(fr, arp(fr, 2, mac_bcast, IP_PEER, IP_PEER)); /* gratuitous */
	op_frame(fr, arp(fr, 1, mac_bcast, IP_PEER, 0x0a000009U)); /* not for us */
	save("arp_reply_and_gratuitous");

	begin(0, 0, app_server);
	op_frame(fr, icmp_echo(fr, 56, NULL, 0));
	n = icmp_echo(fr, 20, NULL, 0);
	fr[14 + 20] = 0; /* an echo reply (the target fixes the checksum) */
	op_frame(fr, n);
	b8(FZ_OP_FRAME); b8(FZ_FR_L2_SKIP); b16(n); bytes(fr, n);
	save("icmp_echo");

	begin(0x08, 0xff, app_server); /* MTU 9000, every offload */
	op_frame(fr, icmp_echo(fr, 8000, NULL, 0));
	save("icmp_echo_jumbo_offload");

	{
		static const uint8_t opts[8] = { 1, 7, 7, 4, 0, 0, 0, 0 }; /* NOP, record route (empty), EOL */
		begin(0, 0, app_server);
		op_frame(fr, icmp_echo(fr, 32, opts, 8));
		save("icmp_echo_ip_options");
	}

	/* an ICMP echo of 2000 bytes in two fragments, in order then reversed */
	for (i = 0; i < 2000 + 8; i++)
		dg[i] = (uint8_t) i;
	memset(dg, 0, 8);
	dg[0] = 8;
	put16(dg + 4, 0x55);
	put16(dg + 2, fold(sum(dg, 2008, 0)));
	begin(0, 0, app_server);
	op_frame(fr, frag(fr, 1, 77, dg, 0, 1480, 1));
	op_frame(fr, frag(fr, 1, 77, dg, 1480, 528, 0));
	op_frame(fr, frag(fr, 1, 78, dg, 1480, 528, 0));
	op_frame(fr, frag(fr, 1, 78, dg, 0, 1480, 1));
	op_frame(fr, frag(fr, 1, 79, dg, 0, 1480, 1)); /* never completed: times out */
	op_clock(165);
	save("ip_fragments_icmp");

	begin(0, 0, app_server);
	op_frame(fr, udp(fr, IP_SELF, 5555, 7, 100, 0));
	op_frame(fr, udp(fr, IP_SELF, 5555, 9, 10, 1));
	op_frame(fr, udp(fr, 0xffffffffU, 68, 67, 300, 0));
	save("udp_datagrams");

	begin(FZ_CFG_UDP_FILTER, 0, app_server);
	op_frame(fr, udp(fr, IP_SELF, 5555, 7, 20, 0));
	op_frame(fr, udp(fr, IP_SELF, 5555, 9999, 20, 0)); /* closed: port unreachable */
	op_frame(fr, udp(fr, IP_SELF, 5555, 9998, 20, 0));
	save("udp_port_filter");

	begin(0, 0, app_server);
	b8(FZ_OP_UDP_SEND); b16(4000); b8(1); b8(7); /* fragmented by the stack */
	b8(FZ_OP_FEATURES); b8(0xff);
	b8(FZ_OP_UDP_SEND); b16(1000); b8(2); b8(7);
	b8(FZ_OP_UDP_SEND); b16(65500); b8(3); b8(7); /* too large: refused */
	b8(FZ_OP_ARP_REQUEST); b8(254);
	save("udp_send_and_arp_request");

	begin(0, 0, app_server);
	op_frame(fr, tcp(fr, 40000, 80, 1000, 0, F_SYN, syn_opts_ws, 24, 0));
	op_frame(fr, tcp(fr, 40001, 81, 1000, 0, F_SYN, NULL, 0, 0)); /* accepted: app accepts any port */
	op_frame(fr, tcp(fr, 40002, 80, 5000, 77, F_ACK | F_FIN, NULL, 0, 0)); /* no connection: RST */
	op_frame(fr, tcp(fr, 40003, 80, 5000, 0, F_RST, NULL, 0, 0));
	op_frame(fr, tcp(fr, 40000, 80, 1000, 0, F_SYN, syn_opts_ws, 24, 0)); /* retransmitted SYN */
	op_clock(101);
	op_clock(105);
	save("tcp_syn_options_rst");

	begin(0, 0, 0); /* the app accepts only port 80 */
	op_frame(fr, tcp(fr, 40000, 22, 1000, 0, F_SYN, syn_opts, 20, 0));
	save("tcp_syn_refused");

	/* active open answered by a fuzzer-written SYN-ACK on the live connection */
	begin(FZ_CFG_CUBIC, 0, app_server | FZ_A_GREET);
	b8(FZ_OP_TCP_CONNECT); b8(0); b16(33333); b16(8080);
	b8(FZ_OP_TCP_SEG); b8(0); b8(F_SYN | F_ACK); b8(SEL(2, 2, FZ_SEG_OPT_SYN)); b16(0); b16(0); b16(65535); b16(0);
	b16(1460); b8(7);
	op_seg(0, F_ACK | F_PSH, SEL(0, 2, FZ_SEG_OPT_TS), 0, 0, 1000, 300);
	op_tcp_send(0, 3000);
	b8(FZ_OP_TCP_SEND); b8(0); b16(0); b8(0);	/* empty: refused */
	b8(FZ_OP_TCP_SEND); b8(0); b16(100); b8(0x80);	/* chained: refused */
	op_seg(0, F_ACK, SEL(0, 2, FZ_SEG_OPT_TS), 0, 0, 1000, 0);
	op_clock(1);
	op_seg(0, F_ACK | F_FIN, SEL(0, 2, FZ_SEG_OPT_TS), 0, 0, 1000, 0);
	op_seg(0, F_ACK, SEL(0, 2, FZ_SEG_OPT_TS), 0, 0, 1000, 0);
	op_clock(150);
	save("tcp_active_open_exchange_close");

	/* SYN flood on a tiny pool: SYN cookies, then the cookie's ACK */
	begin(3, 0, app_server);
	b8(FZ_OP_SYN_FLOOD); b8(7); b8(0);
	op_seg(0x80 | 5, F_ACK, SEL(0, 0, FZ_SEG_OPT_NONE), 0, 0, 65535, 0);
	op_seg(0x80 | 6, F_ACK | F_PSH, SEL(0, 0, FZ_SEG_OPT_NONE), 0, 0, 65535, 100);
	op_clock(20);
	save("tcp_syn_flood_cookies");

	/* fragments built by the target: every order option */
	for (n = 0; n < 6; n++) {
		static const uint8_t orders[6] = { 0, FZ_FRAG_REVERSE, FZ_FRAG_DUPLICATE, FZ_FRAG_OVERLAP, FZ_FRAG_DROP_ONE, FZ_FRAG_MF_LAST | FZ_FRAG_BAD_CSUM };
		char name[64];
		begin(0, n & 1 ? 0xff : 0, app_server);
		b8(FZ_OP_FRAGS); b8(n & 3); b16(3000 + 100 * n); b8(184); b8(orders[n]);
		b8(FZ_OP_FRAGS); b8(4 | ((n + 1) & 3)); b16(500); b8(15); b8(orders[n]);
		op_clock(170);
		snprintf(name, sizeof(name), "frags_%u", n);
		save(name);
	}

	/* a chained (LRO-like) delivery and a NIC that flags bad checksums */
	begin(0, FZ_F_IP4_RX | FZ_F_TCP_RX | FZ_F_UDP_RX, app_server);
	n = udp(fr, IP_SELF, 5555, 7, 600, 0);
	b8(FZ_OP_FRAME); b8(FZ_FR_CHAIN); b8(49); b16(n); bytes(fr, n);
	b8(FZ_OP_FRAME); b8(FZ_FR_NIC_CSUM_BAD); b16(n); bytes(fr, n);
	b8(FZ_OP_BATCH); b8(1);
	b8(0); b16(n); bytes(fr, n);
	n = icmp_echo(fr, 100, NULL, 0);
	b8(FZ_FR_ADDRESS | FZ_FR_FIX_IP_CSUM | FZ_FR_FIX_L4_CSUM); b16(n); bytes(fr, n);
	save("chain_batch_offload");

	/* allocation failures while answering */
	begin(0, 0, app_server);
	b8(FZ_OP_ALLOC_FAIL); b8(2);
	op_frame(fr, icmp_echo(fr, 3000 - 28, NULL, 0));
	b8(FZ_OP_UDP_SEND); b16(5000); b8(1); b8(7);
	op_frame(fr, tcp(fr, 40000, 80, 1000, 0, F_SYN, syn_opts, 20, 0));
	save("alloc_failures");
}

/* TCP mode: one input per state, passive and active, with and without options. */
static void gen_tcp(void)
{
	static const char *const names[FZ_ST_COUNT] = {
		"established", "data_in_flight", "ooo_queued", "peer_zero_window", "our_window_full", "fin_wait_1",
		"fin_wait_2", "close_wait", "closing", "last_ack", "time_wait", "syn_received", "syn_sent", "recovery"
	};
	uint8_t st, v;
	for (st = 0; st < FZ_ST_COUNT; st++)
		for (v = 0; v < 2; v++) {
			char name[80];
			uint8_t active = st == FZ_ST_SYN_SENT ? 1 : st == FZ_ST_SYN_RECEIVED ? 0 : v;
			uint8_t opts = v ? 0x1e : (st & 1 ? 0x12 : 0x0a); /* all options, or MSS+TS / MSS+SACK */
			begin(FZ_CFG_TCP_MODE | (v ? 1 : 0), v ? 0xff : 0, app_server);
			b8(v);		/* 1 or 2 connections */
			b8(active | opts);
			b8(st);
			b8(3);
			if (v) {
				b8(0 | 0x1e | (7 << 5)); /* a passive one whose peer ISN wraps */
				b8(FZ_ST_DATA_IN_FLIGHT);
				b8(7);
			}
			/* then traffic on the first connection */
			op_seg(0, F_ACK | F_PSH, SEL(0, 2, FZ_SEG_OPT_TS), 0, 0, 65535, 500);
			op_seg(0, F_ACK, SEL(0, 2, FZ_SEG_OPT_TS_SACK), 0, 0, 65535, 0);
			b8(1); b16(100); b16(200);
			op_seg(0, F_ACK, SEL(0, 0, FZ_SEG_OPT_SACK), 0, 0, 65535, 0);
			b8(1); b16(1000); b16(1000);
			op_tcp_send(0, 2000);
			op_clock(20);
			op_seg(0, F_ACK | F_PSH, SEL(0, 2, FZ_SEG_OPT_TS), 1000, 0, 65535, 500); /* out of order */
			op_seg(0, F_ACK, SEL(0, 2, FZ_SEG_OPT_TS_OLD), 0, 0, 65535, 10);
			b16(5);
			op_clock(101);
			op_seg(0, F_ACK | F_FIN, SEL(0, 2, FZ_SEG_OPT_TS), 0, 0, 65535, 0);
			op_seg(0, F_ACK, SEL(0, 2, FZ_SEG_OPT_TS), 0, 0, 65535, 0);
			op_seg(0, F_RST, SEL(0, 2, FZ_SEG_OPT_NONE), 1, 0, 0, 0); /* challenge ACK */
			op_clock(1);
			b8(FZ_OP_ICMP_ERR); b8(0); b8(4); b16(1000); b16(0);
			op_seg(0, F_SYN, SEL(0, 2, FZ_SEG_OPT_SYN), 0, 0, 65535, 0);
			b16(536); b8(3);
			op_close(0);
			op_clock(130);
			op_clock(220);
			snprintf(name, sizeof(name), "tcp_%s_%s", names[st], v ? "active_opts" : "basic");
			if (st == FZ_ST_SYN_SENT || st == FZ_ST_SYN_RECEIVED)
				snprintf(name, sizeof(name), "tcp_%s_%u", names[st], v);
			save(name);
		}
}

int main(int argc, char **argv)
{
	if (argc != 2) {
		fprintf(stderr, "usage: gen_corpus DIR\n");
		return 2;
	}
	out_dir = argv[1];
	gen_raw();
	gen_tcp();
	printf("gen_corpus: %d inputs written to %s\n", files, out_dir);
	return 0;
}
