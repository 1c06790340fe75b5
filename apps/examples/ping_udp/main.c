/*
 * apps/examples/ping_udp — a small, complete program on the iip stack that
 * shows an integrator how the API is used:
 *
 *  - resolving a neighbour: iip_arp_request + the iip_ops_arp_reply event,
 *    with the application keeping its own ARP table (the stack keeps none);
 *  - sending a frame the application builds itself (an ICMP echo request,
 *    written with the stack's header structs and PB_* accessors, pushed with
 *    the backend's iip_ops_l2_push / iip_ops_l2_flush); the stack of the
 *    peer answers echo requests by itself, and replies come back through
 *    iip_ops_icmp_reply;
 *  - sending UDP datagrams with iip_udp_send and receiving them in
 *    iip_ops_udp_payload (the responder echoes each datagram back);
 *  - keeping time with iip_ops_util_now_ns and asking to be called again
 *    through *next_us in __app_loop.
 *
 * Every byte of every reply is checked against what was sent. Requests that
 * got no reply in time are sent again (the loop backend can lose frames),
 * so a run ends with every sequence number answered or with a clear failure.
 *
 * Roles, per host (the options after each "--" of the backend):
 *   responder:  [-e SEC]            answer; with -e, stop after SEC s idle
 *   pinger:     -s IP [-n COUNT] [-l MAXLEN] [-w WINDOW] [-r RETRY_MS] [-p PORT]
 *
 * Build with any backend:  IOSUB_DIR=../../../io/loop make
 * Run on the loop backend (host 1 answers, host 2 pings 10.0.0.1):
 *   ./a.out -V -- -e 1 -- -s 10.0.0.1 -n 100
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <getopt.h>
#include <arpa/inet.h>

/* the stack is freestanding: hand it libc's memory functions and printf */
#define __iip_memcpy memcpy
#define __iip_memset memset
#define __iip_memcmp memcmp
#define __iip_memmove memmove
#define IIP_OPS_DEBUG_PRINTF printf

/* use the backend's clock (virtual with the loop's -V) */
#define APP_IIP_OPS_UTIL_NOW_NS_NONE

#ifndef IIP_MAIN_C
#define IIP_MAIN_C "../../../stack/main.c"
#endif
#include IIP_MAIN_C

#define PING_MAX_COUNT 65536
#define PING_ARP_RETRY_NS 200000000ull /* 200 ms between ARP requests */
#define PING_ARP_TRIES 50
#define PING_MAX_TRIES 100             /* sends of one sequence number before giving up */
#define PING_MAGIC 0x69697075u          /* "iipu": marks our UDP payloads */

/* what the pinger remembers of one sequence number, for ICMP and UDP */
struct ping_slot {
	uint64_t first_sent_ns, last_sent_ns;
	uint16_t tries;
	uint8_t answered;
};

struct ping_rtt {
	uint64_t n, sum_ns, min_ns, max_ns;
};

struct ping_app {
	/* options */
	int pinger;
	uint32_t target_be;      /* -s */
	uint32_t count;          /* -n */
	uint16_t max_len;        /* -l: largest payload */
	uint32_t window;         /* -w: requests in flight per protocol */
	uint64_t retry_ns;       /* -r */
	uint16_t port_be;        /* -p: UDP echo port */
	uint64_t idle_stop_ns;   /* -e (responder) */
	/* the application's ARP table: one entry is all this program needs */
	uint8_t target_mac[6];
	int target_resolved;
	uint32_t arp_tries;
	uint64_t arp_last_ns;
	/* progress */
	struct ping_slot *icmp, *udp;
	uint32_t icmp_done, udp_done, icmp_next, udp_next;
	uint64_t bytes_checked, bad_replies, dup_replies, resent, gave_up;
	struct ping_rtt icmp_rtt, udp_rtt;
	uint16_t icmp_id;
	uint64_t last_activity_ns, started_ns;
	uint64_t udp_echoed, udp_echo_refused;
	int failed;              /* fatal: ARP never answered */
	/* our own addresses, learnt in __app_loop */
	uint8_t mac[6];
	uint32_t ip4_be;
};

static uint64_t ping_now(void *opaque)
{
	uint32_t t[3];
	iip_ops_util_now_ns(t, opaque);
	return (((uint64_t) t[0] << 32 | t[1]) * 1000000000ull) + t[2];
}

static struct ping_app *ping_of(void *opaque)
{
	return (struct ping_app *) ((void **) opaque)[1];
}

/* ---- payload pattern: a function of (protocol, sequence, offset) ------------ */

static uint16_t ping_len(const struct ping_app *a, uint32_t seq, int udp)
{
	/* lengths vary so that odd sizes, tiny and full frames are all covered */
	uint32_t span = a->max_len >= 16 ? a->max_len - 15u : 1u;
	return (uint16_t) (16u + (seq * (udp ? 331u : 197u)) % span);
}

static uint8_t ping_byte(uint32_t seq, uint32_t off, int udp)
{
	return (uint8_t) (seq * 31u + off * 7u + (udp ? 101u : 3u) + (off >> 8));
}

/*
 * Compares the payload starting at `off` bytes into the packet chain with
 * the expected pattern; the first 16 bytes are the header we wrote (magic,
 * sequence, length). A reassembled UDP datagram arrives as a chain, so walk
 * it rather than assume one segment.
 */
static int ping_check_payload(void *pkt, uint32_t off, uint32_t len, uint32_t seq, int udp, void *opaque)
{
	uint32_t pos = 0;
	void *s;
	for (s = pkt; s && pos < len; s = iip_ops_pkt_scatter_gather_chain_get_next(s, opaque)) {
		const uint8_t *d = iip_ops_pkt_get_data(s, opaque);
		uint32_t n = iip_ops_pkt_get_len(s, opaque), i;
		if (off >= n) {
			off -= n;
			continue;
		}
		for (i = off; i < n && pos < len; i++, pos++)
			if (pos >= 16 && d[i] != ping_byte(seq, pos, udp))
				return 0;
		off = 0;
	}
	return pos == len;
}

/* fills our 16-byte payload header: magic, sequence, length, zero */
static void ping_write_header(uint8_t *p, uint32_t seq, uint32_t len)
{
	uint32_t w[4];
	w[0] = htonl(PING_MAGIC);
	w[1] = htonl(seq);
	w[2] = htonl(len);
	w[3] = 0;
	memcpy(p, w, 16);
}

static int ping_read_header(void *pkt, uint32_t off, uint32_t *seq, uint32_t *len, void *opaque)
{
	uint8_t h[16];
	uint32_t got = 0, w[4];
	void *s;
	for (s = pkt; s && got < 16; s = iip_ops_pkt_scatter_gather_chain_get_next(s, opaque)) {
		const uint8_t *d = iip_ops_pkt_get_data(s, opaque);
		uint32_t n = iip_ops_pkt_get_len(s, opaque);
		if (off >= n) {
			off -= n;
			continue;
		}
		while (off < n && got < 16)
			h[got++] = d[off++];
		off = 0;
	}
	if (got < 16)
		return 0;
	memcpy(w, h, 16);
	if (ntohl(w[0]) != PING_MAGIC)
		return 0;
	*seq = ntohl(w[1]);
	*len = ntohl(w[2]);
	return 1;
}

/* one's complement sum (RFC 1071), for the ICMP message we build ourselves */
static uint16_t ping_csum(const uint8_t *p, uint32_t len)
{
	uint32_t s = 0, i;
	for (i = 0; i + 1 < len; i += 2)
		s += (uint32_t) (p[i] << 8 | p[i + 1]);
	if (len & 1)
		s += (uint32_t) p[len - 1] << 8;
	while (s >> 16)
		s = (s & 0xffff) + (s >> 16);
	return htons((uint16_t) ~s);
}

static void ping_rtt_add(struct ping_rtt *r, uint64_t ns)
{
	if (!r->n || ns < r->min_ns)
		r->min_ns = ns;
	if (ns > r->max_ns)
		r->max_ns = ns;
	r->sum_ns += ns;
	r->n++;
}

/* ---- sending ---------------------------------------------------------------- */

/*
 * An ICMP echo request, built whole by the application: Ethernet header via
 * iip_ops_l2_hdr_craft, then the IPv4 and ICMP headers through the stack's
 * structs and PB_* accessors (which need a variable named opaque), checksums
 * computed here, handed to the backend with iip_ops_l2_push + flush.
 */
static void ping_send_icmp(struct ping_app *a, uint32_t seq, void *opaque)
{
	uint16_t plen = ping_len(a, seq, 0), l2 = 0, i;
	void *pkt = iip_ops_pkt_alloc(opaque);
	struct iip_ip4_hdr *ip;
	struct iip_icmp_hdr *icmp;
	uint8_t *payload;
	if (!pkt)
		return; /* pool exhausted: the retry timer tries again */
	iip_ops_l2_hdr_craft(pkt, a->mac, a->target_mac, htons(IIP_ETHERTYPE_IP4), opaque);
	l2 = iip_ops_l2_hdr_len(pkt, opaque);
	ip = PB_IP4(pkt);
	memset(ip, 0, sizeof(*ip));
	ip->vl = 0x45;
	ip->len_be = htons((uint16_t) (sizeof(*ip) + sizeof(*icmp) + plen));
	ip->id_be = htons((uint16_t) seq);
	ip->off_be = htons(IIP_IP4_OFF_DF);
	ip->ttl = 64;
	ip->proto = IIP_IP4_PROTO_ICMP;
	ip->src_be = a->ip4_be;
	ip->dst_be = a->target_be;
	ip->csum_be = ping_csum((const uint8_t *) ip, sizeof(*ip));
	icmp = PB_ICMP(pkt);
	icmp->type = IIP_ICMP_TYPE_ECHO_REQUEST;
	icmp->code = 0;
	icmp->csum_be = 0;
	icmp->echo.id_be = htons(a->icmp_id);
	icmp->echo.seq_be = htons((uint16_t) seq);
	payload = (uint8_t *) icmp + sizeof(*icmp);
	ping_write_header(payload, seq, plen);
	for (i = 16; i < plen; i++)
		payload[i] = ping_byte(seq, i, 0);
	icmp->csum_be = ping_csum((const uint8_t *) icmp, (uint32_t) sizeof(*icmp) + plen);
	iip_ops_pkt_set_len(pkt, (uint16_t) (l2 + sizeof(*ip) + sizeof(*icmp) + plen), opaque);
	iip_ops_l2_push(pkt, opaque);
	iip_ops_l2_flush(opaque);
}

/* a UDP datagram: the packet holds only the payload; the stack adds headers */
static void ping_send_udp(void *workspace, struct ping_app *a, uint32_t seq, void *opaque)
{
	uint16_t plen = ping_len(a, seq, 1), i;
	void *pkt = iip_ops_pkt_alloc(opaque);
	uint8_t *p;
	if (!pkt)
		return;
	p = iip_ops_pkt_get_data(pkt, opaque);
	ping_write_header(p, seq, plen);
	for (i = 16; i < plen; i++)
		p[i] = ping_byte(seq, i, 1);
	iip_ops_pkt_set_len(pkt, plen, opaque);
	/* non-zero: refused, the packet is still ours (see stack/udp.c) */
	if (iip_udp_send(workspace, a->mac, a->ip4_be, htons(40000), a->target_mac, a->target_be, a->port_be, pkt, opaque))
		iip_ops_pkt_free(pkt, opaque);
}

/* sends what is due for one protocol: new sequence numbers within the
 * window, and resends of those unanswered for retry_ns */
static void ping_pump(void *workspace, struct ping_app *a, int udp, uint64_t now, uint64_t *wake_ns, void *opaque)
{
	struct ping_slot *slots = udp ? a->udp : a->icmp;
	uint32_t *next = udp ? &a->udp_next : &a->icmp_next;
	uint32_t s, in_flight = 0;
	for (s = 0; s < *next; s++) {
		struct ping_slot *sl = &slots[s];
		if (sl->answered || sl->tries >= PING_MAX_TRIES)
			continue;
		in_flight++;
		if (now - sl->last_sent_ns >= a->retry_ns) {
			sl->tries++;
			if (sl->tries == PING_MAX_TRIES) {
				a->gave_up++;
				continue;
			}
			a->resent++;
			sl->last_sent_ns = now;
			if (udp)
				ping_send_udp(workspace, a, s, opaque);
			else
				ping_send_icmp(a, s, opaque);
		}
		if (sl->last_sent_ns + a->retry_ns < *wake_ns)
			*wake_ns = sl->last_sent_ns + a->retry_ns;
	}
	while (*next < a->count && in_flight < a->window) {
		struct ping_slot *sl = &slots[*next];
		sl->first_sent_ns = sl->last_sent_ns = now;
		sl->tries = 1;
		if (udp)
			ping_send_udp(workspace, a, *next, opaque);
		else
			ping_send_icmp(a, *next, opaque);
		if (now + a->retry_ns < *wake_ns)
			*wake_ns = now + a->retry_ns;
		(*next)++;
		in_flight++;
	}
}

/* ---- the application contract (COMPAT.md section 3) ------------------------- */

static void ping_usage(const char *prog)
{
	fprintf(stderr,
		"usage (per host): %s [-e SEC]                      responder\n"
		"                  %s -s IP [-n COUNT] [-l MAXLEN] [-w WINDOW] [-r RETRY_MS] [-p PORT]   pinger\n"
		"  -n COUNT   echo requests of each kind (ICMP and UDP), 1..%d (default 10)\n"
		"  -l MAXLEN  largest payload in bytes, 16..1472 (default 1400)\n"
		"  -w WINDOW  requests in flight per kind (default 8)\n"
		"  -r MS      resend an unanswered request after MS ms (default 200)\n"
		"  -p PORT    UDP echo port (default 7)\n"
		"  -e SEC     responder: stop after SEC seconds without traffic (default: never)\n",
		prog, prog, PING_MAX_COUNT);
}

static long ping_num(const char *s, long min, long max, int *err)
{
	char *end;
	long v = strtol(s, &end, 10);
	if (*s == '\0' || *end || v < min || v > max)
		*err = 1;
	return v;
}

static void *__app_init(int argc, char *const *argv)
{
	struct ping_app *a = calloc(1, sizeof(*a));
	int opt, err = 0;
	struct in_addr in;
	if (!a) {
		fprintf(stderr, "ping_udp: out of memory\n");
		exit(1);
	}
	a->count = 10;
	a->max_len = 1400;
	a->window = 8;
	a->retry_ns = 200000000ull;
	a->port_be = htons(7);
	while ((opt = getopt(argc, argv, "s:n:l:w:r:p:e:h")) != -1) {
		switch (opt) {
		case 's':
			if (inet_pton(AF_INET, optarg, &in) != 1) {
				fprintf(stderr, "ping_udp: -s '%s' is not an IPv4 address\n", optarg);
				err = 1;
			}
			a->target_be = in.s_addr;
			a->pinger = 1;
			break;
		case 'n': a->count = (uint32_t) ping_num(optarg, 1, PING_MAX_COUNT, &err); break;
		case 'l': a->max_len = (uint16_t) ping_num(optarg, 16, 1472, &err); break;
		case 'w': a->window = (uint32_t) ping_num(optarg, 1, 4096, &err); break;
		case 'r': a->retry_ns = (uint64_t) ping_num(optarg, 1, 600000, &err) * 1000000ull; break;
		case 'p': a->port_be = htons((uint16_t) ping_num(optarg, 1, 65535, &err)); break;
		case 'e': a->idle_stop_ns = (uint64_t) ping_num(optarg, 1, 86400, &err) * 1000000000ull; break;
		default: err = 1; break;
		}
	}
	if (err || optind != argc) {
		ping_usage(argv[0]);
		exit(2);
	}
	if (a->pinger) {
		a->icmp = calloc(a->count, sizeof(*a->icmp));
		a->udp = calloc(a->count, sizeof(*a->udp));
		if (!a->icmp || !a->udp) {
			fprintf(stderr, "ping_udp: out of memory\n");
			exit(1);
		}
	}
	return a;
}

static void *__app_thread_init(void *workspace, uint16_t core_id, void *opaque)
{
	struct ping_app *a = ping_of(opaque);
	(void) workspace;
	a->icmp_id = (uint16_t) (0x1000 + core_id);
	return a; /* one thread per host: the thread state is the global state */
}

static void __app_loop(void *workspace, uint8_t mac[], uint32_t ip4_be, uint32_t *next_us, void *opaque)
{
	struct ping_app *a = ping_of(opaque);
	uint64_t now = ping_now(opaque), wake = UINT64_MAX;
	memcpy(a->mac, mac, 6);
	a->ip4_be = ip4_be;
	if (!a->started_ns)
		a->started_ns = a->last_activity_ns = now;
	if (!a->pinger || a->failed)
		return;
	if (!a->target_resolved) {
		/* the stack keeps no neighbour table: ask, and wait for iip_ops_arp_reply */
		if (!a->arp_last_ns || now - a->arp_last_ns >= PING_ARP_RETRY_NS) {
			if (a->arp_tries++ == PING_ARP_TRIES) {
				fprintf(stderr, "ping_udp: no ARP reply from the target after %d requests\n", PING_ARP_TRIES);
				a->failed = 1;
				return;
			}
			iip_arp_request(workspace, mac, ip4_be, a->target_be, opaque);
			a->arp_last_ns = now;
		}
		wake = a->arp_last_ns + PING_ARP_RETRY_NS;
	} else {
		ping_pump(workspace, a, 0, now, &wake, opaque);
		ping_pump(workspace, a, 1, now, &wake, opaque);
	}
	if (wake != UINT64_MAX) {
		uint64_t us = wake > now ? (wake - now + 999) / 1000 : 0;
		if (us < *next_us)
			*next_us = (uint32_t) us;
	}
}

static uint8_t __app_should_stop(void *opaque)
{
	struct ping_app *a = ping_of(opaque);
	if (!a->pinger)
		return a->idle_stop_ns && a->started_ns && ping_now(opaque) - a->last_activity_ns >= a->idle_stop_ns;
	if (a->failed)
		return 1;
	return a->target_resolved && a->icmp_next == a->count && a->udp_next == a->count &&
	       a->icmp_done + a->udp_done + a->gave_up == 2 * a->count;
}

static void ping_print_rtt(const char *what, const struct ping_app *a, uint32_t done, const struct ping_rtt *r)
{
	printf("ping_udp: %s: %u/%u replies", what, done, a->count);
	if (r->n)
		printf(", rtt min/avg/max = %.1f/%.1f/%.1f us", (double) r->min_ns / 1e3,
		       (double) r->sum_ns / (double) r->n / 1e3, (double) r->max_ns / 1e3);
	printf("\n");
}

static void __app_exit(void *app_global)
{
	struct ping_app *a = app_global;
	if (a->pinger) {
		int ok = !a->failed && a->icmp_done == a->count && a->udp_done == a->count && !a->bad_replies;
		ping_print_rtt("icmp echo", a, a->icmp_done, &a->icmp_rtt);
		ping_print_rtt("udp echo", a, a->udp_done, &a->udp_rtt);
		printf("ping_udp: summary: %llu payload bytes checked, %llu bad, %llu duplicate replies, %llu resent, "
		       "%llu given up\n",
		       (unsigned long long) a->bytes_checked, (unsigned long long) a->bad_replies,
		       (unsigned long long) a->dup_replies, (unsigned long long) a->resent,
		       (unsigned long long) a->gave_up);
		printf("ping_udp: result: %s\n", ok ? "ok" : "FAILED");
	} else {
		printf("ping_udp: responder: %llu UDP datagrams echoed, %llu refused\n",
		       (unsigned long long) a->udp_echoed, (unsigned long long) a->udp_echo_refused);
	}
	free(a->icmp);
	free(a->udp);
	free(a);
}

/* ---- events from the stack ------------------------------------------------------ */

/* an ARP reply addressed to us: fill the application's ARP table */
static void iip_ops_arp_reply(void *context, void *pkt, void *opaque)
{
	struct ping_app *a = ping_of(opaque);
	uint32_t sender;
	(void) context;
	memcpy(&sender, PB_ARP_IP_SENDER(pkt), 4);
	if (a->pinger && sender == a->target_be && !a->target_resolved) {
		memcpy(a->target_mac, PB_ARP_HW_SENDER(pkt), 6);
		a->target_resolved = 1;
	}
	/* the stack frees pkt after we return */
}

/* one of our echo requests came back */
static void iip_ops_icmp_reply(void *context, void *pkt, void *opaque)
{
	struct ping_app *a = ping_of(opaque);
	struct iip_icmp_hdr *icmp = PB_ICMP(pkt);
	uint32_t seq, len, off;
	uint64_t now = ping_now(opaque);
	(void) context;
	a->last_activity_ns = now;
	if (!a->pinger || ntohs(icmp->echo.id_be) != a->icmp_id)
		return; /* not ours */
	off = (uint32_t) ((uint8_t *) PB_ICMP_PAYLOAD(pkt) - (uint8_t *) iip_ops_pkt_get_data(pkt, opaque));
	if (!ping_read_header(pkt, off, &seq, &len, opaque) || seq >= a->count || seq != ntohs(icmp->echo.seq_be) ||
	    len != ping_len(a, seq, 0) || PB_ICMP_PAYLOAD_LEN(pkt) != len ||
	    !ping_check_payload(pkt, off, len, seq, 0, opaque)) {
		a->bad_replies++;
		return;
	}
	if (a->icmp[seq].answered) {
		a->dup_replies++;
		return;
	}
	a->icmp[seq].answered = 1;
	a->icmp_done++;
	a->bytes_checked += len;
	ping_rtt_add(&a->icmp_rtt, now - a->icmp[seq].last_sent_ns);
}

static void iip_ops_udp_payload(void *context, void *pkt, void *opaque)
{
	struct ping_app *a = ping_of(opaque);
	struct iip_ip4_hdr *ip = PB_IP4(pkt);
	struct iip_udp_hdr *udp = PB_UDP(pkt);
	uint32_t off = (uint32_t) ((uint8_t *) PB_UDP_PAYLOAD(pkt) - (uint8_t *) iip_ops_pkt_get_data(pkt, opaque));
	uint32_t len = PB_UDP_PAYLOAD_LEN(pkt), seq, hlen;
	uint64_t now = ping_now(opaque);
	a->last_activity_ns = now;
	if (!a->pinger) {
		/* responder: copy the payload (it may be a chain) into a new packet
		 * and send it back where it came from */
		void *out = iip_ops_pkt_alloc(opaque), *s;
		uint8_t *d, peer_mac[6];
		uint32_t pos = 0;
		if (!out || udp->dst_be != a->port_be) {
			if (out)
				iip_ops_pkt_free(out, opaque);
			return;
		}
		d = iip_ops_pkt_get_data(out, opaque);
		for (s = pkt; s && pos < len; s = iip_ops_pkt_scatter_gather_chain_get_next(s, opaque)) {
			const uint8_t *sd = iip_ops_pkt_get_data(s, opaque);
			uint32_t n = iip_ops_pkt_get_len(s, opaque), k;
			if (off >= n) {
				off -= n;
				continue;
			}
			k = n - off < len - pos ? n - off : len - pos;
			memcpy(d + pos, sd + off, k);
			pos += k;
			off = 0;
		}
		iip_ops_pkt_set_len(out, (uint16_t) pos, opaque);
		memcpy(peer_mac, iip_ops_l2_hdr_src_ptr(pkt, opaque), 6);
		if (iip_udp_send(context, a->mac, ip->dst_be, udp->dst_be, peer_mac, ip->src_be, udp->src_be, out, opaque)) {
			iip_ops_pkt_free(out, opaque);
			a->udp_echo_refused++;
		} else {
			a->udp_echoed++;
		}
		return;
	}
	if (ip->src_be != a->target_be || udp->src_be != a->port_be)
		return;
	if (!ping_read_header(pkt, off, &seq, &hlen, opaque) || seq >= a->count || hlen != len ||
	    len != ping_len(a, seq, 1) || !ping_check_payload(pkt, off, len, seq, 1, opaque)) {
		a->bad_replies++;
		return;
	}
	if (a->udp[seq].answered) {
		a->dup_replies++;
		return;
	}
	a->udp[seq].answered = 1;
	a->udp_done++;
	a->bytes_checked += len;
	ping_rtt_add(&a->udp_rtt, now - a->udp[seq].last_sent_ns);
}

/* TCP is not used by this program: refuse connections, ignore the rest */
static uint8_t iip_ops_tcp_accept(void *context, void *pkt, void *opaque)
{
	(void) context; (void) pkt; (void) opaque;
	return 0;
}

static void *iip_ops_tcp_accepted(void *context, void *handle, void *pkt, void *opaque)
{
	(void) context; (void) handle; (void) pkt; (void) opaque;
	return NULL;
}

static void *iip_ops_tcp_connected(void *context, void *handle, void *pkt, void *opaque)
{
	(void) context; (void) handle; (void) pkt; (void) opaque;
	return NULL;
}

static void iip_ops_tcp_payload(void *context, void *handle, void *pkt, void *tcp_opaque, uint16_t head_off,
				uint16_t tail_off, void *opaque)
{
	(void) context; (void) handle; (void) pkt; (void) tcp_opaque; (void) head_off; (void) tail_off; (void) opaque;
}

static void iip_ops_tcp_acked(void *context, void *handle, void *pkt, void *tcp_opaque, void *opaque)
{
	(void) context; (void) handle; (void) pkt; (void) tcp_opaque; (void) opaque;
}

static void iip_ops_tcp_closed(void *handle, uint8_t local_mac[], uint32_t local_ip4_be, uint16_t local_port_be,
			       uint8_t peer_mac[], uint32_t peer_ip4_be, uint16_t peer_port_be, void *tcp_opaque,
			       void *opaque)
{
	(void) handle; (void) local_mac; (void) local_ip4_be; (void) local_port_be; (void) peer_mac;
	(void) peer_ip4_be; (void) peer_port_be; (void) tcp_opaque; (void) opaque;
}

/* the backend: its callbacks and __iosub_main */
#include IOSUB_MAIN_C

int main(int argc, char *const *argv)
{
	return __iosub_main(argc, argv);
}
