/*
 * tests/io/loop_fake.c — the loop backend driven by a minimal fake stack, so
 * that the backend is tested on its own: UDP frames built here (checksums
 * left to the emulated NIC when it offers them, with the pseudo-header sum
 * in the field, as the stack does), chained payloads when scatter-gather is
 * on, received frames checked (NIC result or software), every byte of every
 * echoed datagram compared. Host 1 echoes, host 2 sends N datagrams and
 * resends those not answered in time (faults lose some).
 *
 * Host 2 can also send FRAMES big TCP-like frames with TSO marks (-t), which
 * host 1 checks byte by byte, recording the largest frame it got (cut by
 * the NIC's TSO, or whole through LRO).
 *
 * Usage: loop_fake [loop options] -- -s -- -c N [-t FRAMES]
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <arpa/inet.h>
#define IIP_OPS_DEBUG_PRINTF printf

/* ---- the fake stack: the API calls the backend uses --------------------- */
/* the integrator callbacks of seed 001, declared by the stack's own list */
#include "../../stack/ops.h"


struct fake_ws {
	uint16_t mtu;
	uint8_t key[16];
	uint64_t rx_bad_csum, rx_other;
};
static uint32_t iip_workspace_size(void) { return sizeof(struct fake_ws); }
static uint32_t iip_tcp_conn_size(void) { return 64; }
static uint32_t iip_pb_size(void) { return 32; }
static void iip_add_tcp_conn(void *c, void *conn) { (void) c; (void) conn; }
static void iip_add_pb(void *c, void *p) { (void) c; (void) p; }
static void iip_set_mtu(void *c, uint16_t mtu) { ((struct fake_ws *) c)->mtu = mtu; }
static void iip_set_isn_secret(void *c, const uint8_t key[16]) { memcpy(((struct fake_ws *) c)->key, key, 16); }

static uint16_t fake_sum(const uint8_t *p, uint32_t n, uint32_t s)
{
	uint32_t i;
	for (i = 0; i + 1 < n; i += 2)
		s += (uint32_t) (p[i] << 8 | p[i + 1]);
	if (n & 1)
		s += (uint32_t) p[n - 1] << 8;
	while (s >> 16)
		s = (s & 0xffff) + (s >> 16);
	return (uint16_t) s;
}

/* TCP test traffic: big frames sent with TSO; the receiver checks every byte
 * of the stream and how the frames arrived (cut by TSO, or whole by LRO) */
#define TCP_FRAME_PAYLOAD 20000u
static uint8_t tcp_byte(uint32_t off) { return (uint8_t) (off * 13u + (off >> 9)); }
static struct {
	uint64_t frames, bytes_ok, bytes_bad, bad_csum, max_frame;
} tcp_rx;

static void fake_tcp_input(void *pkt, uint8_t *f, void *opaque)
{
	uint8_t *ip = f + 14, *th = ip + 20;
	uint32_t tlen = (uint32_t) (ip[2] << 8 | ip[3]), hl = (uint32_t) (th[12] >> 4) * 4, seq, off = 0, k, pos = 0;
	uint32_t total = 0;
	int good;
	void *s;
	for (s = pkt; s; s = iip_ops_pkt_scatter_gather_chain_get_next(s, opaque))
		total += iip_ops_pkt_get_len(s, opaque);
	if (iip_ops_nic_feature_offload_tcp_rx_checksum(opaque)) {
		good = iip_ops_nic_offload_tcp_rx_checksum(pkt, opaque) && iip_ops_nic_offload_ip4_rx_checksum(pkt, opaque);
	} else { /* software, over the chain (odd boundaries handled by the byte loop) */
		uint32_t sum = 0, i = 0;
		for (s = pkt; s; s = iip_ops_pkt_scatter_gather_chain_get_next(s, opaque)) {
			const uint8_t *d = iip_ops_pkt_get_data(s, opaque);
			uint32_t n = iip_ops_pkt_get_len(s, opaque), j;
			for (j = 0; j < n; j++, i++)
				if (i >= 34 && i < 14 + tlen)
					sum += (i - 34) & 1 ? d[j] : (uint32_t) d[j] << 8;
		}
		sum += (uint32_t) (ip[12] << 8 | ip[13]) + (uint32_t) (ip[14] << 8 | ip[15]) +
		       (uint32_t) (ip[16] << 8 | ip[17]) + (uint32_t) (ip[18] << 8 | ip[19]) + 6u + (tlen - 20u);
		while (sum >> 16)
			sum = (sum & 0xffff) + (sum >> 16);
		good = sum == 0xffff;
	}
	if (!good) {
		tcp_rx.bad_csum++;
		return;
	}
	tcp_rx.frames++;
	if (total > tcp_rx.max_frame)
		tcp_rx.max_frame = total;
	seq = (uint32_t) th[4] << 24 | (uint32_t) th[5] << 16 | (uint32_t) th[6] << 8 | th[7];
	for (s = pkt; s; s = iip_ops_pkt_scatter_gather_chain_get_next(s, opaque)) {
		const uint8_t *d = iip_ops_pkt_get_data(s, opaque);
		uint32_t n = iip_ops_pkt_get_len(s, opaque);
		for (k = 0; k < n; k++, pos++) {
			if (pos < 34 + hl || pos >= 14 + tlen)
				continue;
			if (d[k] == tcp_byte(seq + off))
				tcp_rx.bytes_ok++;
			else
				tcp_rx.bytes_bad++;
			off++;
		}
	}
}

/* sends one TCP_FRAME_PAYLOAD-byte frame at stream offset seq, TSO-marked */
static void fake_tcp_send_big(uint8_t lmac[], uint32_t lip, uint8_t pmac[], uint32_t pip, uint32_t seq, void *opaque)
{
	void *h = iip_ops_pkt_alloc(opaque);
	uint8_t *f, *ip, *th;
	uint32_t done = 0, ps;
	if (!h)
		return;
	f = iip_ops_pkt_get_data(h, opaque);
	iip_ops_l2_hdr_craft(h, lmac, pmac, htons(0x0800), opaque);
	ip = f + 14;
	th = ip + 20;
	memset(ip, 0, 52);
	ip[0] = 0x45; ip[2] = (uint8_t) ((52 + TCP_FRAME_PAYLOAD) >> 8); ip[3] = (uint8_t) (52 + TCP_FRAME_PAYLOAD);
	ip[4] = 0x77; ip[8] = 64; ip[9] = 6;
	memcpy(ip + 12, &lip, 4);
	memcpy(ip + 16, &pip, 4);
	th[0] = 0x9c; th[1] = 0x40; th[3] = 80;
	th[4] = (uint8_t) (seq >> 24); th[5] = (uint8_t) (seq >> 16); th[6] = (uint8_t) (seq >> 8); th[7] = (uint8_t) seq;
	th[12] = 8 << 4; th[13] = 0x18; th[14] = 0xff; th[15] = 0xff;
	th[20] = 1; th[21] = 1; th[22] = 8; th[23] = 10; /* timestamps option */
	iip_ops_pkt_set_len(h, 66, opaque);
	while (done < TCP_FRAME_PAYLOAD) { /* payload in 1000-byte segments */
		void *p = iip_ops_pkt_alloc(opaque);
		uint8_t *d = iip_ops_pkt_get_data(p, opaque);
		uint32_t n = TCP_FRAME_PAYLOAD - done < 1000 ? TCP_FRAME_PAYLOAD - done : 1000, i;
		for (i = 0; i < n; i++)
			d[i] = tcp_byte(seq + done + i);
		iip_ops_pkt_set_len(p, (uint16_t) n, opaque);
		iip_ops_pkt_scatter_gather_chain_append(h, p, opaque);
		done += n;
	}
	/* pseudo-header sum without the length, as for TSO on real NICs */
	ps = fake_sum(ip + 12, 8, 0) + 6u;
	ps = fake_sum((uint8_t[2]) { 0, 0 }, 2, ps);
	th[16] = (uint8_t) (ps >> 8); th[17] = (uint8_t) ps;
	iip_ops_nic_offload_ip4_tx_checksum_mark(h, opaque);
	iip_ops_nic_offload_tcp_tx_checksum_mark(h, opaque);
	iip_ops_nic_offload_tcp_tx_tso_mark(h, opaque);
	iip_ops_l2_push(h, opaque);
}

/* the rest of the API: not used by this test, present because the
 * backend references every call */
static void iip_arp_request(void *c, uint8_t m[], uint32_t a, uint32_t b, void *o) { (void) c; (void) m; (void) a; (void) b; (void) o; }
static uint16_t iip_tcp_connect(void *c, uint8_t lm[], uint32_t li, uint16_t lp, uint8_t pm[], uint32_t pi, uint16_t pp, void *o)
{ (void) c; (void) lm; (void) li; (void) lp; (void) pm; (void) pi; (void) pp; (void) o; return 1; }
static uint16_t iip_tcp_close(void *c, void *h, void *o) { (void) c; (void) h; (void) o; return 1; }
static uint16_t iip_tcp_send(void *c, void *h, void *p, uint16_t f, void *o) { (void) c; (void) h; (void) p; (void) f; (void) o; return 1; }
static void iip_tcp_rxbuf_consumed(void *c, void *h, uint16_t n, void *o) { (void) c; (void) h; (void) n; (void) o; }

/* frames are linear here unless the NIC did LRO, which UDP never gets */
static uint16_t iip_run(void *ctx, uint8_t mac[], uint32_t ip4_be, void *pkt[], uint16_t cnt, uint32_t *next_us,
			void *opaque)
{
	struct fake_ws *ws = ctx;
	uint16_t i;
	(void) mac;
	for (i = 0; i < cnt; i++) {
		uint8_t *f = iip_ops_pkt_get_data(pkt[i], opaque), *ip = f + 14, *udp;
		uint16_t len = iip_ops_pkt_get_len(pkt[i], opaque), tlen, ok_ip, ok_udp;
		if (len >= 54 && f[12] == 8 && f[13] == 0 && ip[0] == 0x45 && ip[9] == 6 && !memcmp(ip + 16, &ip4_be, 4)) {
			fake_tcp_input(pkt[i], f, opaque);
			iip_ops_pkt_free(pkt[i], opaque);
			continue;
		}
		if (len < 42 || f[12] != 8 || f[13] != 0 || ip[0] != 0x45 || ip[9] != 17 || memcmp(ip + 16, &ip4_be, 4) ||
		    (tlen = (uint16_t) (ip[2] << 8 | ip[3])) > len - 14 || tlen < 28) {
			ws->rx_other++;
			iip_ops_pkt_free(pkt[i], opaque);
			continue;
		}
		udp = ip + 20;
		if (iip_ops_nic_feature_offload_ip4_rx_checksum(opaque)) {
			ok_ip = iip_ops_nic_offload_ip4_rx_checksum(pkt[i], opaque);
			ok_udp = iip_ops_nic_offload_udp_rx_checksum(pkt[i], opaque);
		} else {
			uint32_t ps = fake_sum(ip + 12, 8, 0) + 17u + (tlen - 20u);
			ok_ip = fake_sum(ip, 20, 0) == 0xffff;
			ok_udp = (udp[6] == 0 && udp[7] == 0) || fake_sum(udp, tlen - 20u, ps) == 0xffff;
		}
		if (!ok_ip || !ok_udp || (uint16_t) (udp[4] << 8 | udp[5]) != tlen - 20) {
			ws->rx_bad_csum++;
			iip_ops_pkt_free(pkt[i], opaque);
			continue;
		}
		iip_ops_udp_payload(ctx, pkt[i], opaque);
		iip_ops_pkt_free(pkt[i], opaque);
	}
	*next_us = 1000;
	return 0;
}

/* pkt holds the payload at data; the header goes in a new packet in front */
static uint16_t iip_udp_send(void *ctx, uint8_t lmac[], uint32_t lip, uint16_t lport, uint8_t pmac[], uint32_t pip,
			     uint16_t pport, void *pkt, void *opaque)
{
	void *h = iip_ops_pkt_alloc(opaque);
	uint8_t *f, *ip, *udp;
	uint16_t plen = iip_ops_pkt_get_len(pkt, opaque), csum;
	uint32_t ps;
	(void) ctx;
	if (!h) {
		iip_ops_pkt_free(pkt, opaque);
		return 1;
	}
	f = iip_ops_pkt_get_data(h, opaque);
	iip_ops_l2_hdr_craft(h, lmac, pmac, htons(0x0800), opaque);
	ip = f + 14;
	udp = ip + 20;
	memset(ip, 0, 28);
	ip[0] = 0x45; ip[2] = (uint8_t) ((28 + plen) >> 8); ip[3] = (uint8_t) (28 + plen); ip[8] = 64; ip[9] = 17;
	memcpy(ip + 12, &lip, 4);
	memcpy(ip + 16, &pip, 4);
	memcpy(udp, &lport, 2);
	memcpy(udp + 2, &pport, 2);
	udp[4] = (uint8_t) ((8 + plen) >> 8); udp[5] = (uint8_t) (8 + plen);
	iip_ops_pkt_set_len(h, 42, opaque);
	if (iip_ops_nic_feature_offload_tx_scatter_gather(opaque)) {
		iip_ops_pkt_scatter_gather_chain_append(h, pkt, opaque);
	} else {
		memcpy(f + 42, iip_ops_pkt_get_data(pkt, opaque), plen);
		iip_ops_pkt_set_len(h, (uint16_t) (42 + plen), opaque);
		iip_ops_pkt_free(pkt, opaque);
	}
	ps = fake_sum(ip + 12, 8, 0) + 17u + 8u + plen;
	if (iip_ops_nic_feature_offload_udp_tx_checksum(opaque)) {
		ps = fake_sum((uint8_t[2]) { 0, 0 }, 2, ps); /* fold */
		udp[6] = (uint8_t) (ps >> 8); udp[7] = (uint8_t) ps;
		iip_ops_nic_offload_ip4_tx_checksum_mark(h, opaque);
		iip_ops_nic_offload_udp_tx_checksum_mark(h, opaque);
	} else {
		uint8_t tmp[2048];
		uint32_t n = 0;
		void *s;
		for (s = h; s; s = iip_ops_pkt_scatter_gather_chain_get_next(s, opaque)) {
			memcpy(tmp + n, iip_ops_pkt_get_data(s, opaque), iip_ops_pkt_get_len(s, opaque));
			n += iip_ops_pkt_get_len(s, opaque);
		}
		csum = (uint16_t) ~fake_sum(tmp + 34, n - 34, ps);
		if (!csum)
			csum = 0xffff;
		udp[6] = (uint8_t) (csum >> 8); udp[7] = (uint8_t) csum;
		csum = (uint16_t) ~fake_sum(ip, 20, 0);
		ip[10] = (uint8_t) (csum >> 8); ip[11] = (uint8_t) csum;
	}
	iip_ops_l2_push(h, opaque);
	return 0;
}

/* ---- the fake app ------------------------------------------------------- */
#define APP_IIP_OPS_UTIL_NOW_NS_NONE
#include "../../io/loop/main.c"

#define NMAX 4096
struct app {
	int server, n, answered, sent_all, tcp_frames;
	uint64_t bytes_checked, bad, dup_replies;
	uint64_t last_sent_ns[NMAX];
	uint8_t got[NMAX];
};

static uint16_t dlen(int seq) { return (uint16_t) (1 + (seq * 37) % 1400); }
static uint8_t dbyte(int seq, int i) { return (uint8_t) (seq * 131 + i * 7); }

static void *__app_init(int argc, char *const *argv)
{
	struct app *a = calloc(1, sizeof(*a));
	int opt;
	while ((opt = getopt(argc, argv, "sc:t:")) != -1) {
		if (opt == 's')
			a->server = 1;
		else if (opt == 't' && atoi(optarg) > 0 && atoi(optarg) <= 1000)
			a->tcp_frames = atoi(optarg);
		else if (opt == 'c' && atoi(optarg) > 0 && atoi(optarg) <= NMAX)
			a->n = atoi(optarg);
		else {
			fprintf(stderr, "app: usage: -s | -c N (1..%d) [-t FRAMES]\n", NMAX);
			exit(2);
		}
	}
	return a;
}

static void *__app_thread_init(void *ws, uint16_t core, void *opaque) { (void) ws; (void) core; return ((void **) opaque)[1]; }

static void send_one(void *ws, uint8_t mac[], uint32_t ip, int seq, void *opaque)
{
	struct io_pkt *p = iip_ops_pkt_alloc(opaque);
	uint8_t peer[6] = { 2, 0, 0, 0, 0, 1 };
	uint32_t pip = htonl(0x0a000001);
	uint16_t i, n = dlen(seq);
	if (!p)
		return;
	memcpy(p->data, &seq, 4);
	for (i = 4; i < n + 4; i++)
		p->data[i] = dbyte(seq, i);
	iip_ops_pkt_set_len(p, (uint16_t) (n + 4), opaque);
	iip_udp_send(ws, mac, ip, htons(9000), peer, pip, htons(7), p, opaque);
}

static void __app_loop(void *ws, uint8_t mac[], uint32_t ip, uint32_t *next_us, void *opaque)
{
	struct app *a = ((void **) opaque)[1];
	uint64_t now = loop_now();
	int s, burst = 0;
	if (a->server)
		return;
	if (a->tcp_frames && !a->sent_all) {
		uint8_t peer[6] = { 2, 0, 0, 0, 0, 1 };
		for (s = 0; s < a->tcp_frames; s++)
			fake_tcp_send_big(mac, ip, peer, htonl(0x0a000001), (uint32_t) s * TCP_FRAME_PAYLOAD, opaque);
		a->sent_all = 1;
	}
	for (s = 0; s < a->n && burst < 64; s++) {
		if (a->got[s] || (a->last_sent_ns[s] && now - a->last_sent_ns[s] < 20000000)) /* resend after 20 ms */
			continue;
		send_one(ws, mac, ip, s, opaque);
		a->last_sent_ns[s] = now;
		burst++;
	}
	if (*next_us > 1000)
		*next_us = 1000;
}

static void iip_ops_udp_payload(void *ws, void *pkt, void *opaque)
{
	struct app *a = ((void **) opaque)[1];
	struct io_pkt *p = pkt;
	uint8_t *f = p->data, *ip = f + 14, *udp = ip + 20, *pl = udp + 8;
	uint16_t plen = (uint16_t) ((udp[4] << 8 | udp[5]) - 8);
	int seq, i, ok = 1;
	if (a->server) { /* echo the payload back to the sender */
		struct io_pkt *r = iip_ops_pkt_alloc(opaque);
		uint32_t src, dst;
		uint16_t sport, dport;
		if (!r)
			return;
		memcpy(r->data, pl, plen);
		iip_ops_pkt_set_len(r, plen, opaque);
		memcpy(&src, ip + 12, 4);
		memcpy(&sport, udp, 2);
		memcpy(&dport, udp + 2, 2);
		memcpy(&dst, ip + 16, 4);
		iip_udp_send(ws, f, dst, dport, f + 6, src, sport, r, opaque);
		return;
	}
	if (plen < 4) {
		a->bad++;
		return;
	}
	memcpy(&seq, pl, 4);
	if (seq < 0 || seq >= a->n || plen != dlen(seq) + 4) {
		a->bad++;
		return;
	}
	for (i = 4; i < plen; i++)
		ok &= pl[i] == dbyte(seq, i);
	if (!ok) {
		a->bad++;
		return;
	}
	if (a->got[seq]) {
		a->dup_replies++;
		return;
	}
	a->got[seq] = 1;
	a->answered++;
	a->bytes_checked += plen;
}

static uint8_t __app_should_stop(void *opaque)
{
	struct app *a = ((void **) opaque)[1];
	return a->server || (a->answered == a->n &&
			     tcp_rx.bytes_ok + tcp_rx.bytes_bad >= (uint64_t) a->tcp_frames * TCP_FRAME_PAYLOAD);
}

static void __app_exit(void *g)
{
	struct app *a = g;
	if (!a->server)
		printf("app: %d/%d datagrams echoed, %llu bytes checked, %llu bad, %llu duplicate replies\n", a->answered,
		       a->n, (unsigned long long) a->bytes_checked, (unsigned long long) a->bad,
		       (unsigned long long) a->dup_replies);
	if (a->tcp_frames)
		printf("app: tcp: %llu frames, largest %llu bytes, %llu bytes verified, %llu bad bytes, %llu bad checksums\n",
		       (unsigned long long) tcp_rx.frames, (unsigned long long) tcp_rx.max_frame,
		       (unsigned long long) tcp_rx.bytes_ok, (unsigned long long) tcp_rx.bytes_bad,
		       (unsigned long long) tcp_rx.bad_csum);
	free(a);
}

/* the ops this fake stack never calls, referenced so -Werror stays quiet */
static void *iip_ops_tcp_accepted(void *c, void *h, void *p, void *o) { (void) c; (void) h; (void) p; (void) o; return NULL; }
static void *iip_ops_tcp_connected(void *c, void *h, void *p, void *o) { (void) c; (void) h; (void) p; (void) o; return NULL; }
static uint8_t iip_ops_tcp_accept(void *c, void *p, void *o) { (void) c; (void) p; (void) o; return 0; }
static void iip_ops_tcp_payload(void *c, void *h, void *p, void *t, uint16_t a, uint16_t b, void *o) { (void) c; (void) h; (void) p; (void) t; (void) a; (void) b; (void) o; }
static void iip_ops_tcp_acked(void *c, void *h, void *p, void *t, void *o) { (void) c; (void) h; (void) p; (void) t; (void) o; }
static void iip_ops_tcp_closed(void *h, uint8_t a[], uint32_t b, uint16_t c, uint8_t d[], uint32_t e, uint16_t f, void *t, void *o) { (void) h; (void) a; (void) b; (void) c; (void) d; (void) e; (void) f; (void) t; (void) o; }
static void iip_ops_arp_reply(void *c, void *p, void *o) { (void) c; (void) p; (void) o; }
static void iip_ops_icmp_reply(void *c, void *p, void *o) { (void) c; (void) p; (void) o; }

int main(int argc, char **argv)
{
	int rc;
	(void) iip_ops_tcp_accepted; (void) iip_ops_tcp_connected; (void) iip_ops_tcp_accept; (void) iip_ops_tcp_payload;
	(void) iip_ops_tcp_acked; (void) iip_ops_tcp_closed; (void) iip_ops_arp_reply; (void) iip_ops_icmp_reply;
	(void) helper_ip4_get_connection_affinity; (void) iip_ops_l2_skip; (void) iip_ops_l2_hdr_len;
	(void) iip_ops_l2_hdr_src_ptr; (void) iip_ops_l2_hdr_dst_ptr; (void) iip_ops_l2_ethertype_be;
	(void) iip_ops_l2_addr_len; (void) iip_ops_l2_broadcast_addr; (void) iip_ops_arp_lhw; (void) iip_ops_arp_lproto;
	(void) iip_ops_pkt_increment_head; (void) iip_ops_pkt_decrement_tail; (void) iip_ops_pkt_clone;
	(void) iip_ops_nic_feature_offload_tcp_tx_checksum;
	(void) iip_ops_nic_feature_offload_tcp_tx_tso; (void) iip_ops_nic_feature_offload_udp_rx_checksum;
	(void) iip_ops_nic_feature_offload_udp_tx_tso; (void) iip_ops_nic_feature_offload_ip4_tx_checksum;
	(void) iip_ops_nic_offload_udp_tx_tso_mark;
	(void) iip_ops_util_now_ns;
	rc = __iosub_main(argc, argv);
	return rc;
}
