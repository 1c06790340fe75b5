/*
 * tests/loop/xfer — a TCP transfer test application, for the loop backend
 * (any backend builds it, COMPAT.md section 3).
 *
 * A client opens connections to a server and moves a deterministic byte
 * pattern in one or both directions; the receiving side checks every byte.
 * Each direction of a connection is one stream:
 *
 *   16-byte header: magic "iipx", connection id (big-endian u32),
 *                   payload size (big-endian u64)
 *   payload:        byte k is a function of (connection id, direction, k)
 *
 * The client always sends at least the header (the server learns the id
 * from it, and so the sizes it must send and receive). Half-close is used
 * as applications do: a side that has payload to send closes right after
 * its last byte; a side that only receives (the server in one-way mode, the
 * client in reverse mode) closes once it saw the peer's FIN.
 *
 * Options, per host section of the loop backend:
 *   server:  -p PORT [common]
 *   client:  -s SERVER_IP -p PORT [common]
 *   common (give both hosts the same):
 *     -c N      concurrent connections (client slots)        default 1
 *     -k K      connections per slot, one after the other    default 1
 *               (each slot opens, transfers, closes, then opens again)
 *     -n BYTES  payload per connection per direction (suffix k, m, g)   default 1m
 *     -R SEED   random payload size per connection and direction, 0..BYTES
 *     -b        bidirectional: both sides send BYTES
 *     -r        reverse: the server sends, the client only receives
 *     -w BYTES  bytes per iip_tcp_send (one packet buffer)   default 1448
 *     -q PKTS   packets this host may have queued but unacknowledged
 *               (keeps the sender from using up its own packet pool: with
 *               every buffer in its send queue, a host cannot receive the
 *               ACKs that would drain it) default 3072
 *     -N        TCP_NODELAY on every connection
 *     -K        CUBIC congestion control on every connection (iip_tcp_set_cc)
 *     -A        also send from iip_ops_tcp_acked, i.e. inside iip_run, so
 *               that the stack sends a batch's data together (TSO frames);
 *               by default the application sends from __app_loop only
 *     -z PKTS   slow reader: this host reports at most PKTS received packets
 *               per millisecond consumed (iip_tcp_rxbuf_consumed), so the
 *               window it advertises closes and the peer must wait and probe
 *     -i ID     client: ids start at ID (several clients, disjoint ranges)
 *     -e N      server: connections to expect from all clients (default c x k)
 *     -X OFF    self-test of the checker: this host flips one bit of payload
 *               byte OFF in every stream it sends (the peer must report it)
 *
 * At exit each host prints one "xfer:" summary line; the process exits 1
 * (after the backend's own report) if any host saw a mismatch, a missing or
 * extra byte, a connection that did not close normally (reset, time-out,
 * refused), a leaked stack pb or connection object, or an incomplete run.
 *
 * Example (host 1 serves, host 2 sends 1 GiB):
 *   ./xfer -V -- -p 5000 -n 1g -- -s 10.0.0.1 -p 5000 -n 1g
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <getopt.h>
#include <time.h>
#include <arpa/inet.h>

#define __iip_memcpy memcpy
#define __iip_memset memset
#define __iip_memcmp memcmp
#define __iip_memmove memmove
#define IIP_OPS_DEBUG_PRINTF printf

/* the backend's clock: virtual with the loop's -V */
#define APP_IIP_OPS_UTIL_NOW_NS_NONE

#ifndef IIP_MAIN_C
#define IIP_MAIN_C "../../../stack/main.c"
#endif
#include IIP_MAIN_C

#include "pattern.h"

#define XFER_ARP_RETRY_NS 100000000ull /* 100 ms */
#define XFER_ARP_TRIES 100
#define XFER_RETRY_US 1000u            /* when blocked on something no event will announce */
#define XFER_PORT_MIN 1024u
#define XFER_BURST_PKTS 64u             /* packets per connection per turn */

/* direction of a stream */
#define XFER_C2S 0u
#define XFER_S2C 1u

struct xfer_app;

/* one connection, from the application's side */
struct xfer_conn {
	struct xfer_app *app;
	void *handle;                 /* the stack's, valid until iip_ops_tcp_closed */
	struct xfer_conn *wprev, *wnext;
	uint8_t on_work;
	uint8_t id_known;
	uint8_t established;
	uint8_t closed_by_us;
	uint8_t rx_fin;
	uint8_t rx_hdr_bad;
	uint32_t id;
	uint32_t slot;
	uint16_t local_port;
	/* sending */
	uint8_t tx_ready;             /* tx_total is known */
	uint64_t tx_total;            /* stream bytes: header + payload (0: nothing) */
	uint64_t tx_off;              /* bytes handed to iip_tcp_send */
	uint64_t tx_acked;            /* bytes reported by iip_ops_tcp_acked */
	uint32_t tx_unacked_pkts;
	void *tx_pending;             /* filled, refused by the stack: ours, resent later */
	uint8_t tx_hdr[XFER_HDR_LEN];
	/* receiving */
	uint8_t rx_hdr[XFER_HDR_LEN];
	uint64_t rx_off;              /* stream bytes received */
	uint64_t rx_total;            /* expected stream bytes, known after the header */
	uint64_t rx_mismatch;         /* wrong bytes (or unverifiable ones) */
	uint64_t rx_extra;            /* bytes beyond the announced size, or after the FIN */
	uint64_t rx_key;
	/* -z: packets delivered but not yet reported with iip_tcp_rxbuf_consumed */
	uint32_t rx_unconsumed;
	struct xfer_conn *rprev, *rnext;
	uint8_t on_readers;
};

struct xfer_totals {
	uint64_t conns_ok, conns_bad;
	uint64_t tx_bytes, rx_bytes;   /* stream bytes acknowledged / received and checked */
	uint64_t mismatches, missing, extra, dup_ids, bad_ids;
	uint64_t refused_connects;     /* connect attempts the stack refused for lack of objects */
};

struct xfer_app {
	/* options */
	int client;
	uint32_t server_be;
	uint16_t port;
	uint32_t nconc, cycles;
	uint64_t nbytes;
	int random_sizes;
	uint64_t seed;
	int bidir, reverse, nodelay;
	int send_in_callbacks;         /* -A */
	int cubic;                     /* -K: CUBIC instead of NewReno */
	int flip_set;                  /* -X */
	uint64_t flip_at;
	uint32_t read_rate;            /* -z: packets consumed per ms, 0 = at once */
	uint64_t first_id;             /* -i: ids of this client start here */
	uint64_t id_space;             /* ids the server accepts: 0 .. id_space-1 */
	struct xfer_conn *readers;     /* connections with unconsumed packets */
	uint64_t read_last_ns;
	uint64_t read_tokens;
	uint32_t wsize;
	uint32_t tx_budget;
	uint64_t expected;             /* connections to complete: nconc * cycles */
	/* runtime */
	uint16_t host;
	void *workspace;
	uint8_t mac[6];
	uint32_t ip4_be;
	uint8_t server_mac[6];
	int server_resolved;
	uint32_t arp_tries;
	uint64_t arp_last_ns;
	int fatal;
	uint32_t pb_free0, pb_total0, conn_free0, conn_total0; /* pool counts at start */
	int pools_known;
	/* client slots */
	uint32_t *idle_slots, nidle;
	uint32_t *slot_started;        /* connections started per slot */
	uint32_t next_port;
	struct xfer_conn **port_map;   /* local port -> connection (client) */
	uint64_t next_connect_retry_ns;
	/* server */
	uint8_t *seen_ids;             /* bitmap of ids already served */
	/* work list: connections with something to send or to close */
	struct xfer_conn *work_head, *work_tail;
	uint64_t live;                 /* connection states allocated */
	uint32_t tx_unacked_pkts;
	uint64_t pending_pkts;         /* refused packets we hold */
	/* results */
	struct xfer_totals t;
	uint64_t t_start_ns, t_done_ns;
	struct timespec wall_start, wall_done;
	int done_marked;
};

static int xfer_hosts_inited, xfer_hosts_exited, xfer_any_failed;
static int xfer_any_fatal; /* a host cannot go on: every host stops (hosts share this process) */

static struct xfer_app *xfer_of(void *opaque)
{
	return (struct xfer_app *) ((void **) opaque)[1];
}

static uint64_t xfer_now(void *opaque)
{
	uint32_t t[3];
	iip_ops_util_now_ns(t, opaque);
	return (((uint64_t) t[0] << 32 | t[1]) * 1000000000ull) + t[2];
}

/* payload size of a stream: -n, or with -R a seeded draw in 0..n */
static uint64_t xfer_size(const struct xfer_app *a, uint32_t id, uint32_t dir)
{
	if (!a->random_sizes)
		return a->nbytes;
	return xfer_mix(a->seed * 0x9e3779b97f4a7c15ull ^ ((uint64_t) id << 1 | dir)) % (a->nbytes + 1);
}

/* what each side sends: the client always its header (plus payload unless
 * reverse); the server a stream only in bidirectional or reverse mode */
static int xfer_sends_payload(const struct xfer_app *a, int client)
{
	return client ? !a->reverse || a->bidir : a->bidir || a->reverse;
}

static uint64_t xfer_stream_len(const struct xfer_app *a, uint32_t id, uint32_t dir)
{
	int client_side = dir == XFER_C2S;
	if (!client_side && !xfer_sends_payload(a, 0))
		return 0;
	return XFER_HDR_LEN + (xfer_sends_payload(a, client_side) ? xfer_size(a, id, dir) : 0);
}

/* ---- the work list ------------------------------------------------------------ */

static void xfer_work_add(struct xfer_conn *c)
{
	struct xfer_app *a = c->app;
	if (c->on_work)
		return;
	c->on_work = 1;
	c->wnext = NULL;
	c->wprev = a->work_tail;
	if (a->work_tail)
		a->work_tail->wnext = c;
	else
		a->work_head = c;
	a->work_tail = c;
}

static void xfer_work_remove(struct xfer_conn *c)
{
	struct xfer_app *a = c->app;
	if (!c->on_work)
		return;
	if (c->wprev)
		c->wprev->wnext = c->wnext;
	else
		a->work_head = c->wnext;
	if (c->wnext)
		c->wnext->wprev = c->wprev;
	else
		a->work_tail = c->wprev;
	c->on_work = 0;
	c->wprev = c->wnext = NULL;
}

/* -z: connections whose reader is behind */
static void xfer_readers_add(struct xfer_conn *c)
{
	struct xfer_app *a = c->app;
	if (c->on_readers)
		return;
	c->on_readers = 1;
	c->rprev = NULL;
	c->rnext = a->readers;
	if (a->readers)
		a->readers->rprev = c;
	a->readers = c;
}

static void xfer_readers_remove(struct xfer_conn *c)
{
	struct xfer_app *a = c->app;
	if (!c->on_readers)
		return;
	if (c->rprev)
		c->rprev->rnext = c->rnext;
	else
		a->readers = c->rnext;
	if (c->rnext)
		c->rnext->rprev = c->rprev;
	c->on_readers = 0;
}

/*
 * -z: the slow reader. Data is checked when it arrives; what a reader
 * controls is when it tells the stack the packets are consumed, and that
 * is what the advertised window follows (the peer must stop at a zero
 * window and probe).
 */
static void xfer_read_some(void *workspace, struct xfer_app *a, uint64_t now, void *opaque)
{
	struct xfer_conn *c, *next;
	if (!a->read_last_ns)
		a->read_last_ns = now;
	if (now > a->read_last_ns) {
		uint64_t ms = (now - a->read_last_ns) / 1000000ull;
		a->read_tokens += ms * a->read_rate;
		a->read_last_ns += ms * 1000000ull;
		if (a->read_tokens > (uint64_t) a->read_rate * 10)
			a->read_tokens = (uint64_t) a->read_rate * 10; /* no bursts after idle time */
	}
	for (c = a->readers; c && a->read_tokens; c = next) {
		uint32_t n = c->rx_unconsumed < a->read_tokens ? c->rx_unconsumed : (uint32_t) a->read_tokens;
		next = c->rnext;
		iip_tcp_rxbuf_consumed(workspace, c->handle, (uint16_t) n, opaque);
		c->rx_unconsumed -= n;
		a->read_tokens -= n;
		if (!c->rx_unconsumed)
			xfer_readers_remove(c);
	}
}

static int xfer_tx_done(const struct xfer_conn *c)
{
	return c->tx_ready && c->tx_off == c->tx_total && !c->tx_pending;
}

/* whether c waits for the application to send or to close */
static int xfer_wants_work(const struct xfer_conn *c)
{
	const struct xfer_app *a = c->app;
	if (!c->established || c->closed_by_us)
		return 0;
	if (!c->tx_ready)
		return 0; /* server: the peer's header tells what to send */
	if (!xfer_tx_done(c))
		return 1;
	/* everything sent: a payload sender closes now, a pure receiver after the FIN */
	return xfer_sends_payload(a, a->client) || c->rx_fin;
}

/* ---- connection state ------------------------------------------------------------ */

static struct xfer_conn *xfer_conn_new(struct xfer_app *a)
{
	struct xfer_conn *c = calloc(1, sizeof(*c));
	if (!c) {
		fprintf(stderr, "xfer: out of memory\n");
		exit(1);
	}
	c->app = a;
	a->live++;
	return c;
}

/* the stream this side sends is now known (client: at connect; server: after the header) */
static void xfer_tx_setup(struct xfer_conn *c, uint32_t dir)
{
	struct xfer_app *a = c->app;
	c->tx_total = xfer_stream_len(a, c->id, dir);
	if (c->tx_total)
		xfer_hdr(c->tx_hdr, c->id, c->tx_total - XFER_HDR_LEN);
	c->tx_ready = 1;
}

static void xfer_rx_setup(struct xfer_conn *c, uint32_t dir)
{
	c->rx_total = xfer_stream_len(c->app, c->id, dir);
	c->rx_key = xfer_key(c->id, dir);
}

/* the end of a connection: judge it, count it, free it */
static void xfer_conn_finish(struct xfer_conn *c, int notified_normally, void *opaque)
{
	struct xfer_app *a = c->app;
	uint64_t missing = 0;
	int ok;
	xfer_work_remove(c);
	xfer_readers_remove(c); /* the handle is gone: nothing more to report */
	if (c->tx_pending) {
		iip_ops_pkt_free(c->tx_pending, opaque);
		c->tx_pending = NULL;
		a->pending_pkts--;
	}
	a->tx_unacked_pkts -= c->tx_unacked_pkts;
	if (c->rx_off < c->rx_total)
		missing = c->rx_total - c->rx_off;
	ok = notified_normally && c->established && c->closed_by_us && c->rx_fin && !c->rx_hdr_bad && !missing &&
	     !c->rx_extra && !c->rx_mismatch && c->tx_ready && c->tx_acked == c->tx_total && c->id_known;
	a->t.mismatches += c->rx_mismatch;
	a->t.missing += missing;
	a->t.extra += c->rx_extra;
	if (ok)
		a->t.conns_ok++;
	else {
		if (a->t.conns_bad < 5)
			fprintf(stderr,
				"xfer: host %u: connection id %u (port %u) ended badly: established %d closed-by-us %d fin %d "
				"hdr-bad %d rx %llu/%llu mismatch %llu extra %llu tx acked %llu/%llu\n",
				a->host + 1, c->id, c->local_port, c->established, c->closed_by_us, c->rx_fin, c->rx_hdr_bad,
				(unsigned long long) c->rx_off, (unsigned long long) c->rx_total,
				(unsigned long long) c->rx_mismatch, (unsigned long long) c->rx_extra,
				(unsigned long long) c->tx_acked, (unsigned long long) c->tx_total);
		a->t.conns_bad++;
	}
	if (a->client) {
		a->port_map[c->local_port] = NULL;
		if (a->slot_started[c->slot] < a->cycles)
			a->idle_slots[a->nidle++] = c->slot;
	}
	a->live--;
	free(c);
}

/* ---- sending ------------------------------------------------------------------------ */

/* builds the next packet of c's stream; NULL if the pool is empty */
static void *xfer_build(struct xfer_conn *c, void *opaque)
{
	struct xfer_app *a = c->app;
	uint64_t left = c->tx_total - c->tx_off;
	uint32_t len = left < a->wsize ? (uint32_t) left : a->wsize, k = 0;
	void *pkt = iip_ops_pkt_alloc(opaque);
	uint8_t *p;
	if (!pkt)
		return NULL;
	iip_ops_pkt_set_len(pkt, (uint16_t) len, opaque);
	if (iip_ops_pkt_get_len(pkt, opaque) != len) {
		fprintf(stderr, "xfer: -w %u is larger than a packet buffer of this backend\n", a->wsize);
		iip_ops_pkt_free(pkt, opaque);
		a->fatal = xfer_any_fatal = 1;
		return NULL;
	}
	p = iip_ops_pkt_get_data(pkt, opaque);
	for (; c->tx_off + k < XFER_HDR_LEN && k < len; k++)
		p[k] = c->tx_hdr[c->tx_off + k];
	if (k < len)
		xfer_fill(xfer_key(c->id, a->client ? XFER_C2S : XFER_S2C), c->tx_off + k - XFER_HDR_LEN, p + k, len - k);
	/* -X: a deliberate error, to show that the receiver catches it */
	if (a->flip_set && XFER_HDR_LEN + a->flip_at >= c->tx_off && XFER_HDR_LEN + a->flip_at < c->tx_off + len)
		p[XFER_HDR_LEN + a->flip_at - c->tx_off] ^= 0x01;
	return pkt;
}

/*
 * Sends what c may send now and closes when its time has come. Returns 1
 * if c still has work, 0 if it is done for now, -1 if the host budget or
 * the pool stopped it (the caller stops going through the list).
 */
static int xfer_pump(void *workspace, struct xfer_conn *c, int may_close, void *opaque)
{
	struct xfer_app *a = c->app;
	uint32_t burst = 0;
	while (c->tx_ready && (c->tx_pending || c->tx_off < c->tx_total)) {
		void *pkt = c->tx_pending;
		uint16_t len, rc;
		if (burst++ == XFER_BURST_PKTS)
			return 1; /* let the other connections send too */
		if (!pkt) {
			if (a->tx_unacked_pkts >= a->tx_budget)
				return -1;
			pkt = xfer_build(c, opaque);
			if (!pkt)
				return -1;
		} else {
			c->tx_pending = NULL;
			a->pending_pkts--;
		}
		len = iip_ops_pkt_get_len(pkt, opaque);
		rc = iip_tcp_send(workspace, c->handle, pkt, IIP_TCP_FLAG_PSH, opaque);
		if (rc) {
			/* refused: the packet is still ours; keep it for the next try */
			c->tx_pending = pkt;
			a->pending_pkts++;
			if (rc == IIP_ERR_STATE || rc == IIP_ERR_INVALID) {
				fprintf(stderr, "xfer: host %u: iip_tcp_send refused with %u on connection %u\n", a->host + 1,
					rc, c->id);
				a->fatal = xfer_any_fatal = 1;
			}
			return rc == IIP_ERR_NOMEM ? -1 : 1;
		}
		c->tx_off += len;
		c->tx_unacked_pkts++;
		a->tx_unacked_pkts++;
	}
	if (may_close && xfer_wants_work(c) && xfer_tx_done(c)) {
		uint16_t rc = iip_tcp_close(workspace, c->handle, opaque);
		if (rc) {
			fprintf(stderr, "xfer: host %u: iip_tcp_close refused with %u on connection %u\n", a->host + 1, rc,
				c->id);
			a->fatal = xfer_any_fatal = 1;
		}
		c->closed_by_us = 1;
		return 0;
	}
	return xfer_wants_work(c);
}

/* ---- receiving ------------------------------------------------------------------------ */

/* the peer's header is complete: learn (server) or confirm (client) the id */
static void xfer_rx_header(struct xfer_conn *c)
{
	struct xfer_app *a = c->app;
	uint8_t expect[XFER_HDR_LEN];
	uint32_t w[2];
	uint32_t dir = a->client ? XFER_S2C : XFER_C2S;
	memcpy(w, c->rx_hdr, 8);
	if (!a->client) {
		uint32_t id = ntohl(w[1]);
		if (ntohl(w[0]) != XFER_MAGIC || id >= a->id_space) {
			a->t.bad_ids++;
			c->rx_hdr_bad = 1;
			return;
		}
		if (a->seen_ids[id >> 3] & (1u << (id & 7))) {
			a->t.dup_ids++;
			c->rx_hdr_bad = 1;
			return;
		}
		a->seen_ids[id >> 3] |= (uint8_t) (1u << (id & 7));
		c->id = id;
		c->id_known = 1;
		xfer_rx_setup(c, dir);
		xfer_tx_setup(c, XFER_S2C);
		xfer_work_add(c);
	}
	xfer_hdr(expect, c->id, c->rx_total >= XFER_HDR_LEN ? c->rx_total - XFER_HDR_LEN : 0);
	if (c->rx_total < XFER_HDR_LEN || memcmp(expect, c->rx_hdr, XFER_HDR_LEN)) {
		uint32_t i;
		for (i = 0; i < XFER_HDR_LEN; i++)
			c->rx_mismatch += expect[i] != c->rx_hdr[i];
		c->rx_hdr_bad = 1;
	}
}

/* n in-order stream bytes at p */
static void xfer_rx_bytes(struct xfer_conn *c, const uint8_t *p, uint32_t n)
{
	while (n && c->rx_off < XFER_HDR_LEN) {
		c->rx_hdr[c->rx_off++] = *p++;
		c->app->t.rx_bytes++;
		n--;
		if (c->rx_off == XFER_HDR_LEN)
			xfer_rx_header(c);
	}
	if (!n)
		return;
	if (c->rx_hdr_bad || !c->id_known) {
		c->rx_mismatch += n; /* unverifiable */
		c->rx_off += n;
		return;
	}
	if (c->rx_off + n > c->rx_total) {
		uint64_t over = c->rx_off + n - (c->rx_off > c->rx_total ? c->rx_off : c->rx_total);
		c->rx_extra += over;
		n -= (uint32_t) over;
	}
	c->rx_mismatch += xfer_check(c->rx_key, c->rx_off - XFER_HDR_LEN, p, n);
	c->rx_off += n;
	c->app->t.rx_bytes += n;
}

/*
 * New in-order data: of the packet's TCP payload, skip head_off bytes at the
 * front and tail_off at the end; the payload may continue over a
 * scatter-gather chain (LRO). The packet stays the stack's. A FIN flag on a
 * packet delivered whole (tail_off 0) is the peer's FIN.
 */
static void iip_ops_tcp_payload(void *context, void *handle, void *pkt, void *tcp_opaque, uint16_t head_off,
				uint16_t tail_off, void *opaque)
{
	struct xfer_conn *c = tcp_opaque;
	struct iip_ip4_hdr *ip = PB_IP4(pkt);
	uint32_t hdrs = (uint32_t) PB_IP4_HDR_LEN(pkt) + (uint32_t) PB_TCP_HDR_LEN(pkt) * 4u;
	uint32_t tot = ntohs(ip->len_be), off, len;
	void *s;
	if (!c)
		return;
	if (tot < hdrs || tot - hdrs < (uint32_t) head_off + tail_off) {
		c->rx_mismatch++;
		fprintf(stderr, "xfer: host %u: payload offsets beyond the packet (%u, %u of %u)\n", c->app->host + 1,
			head_off, tail_off, tot - hdrs);
		iip_tcp_rxbuf_consumed(context, handle, 1, opaque);
		return;
	}
	len = tot - hdrs - head_off - tail_off;
	off = (uint32_t) ((uint8_t *) ip - (uint8_t *) iip_ops_pkt_get_data(pkt, opaque)) + hdrs + head_off;
	if (len && c->rx_fin)
		c->rx_extra += len; /* data after the FIN */
	else
		for (s = pkt; s && len; s = iip_ops_pkt_scatter_gather_chain_get_next(s, opaque)) {
			const uint8_t *d = iip_ops_pkt_get_data(s, opaque);
			uint32_t n = iip_ops_pkt_get_len(s, opaque), k;
			if (off >= n) {
				off -= n;
				continue;
			}
			k = n - off < len ? n - off : len;
			xfer_rx_bytes(c, d + off, k);
			len -= k;
			off = 0;
		}
	if (len) {
		c->rx_mismatch += len; /* the chain was shorter than the IP length says */
		fprintf(stderr, "xfer: host %u: packet chain shorter than its IP length\n", c->app->host + 1);
	}
	if (PB_TCP_HDR_HAS_FIN(pkt) && !tail_off && !c->rx_fin) {
		c->rx_fin = 1;
		if (xfer_wants_work(c))
			xfer_work_add(c);
	}
	if (c->app->read_rate) {
		c->rx_unconsumed++;
		xfer_readers_add(c);
	} else
		iip_tcp_rxbuf_consumed(context, handle, 1, opaque);
}

/* every byte of pkt is acknowledged; the stack frees it after we return */
static void iip_ops_tcp_acked(void *context, void *handle, void *pkt, void *tcp_opaque, void *opaque)
{
	struct xfer_conn *c = tcp_opaque;
	(void) context;
	(void) handle;
	if (!c)
		return;
	c->tx_acked += iip_ops_pkt_get_len(pkt, opaque);
	c->app->t.tx_bytes += iip_ops_pkt_get_len(pkt, opaque);
	c->tx_unacked_pkts--;
	c->app->tx_unacked_pkts--;
	/* -A: refill right here, inside iip_run, so that the stack sends the
	 * batch's data together (TSO frames) at the end of the batch */
	if (c->app->send_in_callbacks && !c->closed_by_us)
		xfer_pump(context, c, 0, opaque);
}

/* ---- connections ------------------------------------------------------------------------ */

static uint8_t iip_ops_tcp_accept(void *context, void *pkt, void *opaque)
{
	struct xfer_app *a = xfer_of(opaque);
	(void) context;
	return !a->client && ntohs(PB_TCP(pkt)->dst_be) == a->port;
}

static void *iip_ops_tcp_accepted(void *context, void *handle, void *pkt, void *opaque)
{
	struct xfer_app *a = xfer_of(opaque);
	struct xfer_conn *c = xfer_conn_new(a);
	(void) pkt;
	c->handle = handle;
	c->established = 1;
	c->local_port = a->port;
	if (a->nodelay)
		iip_tcp_set_nodelay(context, handle, 1);
	if (a->cubic)
		iip_tcp_set_cc(context, handle, IIP_TCP_CC_CUBIC);
	if (!xfer_sends_payload(a, 0)) {
		xfer_tx_setup(c, XFER_S2C); /* nothing to send: ready to close after the FIN */
	}
	return c;
}

static void *iip_ops_tcp_connected(void *context, void *handle, void *pkt, void *opaque)
{
	struct xfer_app *a = xfer_of(opaque);
	struct xfer_conn *c = a->client ? a->port_map[ntohs(PB_TCP(pkt)->dst_be)] : NULL;
	if (!c) {
		fprintf(stderr, "xfer: host %u: a connection we did not open\n", a->host + 1);
		a->fatal = xfer_any_fatal = 1;
		iip_tcp_close(context, handle, opaque);
		return NULL;
	}
	c->handle = handle;
	c->established = 1;
	if (a->nodelay)
		iip_tcp_set_nodelay(context, handle, 1);
	if (a->cubic)
		iip_tcp_set_cc(context, handle, IIP_TCP_CC_CUBIC);
	xfer_work_add(c);
	return c;
}

static void iip_ops_tcp_closed(void *handle, uint8_t local_mac[], uint32_t local_ip4_be, uint16_t local_port_be,
			       uint8_t peer_mac[], uint32_t peer_ip4_be, uint16_t peer_port_be, void *tcp_opaque,
			       void *opaque)
{
	struct xfer_app *a = xfer_of(opaque);
	struct xfer_conn *c = tcp_opaque;
	(void) handle; (void) local_mac; (void) local_ip4_be; (void) peer_mac; (void) peer_ip4_be; (void) peer_port_be;
	if (!c && a->client)
		c = a->port_map[ntohs(local_port_be)]; /* the connect failed before iip_ops_tcp_connected */
	if (!c)
		return;
	xfer_conn_finish(c, 1, opaque);
}

/* the client's next connection on a free slot; 0 when it could not start now */
static int xfer_connect(void *workspace, struct xfer_app *a, void *opaque)
{
	uint32_t slot = a->idle_slots[a->nidle - 1], tries;
	struct xfer_conn *c;
	for (tries = 0; tries < 65536 - XFER_PORT_MIN; tries++) {
		uint16_t port = (uint16_t) a->next_port, rc;
		a->next_port = a->next_port == 65535 ? XFER_PORT_MIN : a->next_port + 1;
		if (a->port_map[port])
			continue;
		c = xfer_conn_new(a);
		c->slot = slot;
		c->id = (uint32_t) (a->first_id + (uint64_t) a->slot_started[slot] * a->nconc + slot);
		c->id_known = 1;
		c->local_port = port;
		a->port_map[port] = c;
		rc = iip_tcp_connect(workspace, a->mac, a->ip4_be, htons(port), a->server_mac, a->server_be,
				     htons(a->port), opaque);
		if (rc == 0) {
			a->nidle--;
			a->slot_started[slot]++;
			xfer_tx_setup(c, XFER_C2S);
			xfer_rx_setup(c, XFER_S2C);
			return 1;
		}
		a->port_map[port] = NULL;
		a->live--;
		free(c);
		if (rc != IIP_ERR_EXISTS) { /* out of objects: try again later */
			a->t.refused_connects++;
			return 0;
		}
	}
	return 0;
}

/* ---- the application contract (COMPAT.md section 3) ---------------------------------------- */

static void xfer_usage(const char *prog)
{
	fprintf(stderr,
		"usage (per host): %s -p PORT [common]                 server\n"
		"                  %s -s SERVER_IP -p PORT [common]    client\n"
		"common (give both hosts the same):\n"
		"  -c N      concurrent connections (1..65536, default 1)\n"
		"  -k K      connections per slot, one after the other (default 1)\n"
		"  -n BYTES  payload per connection and direction, suffix k/m/g (default 1m)\n"
		"  -R SEED   random payload size per connection and direction in 0..BYTES\n"
		"  -b        bidirectional            -r  reverse (the server sends)\n"
		"  -w BYTES  bytes per iip_tcp_send (1..65535, at most a packet buffer; default 1448)\n"
		"  -q PKTS   packets queued but unacknowledged per host (default 3072); keep it well\n"
		"            below the backend's packet buffers (loop: -b, 8192), or the host's\n"
		"            own send queue leaves no buffer to receive the ACKs that drain it\n"
		"  -N        TCP_NODELAY (Nagle off)\n"
		"  -A        also send from iip_ops_tcp_acked (inside iip_run: the stack batches, TSO)\n"
		"  -K        CUBIC congestion control (iip_tcp_set_cc) instead of NewReno\n"
		"  -X OFF    self-test: flip a bit of payload byte OFF of every stream this host sends\n"
		"  -z PKTS   slow reader: report at most PKTS received packets consumed per ms\n"
		"  -i ID     client: first connection id (several clients: disjoint ranges)\n"
		"  -e N      server: connections to expect in all (default -c x -k)\n",
		prog, prog);
}

static int xfer_num(const char *s, uint64_t min, uint64_t max, uint64_t *out)
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
	struct xfer_app *a = calloc(1, sizeof(*a));
	struct in_addr in;
	uint64_t v;
	int opt, err = 0, have_port = 0;
	if (!a) {
		fprintf(stderr, "xfer: out of memory\n");
		exit(1);
	}
	a->nconc = 1;
	a->cycles = 1;
	a->nbytes = 1024 * 1024;
	a->wsize = 1448;
	a->tx_budget = 3072;
	while ((opt = getopt(argc, argv, "s:p:c:k:n:R:brw:q:NAKX:z:i:e:h")) != -1) {
		switch (opt) {
		case 's':
			if (inet_pton(AF_INET, optarg, &in) != 1) {
				fprintf(stderr, "xfer: -s '%s' is not an IPv4 address\n", optarg);
				err = 1;
			}
			a->server_be = in.s_addr;
			a->client = 1;
			break;
		case 'p': if (xfer_num(optarg, 1, 65535, &v)) err = 1; a->port = (uint16_t) v; have_port = 1; break;
		case 'c': if (xfer_num(optarg, 1, 65536, &v)) err = 1; a->nconc = (uint32_t) v; break;
		case 'k': if (xfer_num(optarg, 1, 1u << 24, &v)) err = 1; a->cycles = (uint32_t) v; break;
		case 'n': if (xfer_num(optarg, 0, 1ull << 50, &v)) err = 1; a->nbytes = v; break;
		case 'R': if (xfer_num(optarg, 0, UINT64_MAX, &v)) err = 1; a->seed = v; a->random_sizes = 1; break;
		case 'b': a->bidir = 1; break;
		case 'r': a->reverse = 1; break;
		case 'w': if (xfer_num(optarg, 1, 65535, &v)) err = 1; a->wsize = (uint32_t) v; break;
		case 'q': if (xfer_num(optarg, 1, 1u << 24, &v)) err = 1; a->tx_budget = (uint32_t) v; break;
		case 'N': a->nodelay = 1; break;
		case 'A': a->send_in_callbacks = 1; break;
		case 'K': a->cubic = 1; break;
		case 'i': if (xfer_num(optarg, 0, UINT32_MAX, &v)) err = 1; a->first_id = v; break;
		case 'e': if (xfer_num(optarg, 1, 1ull << 32, &v)) err = 1; a->expected = v; break;
		case 'z': if (xfer_num(optarg, 1, 1u << 20, &v)) err = 1; a->read_rate = (uint32_t) v; break;
		case 'X': if (xfer_num(optarg, 0, 1ull << 50, &v)) err = 1; a->flip_at = v; a->flip_set = 1; break;
		case 'h': xfer_usage(argv[0]); exit(0);
		default: err = 1; break;
		}
		if (err)
			break;
	}
	if (!err && (optind != argc || !have_port)) {
		if (!have_port)
			fprintf(stderr, "xfer: -p PORT is required\n");
		err = 1;
	}
	if (!a->expected)
		a->expected = (uint64_t) a->nconc * a->cycles;
	a->id_space = a->client ? a->first_id + a->expected : a->expected;
	if (!err && a->id_space > (1ull << 32)) {
		fprintf(stderr, "xfer: -c x -k must stay below 2^32 connections\n");
		err = 1;
	}
	if (!err && a->client && a->nconc > 65536 - XFER_PORT_MIN) {
		fprintf(stderr, "xfer: -c is limited by the port range (%u)\n", 65536 - XFER_PORT_MIN);
		err = 1;
	}
	if (err) {
		xfer_usage(argv[0]);
		exit(2);
	}
	if (a->client) {
		uint32_t i;
		a->idle_slots = calloc(a->nconc, sizeof(*a->idle_slots));
		a->slot_started = calloc(a->nconc, sizeof(*a->slot_started));
		a->port_map = calloc(65536, sizeof(*a->port_map));
		if (!a->idle_slots || !a->slot_started || !a->port_map) {
			fprintf(stderr, "xfer: out of memory\n");
			exit(1);
		}
		for (i = 0; i < a->nconc; i++) /* slot 0 on top */
			a->idle_slots[i] = a->nconc - 1 - i;
		a->nidle = a->nconc;
		a->next_port = 10000;
	} else {
		a->seen_ids = calloc((size_t) (a->expected + 7) / 8, 1);
		if (!a->seen_ids) {
			fprintf(stderr, "xfer: out of memory\n");
			exit(1);
		}
	}
	xfer_hosts_inited++;
	return a;
}

static void *__app_thread_init(void *workspace, uint16_t core_id, void *opaque)
{
	struct xfer_app *a = xfer_of(opaque);
	a->host = core_id;
	a->workspace = workspace;
	iip_pool_counts(workspace, &a->pb_free0, &a->pb_total0, &a->conn_free0, &a->conn_total0);
	a->pools_known = 1;
	clock_gettime(CLOCK_MONOTONIC, &a->wall_start);
	return a;
}

static uint64_t xfer_completed(const struct xfer_app *a)
{
	return a->t.conns_ok + a->t.conns_bad;
}

static void __app_loop(void *workspace, uint8_t mac[], uint32_t ip4_be, uint32_t *next_us, void *opaque)
{
	struct xfer_app *a = xfer_of(opaque);
	uint64_t now = xfer_now(opaque), wake = UINT64_MAX;
	struct xfer_conn *c, *stop_at;
	memcpy(a->mac, mac, 6);
	a->ip4_be = ip4_be;
	if (!a->t_start_ns)
		a->t_start_ns = now;
	if (a->fatal)
		return;
	if (a->client && !a->server_resolved) {
		/* the stack keeps no neighbour table: ask, and wait for iip_ops_arp_reply */
		if (!a->arp_last_ns || now - a->arp_last_ns >= XFER_ARP_RETRY_NS) {
			if (a->arp_tries++ == XFER_ARP_TRIES) {
				fprintf(stderr, "xfer: no ARP reply from the server\n");
				a->fatal = xfer_any_fatal = 1;
				return;
			}
			iip_arp_request(workspace, mac, ip4_be, a->server_be, opaque);
			a->arp_last_ns = now;
		}
		wake = a->arp_last_ns + XFER_ARP_RETRY_NS;
	} else if (a->client) {
		while (a->nidle) { /* idle slots all have cycles left */
			if (now < a->next_connect_retry_ns) {
				wake = a->next_connect_retry_ns;
				break;
			}
			if (!xfer_connect(workspace, a, opaque)) {
				a->next_connect_retry_ns = now + XFER_RETRY_US * 1000ull;
				wake = a->next_connect_retry_ns;
				break;
			}
		}
	}
	if (a->read_rate && a->readers) {
		xfer_read_some(workspace, a, now, opaque);
		if (a->readers && now + 1000000ull < wake)
			wake = now + 1000000ull;
	}
	/* round robin over the connections with work; one lap at most */
	stop_at = a->work_tail;
	while ((c = a->work_head) != NULL) {
		int r = xfer_pump(workspace, c, 1, opaque);
		int last = c == stop_at;
		if (r < 0) {
			/* budget or pool: the next ACK or packet freed brings us back;
			 * this one goes to the tail so that the budget is shared */
			xfer_work_remove(c);
			xfer_work_add(c);
			wake = now + XFER_RETRY_US * 1000ull < wake ? now + XFER_RETRY_US * 1000ull : wake;
			break;
		}
		xfer_work_remove(c);
		if (r > 0)
			xfer_work_add(c); /* to the tail: the others get their turn */
		if (last || a->fatal)
			break;
	}
	if (!a->done_marked && xfer_completed(a) == a->expected) {
		a->done_marked = 1;
		a->t_done_ns = now;
		clock_gettime(CLOCK_MONOTONIC, &a->wall_done);
	}
	if (wake != UINT64_MAX) {
		uint64_t us = wake > now ? (wake - now + 999) / 1000 : 0;
		if (us < *next_us)
			*next_us = (uint32_t) us;
	}
}

static int xfer_pools_back(const struct xfer_app *a)
{
	uint32_t pb_free, pb_total, conn_free, conn_total;
	iip_pool_counts(a->workspace, &pb_free, &pb_total, &conn_free, &conn_total);
	return pb_free == a->pb_free0 && pb_total == a->pb_total0 && conn_free == a->conn_free0 &&
	       conn_total == a->conn_total0;
}

static uint8_t __app_should_stop(void *opaque)
{
	struct xfer_app *a = xfer_of(opaque);
	if (a->fatal || xfer_any_fatal)
		return 1;
	return a->done_marked && !a->live && !a->pending_pkts && xfer_pools_back(a);
}

static void __app_exit(void *app_global)
{
	struct xfer_app *a = app_global;
	struct iip_stats st;
	uint32_t pb_free, pb_total, conn_free, conn_total;
	double vt, wt;
	int ok;
	iip_stats_get(a->workspace, &st);
	iip_pool_counts(a->workspace, &pb_free, &pb_total, &conn_free, &conn_total);
	if (!a->done_marked)
		clock_gettime(CLOCK_MONOTONIC, &a->wall_done);
	vt = (double) ((a->done_marked ? a->t_done_ns : 0) - a->t_start_ns) / 1e9;
	if (!a->done_marked)
		vt = 0;
	wt = (double) (a->wall_done.tv_sec - a->wall_start.tv_sec) + (double) (a->wall_done.tv_nsec - a->wall_start.tv_nsec) / 1e9;
	ok = !a->fatal && !xfer_any_fatal && a->done_marked && a->t.conns_ok == a->expected && !a->t.conns_bad && !a->t.mismatches &&
	     !a->t.missing && !a->t.extra && !a->t.dup_ids && !a->t.bad_ids && !a->live && !a->pending_pkts &&
	     pb_free == a->pb_free0 && conn_free == a->conn_free0 && !st.tcp_conn_reset && !st.tcp_conn_timed_out;
	printf("xfer: host %u %s: conns %llu/%llu ok, %llu bad; rx %llu B checked, tx %llu B acked; "
	       "mismatch %llu missing %llu extra %llu dup-id %llu bad-id %llu; time %.6f s (transfer end, clock of the "
	       "backend), wall %.3f s; rx %.3f Gbit/s (backend clock), %.3f Gbit/s (wall); pools: pb %u/%u conn %u/%u (start %u/%u %u/%u); "
	       "reset %lu timed-out %lu; retrans %lu rto %lu fast-retrans %lu ooo %lu dup %lu bad-csum %lu zwp %lu "
	       "ooo-dropped %lu pkt-alloc-failed %lu pb-exhausted %lu refused-send %lu refused-connect %llu: %s\n",
	       a->host + 1, a->client ? "client" : "server", (unsigned long long) a->t.conns_ok,
	       (unsigned long long) a->expected, (unsigned long long) a->t.conns_bad, (unsigned long long) a->t.rx_bytes,
	       (unsigned long long) a->t.tx_bytes, (unsigned long long) a->t.mismatches,
	       (unsigned long long) a->t.missing, (unsigned long long) a->t.extra, (unsigned long long) a->t.dup_ids,
	       (unsigned long long) a->t.bad_ids, vt, wt, vt > 0 ? (double) a->t.rx_bytes * 8 / vt / 1e9 : 0.0,
	       wt > 0 ? (double) a->t.rx_bytes * 8 / wt / 1e9 : 0.0,
	       pb_free, pb_total, conn_free, conn_total, a->pb_free0, a->pb_total0, a->conn_free0, a->conn_total0,
	       st.tcp_conn_reset, st.tcp_conn_timed_out, st.tx_tcp_retrans, st.tx_tcp_rto, st.tx_tcp_fast_retrans,
	       st.rx_tcp_ooo, st.rx_tcp_dup, st.rx_tcp_bad_csum, st.tx_tcp_zwp, st.rx_tcp_ooo_dropped,
	       st.pkt_alloc_failed, st.pb_exhausted, st.tx_tcp_refused, (unsigned long long) a->t.refused_connects,
	       ok ? "ok" : "FAILED");
	if (!ok)
		xfer_any_failed = 1;
	free(a->idle_slots);
	free(a->slot_started);
	free(a->port_map);
	free(a->seen_ids);
	free(a);
	xfer_hosts_exited++;
}

/* ---- events this program does not use ---------------------------------------------------- */

static void iip_ops_arp_reply(void *context, void *pkt, void *opaque)
{
	struct xfer_app *a = xfer_of(opaque);
	uint32_t sender;
	(void) context;
	memcpy(&sender, PB_ARP_IP_SENDER(pkt), 4);
	if (a->client && sender == a->server_be && !a->server_resolved) {
		memcpy(a->server_mac, PB_ARP_HW_SENDER(pkt), 6);
		a->server_resolved = 1;
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

#include IOSUB_MAIN_C

/*
 * The verdict: the backend returns after every host's __app_exit and its
 * own report (link counters, packet-pool leak check, status 3 on a leak);
 * a failure seen by any host turns a clean status into 1.
 */
int main(int argc, char *const *argv)
{
	int rc = __iosub_main(argc, argv);
	if (rc == 0 && (xfer_any_failed || xfer_hosts_exited != xfer_hosts_inited))
		rc = 1;
	return rc;
}
