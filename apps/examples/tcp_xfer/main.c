/*
 * apps/examples/tcp_xfer — one TCP transfer between the iip stack and any
 * peer (the Linux kernel with socat / nc, or another iip program), with
 * plain bytes on the wire so that ordinary tools can be the other side.
 *
 * What it sends: -n BYTES of the documented pattern (the same as
 * apps/examples/http_server's body), byte i = (uint8_t) (i * 131 + (i >> 11)).
 * What it receives: every byte goes into a SHA-256 (printed at the end, to
 * compare with `sha256sum` on the sender's side); with -x BYTES it must also
 * be exactly BYTES of the pattern, checked byte by byte (the first wrong
 * offset is printed); with -T the received bytes are printed as text (e.g.
 * the line `sha256sum` sent back).
 *
 * Half-close, both orders:
 *   default  the program closes its sending side (FIN) as soon as its -n
 *            bytes are queued, and keeps receiving until the peer closes;
 *   -a       it sends nothing until the peer has closed its side (FIN
 *            received), then sends its -n bytes and closes: the stack
 *            sends in CLOSE-WAIT.
 * The run is good when: the connection was established, every byte sent was
 * acknowledged, both FINs were exchanged without a reset or time-out, and
 * the received bytes passed the -x check when asked for.
 *
 * Options (after the backend's "--"):
 *   client: -s IP -p PORT [-P LOCAL_PORT]      server: -p PORT (one connection)
 *   -n BYTES  bytes to send (suffix k, m, g; default 0)
 *   -x BYTES  expect exactly BYTES of the pattern from the peer
 *   -a        send only after the peer's FIN        -T  print what was received
 *   -q PKTS   packets queued but not yet acknowledged, at most (default 2048;
 *             keep it well below the backend's packet buffers)
 * Exit status: 0 good, 1 the transfer failed, 2 bad options.
 *
 * One thread (one backend queue): the transfer is one connection.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <getopt.h>
#include <unistd.h>
#include <arpa/inet.h>

#define __iip_memcpy memcpy
#define __iip_memset memset
#define __iip_memcmp memcmp
#define __iip_memmove memmove
#define IIP_OPS_DEBUG_PRINTF printf

/* the backend's clock */
#define APP_IIP_OPS_UTIL_NOW_NS_NONE

#ifndef IIP_MAIN_C
#define IIP_MAIN_C "../../../stack/main.c"
#endif
#include IIP_MAIN_C

#include "sha256.h"

#define TX_ARP_RETRY_NS 100000000ull    /* 100 ms */
#define TX_ARP_TRIES 50
#define TX_CONNECT_RETRY_NS 200000000ull /* a refused SYN (listener not up yet): try again */
#define TX_CONNECT_TRIES 25
#define TX_RETRY_US 200u                 /* blocked on the pool: come back soon */
#define TX_TEXT_MAX 4096u

static int tx_result_ok; /* set by __app_exit, read by main */

struct tx_app {
	/* options */
	int client;
	uint32_t peer_be;
	uint16_t port, local_port;
	uint64_t tx_total;
	int expect_set;
	uint64_t expect;
	int after_fin, print_text;
	uint32_t max_unacked;
	/* the connection */
	void *handle;
	int connecting, established, closed, we_closed, peer_fin;
	uint32_t connect_tries;
	uint64_t connect_at_ns;
	/* sending */
	uint64_t tx_off, tx_acked, tx_after_peer_fin;
	uint32_t unacked_pkts;
	void *pending;                   /* built, refused by the stack: ours, sent later */
	uint64_t refused;
	/* receiving */
	uint64_t rx_bytes, rx_after_our_fin, rx_mismatch, rx_first_bad;
	struct sha256 sha;
	char text[TX_TEXT_MAX];
	uint32_t text_len;
	/* addresses */
	uint8_t mac[6], peer_mac[6];
	uint32_t ip4_be;
	int resolved;
	uint32_t arp_tries;
	uint64_t arp_last_ns;
	/* outcome */
	int fatal, done;
	void *workspace;
	struct iip_stats st0;
	uint64_t t_established, t_first_tx, t_last_rx, t_all_acked, t_closed;
	uint32_t threads;
};

static struct tx_app *tx_of(void *opaque)
{
	return (struct tx_app *) ((void **) opaque)[1];
}

static uint64_t tx_now(void *opaque)
{
	uint32_t t[3];
	iip_ops_util_now_ns(t, opaque);
	return (((uint64_t) t[0] << 32 | t[1]) * 1000000000ull) + t[2];
}

/* ---- the pattern ------------------------------------------------------------------ */

/*
 * Within one 2048-byte block k the pattern is (uint8_t) (i * 131 + k):
 * filling and checking block by block keeps the inner loops simple enough
 * for the compiler to vectorise (a gigabyte costs well under a second).
 */
static void tx_fill(uint64_t off, uint8_t *p, uint32_t n)
{
	while (n) {
		uint32_t run = 2048 - (uint32_t) (off & 2047), j;
		uint8_t k = (uint8_t) (off >> 11), base = (uint8_t) (off * 131u);
		if (run > n)
			run = n;
		for (j = 0; j < run; j++)
			p[j] = (uint8_t) (base + j * 131u + k);
		p += run;
		off += run;
		n -= run;
	}
}

/* wrong bytes of p[0..n) at stream offset off; *first gets the first one */
static uint64_t tx_check(uint64_t off, const uint8_t *p, uint32_t n, uint64_t *first)
{
	uint64_t bad = 0;
	while (n) {
		uint32_t run = 2048 - (uint32_t) (off & 2047), j, wrong = 0;
		uint8_t k = (uint8_t) (off >> 11), base = (uint8_t) (off * 131u);
		if (run > n)
			run = n;
		for (j = 0; j < run; j++)
			wrong += p[j] != (uint8_t) (base + j * 131u + k);
		if (wrong) {
			if (!bad)
				for (j = 0; j < run; j++)
					if (p[j] != (uint8_t) (base + j * 131u + k)) {
						*first = off + j;
						break;
					}
			bad += wrong;
		}
		p += run;
		off += run;
		n -= run;
	}
	return bad;
}

/* ---- sending ---------------------------------------------------------------------- */

static int tx_may_send(const struct tx_app *a)
{
	return a->established && !a->closed && !a->we_closed && (!a->after_fin || a->peer_fin);
}

/* queues what the stack and the budget take, then the FIN when all is queued */
static void tx_pump(void *ws, struct tx_app *a, void *opaque)
{
	struct iip_tcp_info info;
	uint32_t chunk;
	if (!tx_may_send(a))
		return;
	iip_tcp_get_info(ws, a->handle, &info);
	chunk = info.snd_mss ? info.snd_mss : 536;
	while (a->pending || a->tx_off < a->tx_total) {
		void *pkt = a->pending;
		uint16_t len, rc;
		if (!pkt) {
			uint64_t left = a->tx_total - a->tx_off;
			if (a->unacked_pkts >= a->max_unacked)
				return;
			len = left < chunk ? (uint16_t) left : (uint16_t) chunk;
			pkt = iip_ops_pkt_alloc(opaque);
			if (!pkt)
				return;
			iip_ops_pkt_set_len(pkt, len, opaque);
			if (iip_ops_pkt_get_len(pkt, opaque) != len) {
				fprintf(stderr, "tcp_xfer: a packet buffer of this backend holds less than %u bytes\n", len);
				iip_ops_pkt_free(pkt, opaque);
				a->fatal = 1;
				return;
			}
			tx_fill(a->tx_off, iip_ops_pkt_get_data(pkt, opaque), len);
		}
		a->pending = NULL;
		len = iip_ops_pkt_get_len(pkt, opaque);
		rc = iip_tcp_send(ws, a->handle, pkt, 0, opaque);
		if (rc) {
			a->pending = pkt; /* still ours */
			a->refused++;
			if (rc == IIP_ERR_STATE || rc == IIP_ERR_INVALID) {
				fprintf(stderr, "tcp_xfer: iip_tcp_send refused with %u\n", rc);
				a->fatal = 1;
			}
			return;
		}
		if (!a->tx_off)
			a->t_first_tx = tx_now(opaque);
		a->tx_off += len;
		if (a->peer_fin)
			a->tx_after_peer_fin += len;
		a->unacked_pkts++;
	}
	/* everything queued: our FIN follows the data */
	if (iip_tcp_close(ws, a->handle, opaque)) {
		fprintf(stderr, "tcp_xfer: iip_tcp_close refused\n");
		a->fatal = 1;
	}
	a->we_closed = 1;
}

/* ---- options and the application contract ----------------------------------------- */

static void tx_usage(const char *prog)
{
	fprintf(stderr,
		"usage: %s [backend options] -- -s IP -p PORT [-P LOCAL_PORT] [options]   (client)\n"
		"       %s [backend options] -- -p PORT [options]                          (server, one connection)\n"
		"  -n BYTES  send BYTES of the pattern (suffix k, m, g; default 0)\n"
		"  -x BYTES  expect exactly BYTES of the pattern from the peer, every byte checked\n"
		"  -a        send only after the peer's FIN (the stack sends in CLOSE-WAIT)\n"
		"  -T        print the bytes received as text (at most %u)\n"
		"  -q PKTS   packets queued but unacknowledged, at most (default 2048)\n",
		prog, prog, TX_TEXT_MAX);
}

static int tx_num(const char *s, uint64_t min, uint64_t max, uint64_t *out)
{
	char *end;
	unsigned long long v;
	uint64_t mul = 1;
	if (*s < '0' || *s > '9')
		return -1;
	v = strtoull(s, &end, 10);
	if (*end == 'k' || *end == 'K')
		mul = 1024, end++;
	else if (*end == 'm' || *end == 'M')
		mul = 1024 * 1024, end++;
	else if (*end == 'g' || *end == 'G')
		mul = 1024ull * 1024 * 1024, end++;
	if (*end || v > max / mul || v * mul < min)
		return -1;
	*out = v * mul;
	return 0;
}

static void *__app_init(int argc, char *const *argv)
{
	struct tx_app *a = calloc(1, sizeof(*a));
	struct in_addr in;
	uint64_t v;
	int opt, err = 0, have_port = 0;
	if (!a) {
		fprintf(stderr, "tcp_xfer: out of memory\n");
		exit(1);
	}
	a->max_unacked = 2048;
	a->local_port = (uint16_t) (20000 + getpid() % 30000);
	while (!err && (opt = getopt(argc, argv, "s:p:P:n:x:aTq:h")) != -1) {
		switch (opt) {
		case 's':
			if (inet_pton(AF_INET, optarg, &in) != 1) {
				fprintf(stderr, "tcp_xfer: -s '%s' is not an IPv4 address\n", optarg);
				err = 1;
			}
			a->peer_be = in.s_addr;
			a->client = 1;
			break;
		case 'p':
			if (tx_num(optarg, 1, 65535, &v)) {
				fprintf(stderr, "tcp_xfer: -p '%s' is not a port (1-65535)\n", optarg);
				err = 1;
			}
			a->port = (uint16_t) v;
			have_port = 1;
			break;
		case 'P':
			if (tx_num(optarg, 1, 65535, &v)) {
				fprintf(stderr, "tcp_xfer: -P '%s' is not a port (1-65535)\n", optarg);
				err = 1;
			}
			a->local_port = (uint16_t) v;
			break;
		case 'n':
			if (tx_num(optarg, 0, 1ull << 50, &v)) {
				fprintf(stderr, "tcp_xfer: -n '%s' is not a byte count\n", optarg);
				err = 1;
			}
			a->tx_total = v;
			break;
		case 'x':
			if (tx_num(optarg, 0, 1ull << 50, &v)) {
				fprintf(stderr, "tcp_xfer: -x '%s' is not a byte count\n", optarg);
				err = 1;
			}
			a->expect = v;
			a->expect_set = 1;
			break;
		case 'a': a->after_fin = 1; break;
		case 'T': a->print_text = 1; break;
		case 'q':
			if (tx_num(optarg, 1, 1u << 24, &v)) {
				fprintf(stderr, "tcp_xfer: -q '%s' must be 1..16777216\n", optarg);
				err = 1;
			}
			a->max_unacked = (uint32_t) v;
			break;
		case 'h': tx_usage(argv[0]); exit(0);
		default: err = 1; break;
		}
	}
	if (!err && !have_port) {
		fprintf(stderr, "tcp_xfer: -p PORT is required\n");
		err = 1;
	}
	if (!err && optind != argc) {
		fprintf(stderr, "tcp_xfer: unexpected argument '%s'\n", argv[optind]);
		err = 1;
	}
	if (err) {
		tx_usage(argv[0]);
		exit(2);
	}
	sha256_init(&a->sha);
	return a;
}

static void *__app_thread_init(void *workspace, uint16_t core_id, void *opaque)
{
	struct tx_app *a = tx_of(opaque);
	if (++a->threads > 1) {
		fprintf(stderr, "tcp_xfer: runs one thread only (one connection); give the backend one core\n");
		exit(2);
	}
	(void) core_id;
	a->workspace = workspace;
	iip_stats_get(workspace, &a->st0);
	return a;
}

static void tx_connect(void *ws, struct tx_app *a, uint64_t now, void *opaque)
{
	uint16_t rc;
	a->connect_tries++;
	a->connect_at_ns = now;
	rc = iip_tcp_connect(ws, a->mac, a->ip4_be, htons(a->local_port), a->peer_mac, a->peer_be, htons(a->port),
			     opaque);
	if (rc) {
		fprintf(stderr, "tcp_xfer: iip_tcp_connect refused with %u\n", rc);
		a->fatal = 1;
		return;
	}
	a->connecting = 1;
}

static void __app_loop(void *workspace, uint8_t mac[], uint32_t ip4_be, uint32_t *next_us, void *opaque)
{
	struct tx_app *a = tx_of(opaque);
	uint64_t now = tx_now(opaque), wake = UINT64_MAX;
	memcpy(a->mac, mac, 6);
	a->ip4_be = ip4_be;
	if (a->fatal || a->done)
		return;
	if (a->client && !a->resolved) {
		/* the stack keeps no neighbour table: ask until iip_ops_arp_reply */
		if (!a->arp_last_ns || now - a->arp_last_ns >= TX_ARP_RETRY_NS) {
			if (a->arp_tries++ == TX_ARP_TRIES) {
				fprintf(stderr, "tcp_xfer: no ARP reply from the peer\n");
				a->fatal = 1;
				return;
			}
			iip_arp_request(workspace, mac, ip4_be, a->peer_be, opaque);
			a->arp_last_ns = now;
		}
		wake = a->arp_last_ns + TX_ARP_RETRY_NS;
	} else if (a->client && !a->connecting && !a->established) {
		if (!a->connect_tries || now - a->connect_at_ns >= TX_CONNECT_RETRY_NS) {
			if (a->connect_tries == TX_CONNECT_TRIES) {
				fprintf(stderr, "tcp_xfer: connection refused %u times\n", TX_CONNECT_TRIES);
				a->fatal = 1;
				return;
			}
			tx_connect(workspace, a, now, opaque);
		} else
			wake = a->connect_at_ns + TX_CONNECT_RETRY_NS;
	}
	tx_pump(workspace, a, opaque);
	if (tx_may_send(a) && (a->pending || a->tx_off < a->tx_total) && a->unacked_pkts < a->max_unacked)
		wake = now + TX_RETRY_US * 1000ull < wake ? now + TX_RETRY_US * 1000ull : wake;
	if (wake != UINT64_MAX) {
		uint64_t us = wake > now ? (wake - now + 999) / 1000 : 0;
		if (us < *next_us)
			*next_us = (uint32_t) us;
	}
}

static uint8_t __app_should_stop(void *opaque)
{
	struct tx_app *a = tx_of(opaque);
	return a->fatal || a->done;
}

static double tx_rate(uint64_t bytes, uint64_t from, uint64_t to)
{
	return to > from ? (double) bytes / ((double) (to - from) / 1e9) / 1e6 : 0.0;
}

static void __app_exit(void *app_global)
{
	struct tx_app *a = app_global;
	struct iip_stats st;
	char hex[65];
	int ok, pattern_ok = !a->expect_set || (a->rx_bytes == a->expect && !a->rx_mismatch);
	unsigned long resets = 0, timeouts = 0;
	uint32_t i;
	if (a->workspace) {
		iip_stats_get(a->workspace, &st);
		resets = st.tcp_conn_reset - a->st0.tcp_conn_reset;
		timeouts = st.tcp_conn_timed_out - a->st0.tcp_conn_timed_out;
	} else
		memset(&st, 0, sizeof(st));
	sha256_final_hex(&a->sha, hex);
	printf("tcp_xfer: received %llu bytes, sha256 %s", (unsigned long long) a->rx_bytes, hex);
	if (!a->expect_set)
		printf(", pattern not checked\n");
	else if (pattern_ok)
		printf(", pattern ok (%llu bytes checked)\n", (unsigned long long) a->expect);
	else if (a->rx_mismatch)
		printf(", pattern MISMATCH: %llu wrong bytes, first at offset %llu (expected %llu bytes)\n",
		       (unsigned long long) a->rx_mismatch, (unsigned long long) a->rx_first_bad,
		       (unsigned long long) a->expect);
	else
		printf(", expected %llu bytes\n", (unsigned long long) a->expect);
	if (a->print_text) {
		printf("tcp_xfer: received text: ");
		for (i = 0; i < a->text_len; i++) {
			unsigned char ch = (unsigned char) a->text[i];
			if (ch == '\n')
				printf("\\n");
			else if (ch >= 32 && ch < 127)
				putchar(ch);
			else
				printf("\\x%02x", ch);
		}
		printf("\n");
	}
	printf("tcp_xfer: sent %llu bytes, %llu acknowledged; %llu bytes sent after the peer's FIN, "
	       "%llu bytes received after our FIN\n",
	       (unsigned long long) a->tx_off, (unsigned long long) a->tx_acked,
	       (unsigned long long) a->tx_after_peer_fin, (unsigned long long) a->rx_after_our_fin);
	/* rx: from the handshake to the last byte; tx: from our first byte to the last ACK */
	printf("tcp_xfer: time %.3f s; rx %.1f MB/s, tx %.1f MB/s; retrans %lu (rto %lu, fast %lu), ooo %lu, dup %lu, "
	       "resets %lu, timed out %lu, sends refused %llu\n",
	       a->t_closed > a->t_established ? (double) (a->t_closed - a->t_established) / 1e9 : 0.0,
	       tx_rate(a->rx_bytes, a->t_established, a->t_last_rx), tx_rate(a->tx_acked, a->t_first_tx, a->t_all_acked),
	       st.tx_tcp_retrans - a->st0.tx_tcp_retrans, st.tx_tcp_rto - a->st0.tx_tcp_rto,
	       st.tx_tcp_fast_retrans - a->st0.tx_tcp_fast_retrans, st.rx_tcp_ooo - a->st0.rx_tcp_ooo,
	       st.rx_tcp_dup - a->st0.rx_tcp_dup, resets, timeouts, (unsigned long long) a->refused);
	ok = !a->fatal && a->established && a->closed && a->we_closed && a->peer_fin && !resets && !timeouts &&
	     a->tx_acked == a->tx_total && a->tx_off == a->tx_total && pattern_ok;
	printf("tcp_xfer: result: %s (established %d, our FIN %d, peer FIN %d, closed %d)\n", ok ? "ok" : "FAILED",
	       a->established, a->we_closed, a->peer_fin, a->closed);
	fflush(stdout);
	tx_result_ok = ok;
	free(a); /* a packet still pending here (a failed run) is the backend's to count as held */
}

/* ---- events from the stack ---------------------------------------------------------- */

static uint8_t iip_ops_tcp_accept(void *context, void *pkt, void *opaque)
{
	struct tx_app *a = tx_of(opaque);
	(void) context;
	/* one connection per run */
	return !a->client && !a->established && !a->closed && ntohs(PB_TCP(pkt)->dst_be) == a->port;
}

static void *tx_established(void *context, void *handle, void *opaque)
{
	struct tx_app *a = tx_of(opaque);
	a->handle = handle;
	a->established = 1;
	a->connecting = 0;
	a->t_established = tx_now(opaque);
	printf("tcp_xfer: connection established\n");
	fflush(stdout);
	tx_pump(context, a, opaque);
	return a;
}

static void *iip_ops_tcp_accepted(void *context, void *handle, void *pkt, void *opaque)
{
	(void) pkt;
	return tx_established(context, handle, opaque);
}

static void *iip_ops_tcp_connected(void *context, void *handle, void *pkt, void *opaque)
{
	(void) pkt;
	return tx_established(context, handle, opaque);
}

static void tx_rx_bytes(struct tx_app *a, const uint8_t *p, uint32_t n)
{
	if (a->expect_set) {
		uint32_t k = n;
		if (a->rx_bytes + k > a->expect) { /* beyond what was announced: all wrong */
			uint64_t over = a->rx_bytes + k - (a->rx_bytes > a->expect ? a->rx_bytes : a->expect);
			if (!a->rx_mismatch)
				a->rx_first_bad = a->rx_bytes + k - over;
			a->rx_mismatch += over;
			k -= (uint32_t) over;
		}
		if (k) {
			uint64_t first = 0, bad = tx_check(a->rx_bytes, p, k, &first);
			if (bad && !a->rx_mismatch)
				a->rx_first_bad = first;
			a->rx_mismatch += bad;
		}
	}
	sha256_update(&a->sha, p, n);
	if (a->print_text) {
		uint32_t k = TX_TEXT_MAX - a->text_len < n ? TX_TEXT_MAX - a->text_len : n;
		memcpy(a->text + a->text_len, p, k);
		a->text_len += k;
	}
	a->rx_bytes += n;
	if (a->we_closed)
		a->rx_after_our_fin += n;
}

/*
 * New in-order data: of the packet's TCP payload, skip head_off bytes at the
 * front and tail_off at the end; the payload may continue over a
 * scatter-gather chain (LRO).
 */
static void iip_ops_tcp_payload(void *context, void *handle, void *pkt, void *tcp_opaque, uint16_t head_off,
				uint16_t tail_off, void *opaque)
{
	struct tx_app *a = tcp_opaque;
	struct iip_ip4_hdr *ip = PB_IP4(pkt);
	uint32_t hdrs = (uint32_t) PB_IP4_HDR_LEN(pkt) + (uint32_t) PB_TCP_HDR_LEN(pkt) * 4u;
	uint32_t tot = ntohs(ip->len_be), off, len;
	void *s;
	if (a && tot >= hdrs && tot - hdrs >= (uint32_t) head_off + tail_off) {
		len = tot - hdrs - head_off - tail_off;
		off = (uint32_t) ((uint8_t *) ip - (uint8_t *) iip_ops_pkt_get_data(pkt, opaque)) + hdrs + head_off;
		for (s = pkt; s && len; s = iip_ops_pkt_scatter_gather_chain_get_next(s, opaque)) {
			const uint8_t *d = iip_ops_pkt_get_data(s, opaque);
			uint32_t n = iip_ops_pkt_get_len(s, opaque), k;
			if (off >= n) {
				off -= n;
				continue;
			}
			k = n - off < len ? n - off : len;
			tx_rx_bytes(a, d + off, k);
			len -= k;
			off = 0;
		}
		if (len) {
			fprintf(stderr, "tcp_xfer: packet chain shorter than its IP length\n");
			a->fatal = 1;
		}
		if (PB_TCP_HDR_HAS_FIN(pkt) && !tail_off && !a->peer_fin) {
			a->peer_fin = 1;
			tx_pump(context, a, opaque); /* -a: our turn to send */
		}
		a->t_last_rx = tx_now(opaque);
	} else if (a) {
		fprintf(stderr, "tcp_xfer: payload offsets beyond the packet (%u, %u of %u)\n", head_off, tail_off,
			tot - hdrs);
		a->fatal = 1;
	}
	iip_tcp_rxbuf_consumed(context, handle, 1, opaque);
}

/* every byte of pkt is acknowledged; the stack frees it after we return */
static void iip_ops_tcp_acked(void *context, void *handle, void *pkt, void *tcp_opaque, void *opaque)
{
	struct tx_app *a = tcp_opaque;
	(void) handle;
	if (!a)
		return;
	a->tx_acked += iip_ops_pkt_get_len(pkt, opaque);
	a->unacked_pkts--;
	if (a->tx_acked == a->tx_total)
		a->t_all_acked = tx_now(opaque);
	tx_pump(context, a, opaque); /* inside iip_run: the batch leaves together */
}

static void iip_ops_tcp_closed(void *handle, uint8_t local_mac[], uint32_t local_ip4_be, uint16_t local_port_be,
			       uint8_t peer_mac[], uint32_t peer_ip4_be, uint16_t peer_port_be, void *tcp_opaque,
			       void *opaque)
{
	struct tx_app *a = tx_of(opaque);
	(void) handle; (void) local_mac; (void) local_ip4_be; (void) local_port_be; (void) peer_mac;
	(void) peer_ip4_be; (void) peer_port_be; (void) tcp_opaque;
	if (a->pending) { /* the connection is gone: the refused packet will never go */
		iip_ops_pkt_free(a->pending, opaque);
		a->pending = NULL;
	}
	if (a->client && !a->established) { /* refused (RST to our SYN): the loop tries again */
		a->connecting = 0;
		return;
	}
	a->closed = 1;
	a->t_closed = tx_now(opaque);
	if (!a->t_all_acked)
		a->t_all_acked = a->t_closed;
	a->done = 1;
}

static void iip_ops_arp_reply(void *context, void *pkt, void *opaque)
{
	struct tx_app *a = tx_of(opaque);
	uint32_t sender;
	(void) context;
	memcpy(&sender, PB_ARP_IP_SENDER(pkt), 4);
	if (a->client && sender == a->peer_be && !a->resolved) {
		memcpy(a->peer_mac, PB_ARP_HW_SENDER(pkt), 6);
		a->resolved = 1;
	}
}

static void iip_ops_icmp_reply(void *context, void *pkt, void *opaque)
{
	(void) context; (void) pkt; (void) opaque;
}

static void iip_ops_udp_payload(void *context, void *pkt, void *opaque)
{
	(void) context; (void) pkt; (void) opaque;
}

/* the backend: its callbacks and __iosub_main */
#include IOSUB_MAIN_C

int main(int argc, char *const *argv)
{
	int rc = __iosub_main(argc, argv);
	if (rc == 0 && !tx_result_ok)
		rc = 1;
	return rc;
}
