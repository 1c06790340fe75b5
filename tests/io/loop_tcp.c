/*
 * tests/io/loop_tcp.c — one TCP bulk transfer between two hosts of the loop
 * backend on the real stack, to hold the emulated NIC (checksum offload,
 * TSO, LRO chains, scatter-gather) and the link faults against real TCP.
 *
 * Host 1 (-s BYTES): accepts on port 5001, checks every byte of the stream
 * against the pattern (payloads may be chains when the NIC hands over LRO
 * frames), consumes each packet at once, closes when the peer has.
 * Host 2 (-c IP -b BYTES [-z CHUNK]): resolves host 1 by ARP, connects,
 * sends BYTES in packets of up to CHUNK bytes, closes.
 *
 *   loop_tcp [loop options] -- -s 1000000 -- -c 10.0.0.1 -b 1000000
 *
 * Prints "tcp: server verified N of N bytes, 0 bad" and the loop's leak check.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <getopt.h>
#include <arpa/inet.h>

#define __iip_memcpy memcpy
#define __iip_memset memset
#define __iip_memcmp memcmp
#define __iip_memmove memmove
#define IIP_OPS_DEBUG_PRINTF printf
#define APP_IIP_OPS_UTIL_NOW_NS_NONE
#include "../../stack/main.c"

#define PORT 5001

struct tcp_app {
	int server;
	uint64_t bytes;           /* to send (client) or to expect (server) */
	uint16_t chunk;
	uint32_t peer_be;
	uint8_t peer_mac[6];
	int resolved, connecting, connected, closed, close_sent, failed;
	uint64_t arp_last_ns;
	uint32_t arp_tries;
	void *handle;
	uint64_t sent, rx_ok, rx_bad, acked_pkts, payload_calls, chained_payloads, refused;
	uint64_t start_ns, end_ns;
};

static struct tcp_app *app_of(void *opaque) { return ((void **) opaque)[1]; }

static uint64_t now_ns(void *opaque)
{
	uint32_t t[3];
	iip_ops_util_now_ns(t, opaque);
	return (((uint64_t) t[0] << 32 | t[1]) * 1000000000ull) + t[2];
}

static uint8_t pattern(uint64_t off) { return (uint8_t) (off * 29u + (off >> 11) * 3u + 1u); }

static void *__app_init(int argc, char *const *argv)
{
	struct tcp_app *a = calloc(1, sizeof(*a));
	struct in_addr in;
	int opt;
	a->chunk = 1448;
	while ((opt = getopt(argc, argv, "s:c:b:z:")) != -1) {
		switch (opt) {
		case 's': a->server = 1; a->bytes = strtoull(optarg, NULL, 10); break;
		case 'c':
			if (inet_pton(AF_INET, optarg, &in) != 1) {
				fprintf(stderr, "loop_tcp: bad -c %s\n", optarg);
				exit(2);
			}
			a->peer_be = in.s_addr;
			break;
		case 'b': a->bytes = strtoull(optarg, NULL, 10); break;
		case 'z': a->chunk = (uint16_t) atoi(optarg); break;
		default:
			fprintf(stderr, "usage: -s BYTES | -c IP -b BYTES [-z CHUNK]\n");
			exit(2);
		}
	}
	if (!a->chunk || a->chunk > 1900 || !a->bytes || (!a->server && !a->peer_be)) {
		fprintf(stderr, "loop_tcp: need -s BYTES or -c IP -b BYTES, CHUNK 1..1900\n");
		exit(2);
	}
	return a;
}

static void *__app_thread_init(void *ws, uint16_t core, void *opaque) { (void) ws; (void) core; return app_of(opaque); }

static void pump(void *ws, struct tcp_app *a, void *opaque)
{
	while (a->connected && a->sent < a->bytes) {
		void *p = iip_ops_pkt_alloc(opaque);
		uint8_t *d;
		uint32_t n = a->bytes - a->sent < a->chunk ? (uint32_t) (a->bytes - a->sent) : a->chunk, i;
		if (!p)
			return;
		d = iip_ops_pkt_get_data(p, opaque);
		for (i = 0; i < n; i++)
			d[i] = pattern(a->sent + i);
		iip_ops_pkt_set_len(p, (uint16_t) n, opaque);
		if (iip_tcp_send(ws, a->handle, p, 0, opaque)) { /* refused: still ours */
			iip_ops_pkt_free(p, opaque);
			a->refused++;
			return;
		}
		a->sent += n;
	}
	if (a->connected && a->sent == a->bytes && !a->close_sent) {
		iip_tcp_close(ws, a->handle, opaque);
		a->close_sent = 1;
	}
}

static void __app_loop(void *ws, uint8_t mac[], uint32_t ip, uint32_t *next_us, void *opaque)
{
	struct tcp_app *a = app_of(opaque);
	uint64_t now = now_ns(opaque);
	if (a->server) { /* close once everything arrived (no FIN event in the API) */
		if (a->handle && !a->close_sent && a->rx_ok + a->rx_bad >= a->bytes) {
			iip_tcp_close(ws, a->handle, opaque);
			a->close_sent = 1;
		}
		return;
	}
	if (a->closed || a->failed)
		return;
	if (!a->resolved) {
		if (!a->arp_last_ns || now - a->arp_last_ns >= 100000000ull) {
			if (a->arp_tries++ == 50) {
				a->failed = 1;
				return;
			}
			iip_arp_request(ws, mac, ip, a->peer_be, opaque);
			a->arp_last_ns = now;
		}
		if (*next_us > 100000)
			*next_us = 100000;
		return;
	}
	if (!a->connecting) {
		a->connecting = 1;
		a->start_ns = now;
		if (iip_tcp_connect(ws, mac, ip, htons(40001), a->peer_mac, a->peer_be, htons(PORT), opaque))
			a->failed = 1;
		return;
	}
	pump(ws, a, opaque);
}

static uint8_t __app_should_stop(void *opaque)
{
	struct tcp_app *a = app_of(opaque);
	return a->closed || a->failed;
}

static void __app_exit(void *g)
{
	struct tcp_app *a = g;
	if (a->server) {
		double s = a->end_ns > a->start_ns ? (double) (a->end_ns - a->start_ns) / 1e9 : 0;
		printf("tcp: server verified %llu of %llu bytes, %llu bad, %llu payload callbacks (%llu chained), %.6f s%s\n",
		       (unsigned long long) a->rx_ok, (unsigned long long) a->bytes, (unsigned long long) a->rx_bad,
		       (unsigned long long) a->payload_calls, (unsigned long long) a->chained_payloads, s,
		       a->closed ? ", closed" : ", NOT closed");
	} else {
		printf("tcp: client sent %llu of %llu bytes, %llu packets acked, %llu sends refused (queue), %s\n",
		       (unsigned long long) a->sent, (unsigned long long) a->bytes, (unsigned long long) a->acked_pkts,
		       (unsigned long long) a->refused, a->failed ? "FAILED" : a->closed ? "closed" : "NOT closed");
	}
	free(a);
}

static void iip_ops_arp_reply(void *ctx, void *pkt, void *opaque)
{
	struct tcp_app *a = app_of(opaque);
	uint32_t sender;
	(void) ctx;
	memcpy(&sender, PB_ARP_IP_SENDER(pkt), 4);
	if (!a->server && sender == a->peer_be && !a->resolved) {
		memcpy(a->peer_mac, PB_ARP_HW_SENDER(pkt), 6);
		a->resolved = 1;
	}
}

static void iip_ops_icmp_reply(void *ctx, void *pkt, void *opaque) { (void) ctx; (void) pkt; (void) opaque; }

static uint8_t iip_ops_tcp_accept(void *ctx, void *pkt, void *opaque)
{
	(void) ctx;
	return app_of(opaque)->server && PB_TCP(pkt)->dst_be == htons(PORT);
}

static void *iip_ops_tcp_accepted(void *ctx, void *handle, void *pkt, void *opaque)
{
	struct tcp_app *a = app_of(opaque);
	(void) ctx; (void) pkt;
	a->handle = handle;
	a->start_ns = now_ns(opaque);
	return a;
}

static void *iip_ops_tcp_connected(void *ctx, void *handle, void *pkt, void *opaque)
{
	struct tcp_app *a = app_of(opaque);
	(void) pkt;
	a->handle = handle;
	a->connected = 1;
	pump(ctx, a, opaque);
	return a;
}

/* new in-order bytes: skip head_off at the front and tail_off at the end of
 * the TCP payload, which may continue over chained segments */
static void iip_ops_tcp_payload(void *ctx, void *handle, void *pkt, void *tcp_opaque, uint16_t head_off,
				uint16_t tail_off, void *opaque)
{
	struct tcp_app *a = tcp_opaque;
	uint32_t off = (uint32_t) (PB_TCP_PAYLOAD(pkt) - (uint8_t *) iip_ops_pkt_get_data(pkt, opaque)) + head_off;
	uint32_t len = (uint32_t) PB_TCP_PAYLOAD_LEN(pkt) - head_off - tail_off, pos = 0;
	void *s;
	a->payload_calls++;
	if (iip_ops_pkt_scatter_gather_chain_get_next(pkt, opaque))
		a->chained_payloads++;
	for (s = pkt; s && pos < len; s = iip_ops_pkt_scatter_gather_chain_get_next(s, opaque)) {
		const uint8_t *d = iip_ops_pkt_get_data(s, opaque);
		uint32_t n = iip_ops_pkt_get_len(s, opaque), i;
		if (off >= n) {
			off -= n;
			continue;
		}
		for (i = off; i < n && pos < len; i++, pos++) {
			if (d[i] == pattern(a->rx_ok + a->rx_bad))
				a->rx_ok++;
			else
				a->rx_bad++;
		}
		off = 0;
	}
	if (pos != len)
		a->rx_bad += len - pos;
	a->end_ns = now_ns(opaque);
	iip_tcp_rxbuf_consumed(ctx, handle, 1, opaque);
}

static void iip_ops_tcp_acked(void *ctx, void *handle, void *pkt, void *tcp_opaque, void *opaque)
{
	struct tcp_app *a = tcp_opaque;
	(void) handle; (void) pkt;
	a->acked_pkts++;
	pump(ctx, a, opaque);
}

static void iip_ops_tcp_closed(void *handle, uint8_t lm[], uint32_t li, uint16_t lp, uint8_t pm[], uint32_t pi,
			       uint16_t pp, void *tcp_opaque, void *opaque)
{
	struct tcp_app *a = app_of(opaque);
	(void) handle; (void) lm; (void) li; (void) lp; (void) pm; (void) pi; (void) pp;
	if (!tcp_opaque)
		a->failed = 1; /* the connection never opened */
	a->closed = 1;
	a->handle = NULL;
}

static void iip_ops_udp_payload(void *ctx, void *pkt, void *opaque) { (void) ctx; (void) pkt; (void) opaque; }

#include "../../io/loop/main.c"

int main(int argc, char *const *argv)
{
	return __iosub_main(argc, argv);
}
