/*
 * apps/examples/http_server — a small HTTP/1.1 server on the iip stack, for
 * trying backends against real clients (curl, wrk, ab) and for the interop
 * tests.
 *
 * What it does:
 *  - listens on one TCP port (-p), refuses SYNs to any other port (the
 *    stack answers them with RST, so clients see "connection refused");
 *  - reads requests (GET and HEAD; anything else gets 501 and a close),
 *    pipelined or one after the other on a keep-alive connection;
 *  - takes uploads (POST or PUT with Content-Length; "Expect: 100-continue"
 *    is answered): the body must follow the same byte pattern as the
 *    responses (below) and is checked byte by byte, not kept; the answer
 *    is 200 "received N bytes, pattern ok" or 422 "... pattern mismatch at
 *    offset X" (this exercises the receive direction: flow control, LRO);
 *  - answers with a generated body: -b BYTES by default, or N bytes for a
 *    path "/N" (digits only). Byte i of every body is
 *        (uint8_t) (i * 131 + (i >> 11))
 *    so a client can check what it got without a copy of the data;
 *  - keeps the connection open (HTTP/1.1) unless the request says
 *    "Connection: close" or is HTTP/1.0 without "Connection: keep-alive";
 *  - closes its side when the client closed its own (FIN), after the
 *    response in progress is queued.
 *
 * Sending: a response goes out in MSS-sized packets, at most -w packets
 * per connection not yet acknowledged (so many connections share the
 * packet pool). Packets are queued from the stack's callbacks (request
 * received, data acknowledged), i.e. inside iip_run, so that the stack
 * sends each batch at the end of the run (TSO frames when the NIC has it);
 * __app_loop only retries what the pool or the send queue refused.
 *
 * Options (after the backend's "--"): [-p PORT] [-b BYTES] [-w PACKETS] [-v]
 * BYTES takes a K, M or G suffix (binary: 10M = 10 MiB).
 *
 * Build with any backend:  IOSUB_DIR=../../../io/tap make
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <ctype.h>
#include <getopt.h>
#include <pthread.h>
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

#define HS_REQ_MAX 8192          /* longest request head we accept */
#define HS_MAX_THREADS 64
#define HS_RETRY_US 200          /* come back soon when the pool or queue was full */

struct hs_conn {
	void *handle;
	struct hs_conn *prev, *next;  /* the thread's list of connections with output pending */
	int in_active;
	struct hs_conn *all_prev, *all_next; /* every open connection of the thread */
	char req[HS_REQ_MAX];
	uint32_t req_len;
	/* the response being sent */
	int sending;
	char hdr[256];
	uint32_t hdr_len, hdr_off;
	uint64_t body_len, body_off;
	int close_after;              /* the request asked for it */
	int interim;                  /* the response being sent is "100 Continue" */
	/* an upload (POST/PUT) being received: its body is checked, not kept */
	uint64_t upload_left, upload_off, upload_bad_at;
	int upload_bad;
	int peer_fin;                 /* the client closed its direction */
	int closed_by_us;
	uint32_t inflight;            /* packets handed to iip_tcp_send, not yet acknowledged */
};

struct hs_thread {
	uint16_t index;
	struct hs_conn *active;       /* connections with output to queue */
	struct hs_conn *all;          /* every connection, freed at exit if still open */
	uint64_t accepted, closed, requests, bad_requests, bytes_queued, send_refused;
	uint64_t uploads, upload_bytes, upload_bad;
	uint32_t open_now;
};

struct hs_app {
	uint16_t port_be;
	uint64_t body_len;
	uint32_t window;
	int verbose;
	pthread_mutex_t lock;
	struct hs_thread *threads[HS_MAX_THREADS];
	uint16_t nthreads;
};

static struct hs_app *hs_app_of(void *opaque)
{
	return (struct hs_app *) ((void **) opaque)[1];
}

static struct hs_thread *hs_thread_of(void *opaque)
{
	return (struct hs_thread *) ((void **) opaque)[2];
}

static uint8_t hs_body_byte(uint64_t i)
{
	return (uint8_t) (i * 131u + (i >> 11));
}

/* ---- the list of connections with output pending -------------------------- */

static void hs_activate(struct hs_thread *t, struct hs_conn *c)
{
	if (c->in_active)
		return;
	c->in_active = 1;
	c->prev = NULL;
	c->next = t->active;
	if (t->active)
		t->active->prev = c;
	t->active = c;
}

static void hs_deactivate(struct hs_thread *t, struct hs_conn *c)
{
	if (!c->in_active)
		return;
	if (c->prev)
		c->prev->next = c->next;
	else
		t->active = c->next;
	if (c->next)
		c->next->prev = c->prev;
	c->in_active = 0;
	c->prev = c->next = NULL;
}

/* ---- requests --------------------------------------------------------------------- */

/* case-insensitive search of needle in the n bytes at hay */
static int hs_contains_ci(const char *hay, size_t n, const char *needle)
{
	size_t k = strlen(needle), i;
	for (i = 0; i + k <= n; i++)
		if (!strncasecmp(hay + i, needle, k))
			return 1;
	return 0;
}

static void hs_start_response(struct hs_conn *c, int status, const char *reason, uint64_t len, int head_only)
{
	c->hdr_len = (uint32_t) snprintf(c->hdr, sizeof(c->hdr),
					 "HTTP/1.1 %d %s\r\nContent-Length: %llu\r\nContent-Type: application/octet-stream\r\n"
					 "Connection: %s\r\n\r\n",
					 status, reason, (unsigned long long) len, c->close_after ? "close" : "keep-alive");
	c->hdr_off = 0;
	c->body_len = head_only ? 0 : len;
	c->body_off = 0;
	c->sending = 1;
}

/* a response whose short text body travels in the header buffer */
static void hs_start_text_response(struct hs_conn *c, int status, const char *reason, const char *text)
{
	c->hdr_len = (uint32_t) snprintf(c->hdr, sizeof(c->hdr),
					 "HTTP/1.1 %d %s\r\nContent-Length: %u\r\nContent-Type: text/plain\r\n"
					 "Connection: %s\r\n\r\n%s",
					 status, reason, (unsigned) strlen(text), c->close_after ? "close" : "keep-alive", text);
	if (c->hdr_len >= sizeof(c->hdr))
		c->hdr_len = sizeof(c->hdr) - 1;
	c->hdr_off = 0;
	c->body_len = c->body_off = 0;
	c->sending = 1;
}

/* checks n upload bytes against the body pattern; starts the answer when
 * the whole body is in. Returns the number of bytes it took. */
static uint32_t hs_upload_take(struct hs_thread *t, struct hs_conn *c, const uint8_t *d, uint32_t n)
{
	uint32_t j;
	char text[96];
	if (n > c->upload_left)
		n = (uint32_t) c->upload_left;
	for (j = 0; j < n; j++)
		if (!c->upload_bad && d[j] != hs_body_byte(c->upload_off + j)) {
			c->upload_bad = 1;
			c->upload_bad_at = c->upload_off + j;
		}
	c->upload_off += n;
	c->upload_left -= n;
	t->upload_bytes += n;
	if (!c->upload_left) {
		t->uploads++;
		if (c->upload_bad) {
			t->upload_bad++;
			snprintf(text, sizeof(text), "received %llu bytes, pattern mismatch at offset %llu\n",
				 (unsigned long long) c->upload_off, (unsigned long long) c->upload_bad_at);
			hs_start_text_response(c, 422, "Unprocessable Content", text);
		} else {
			snprintf(text, sizeof(text), "received %llu bytes, pattern ok\n", (unsigned long long) c->upload_off);
			hs_start_text_response(c, 200, "OK", text);
		}
	}
	return n;
}

/* the value of a header (name given lower-case with ':'), 0 if absent or bad */
static int hs_header_u64(const char *req, uint32_t len, const char *name, uint64_t *out)
{
	size_t k = strlen(name);
	uint32_t i;
	for (i = 0; i + k < len; i++) {
		if (req[i] == '\n' && !strncasecmp(req + i + 1, name, k)) {
			const char *v = req + i + 1 + k;
			char *end;
			while (*v == ' ' || *v == '\t')
				v++;
			if (!isdigit((unsigned char) *v))
				return 0;
			*out = strtoull(v, &end, 10);
			return *end == '\r' || *end == ' ' || *end == '\t';
		}
	}
	return 0;
}

/*
 * Takes one complete request off the front of c->req and starts its
 * response. Returns 1 if it did, 0 if no complete request is there yet.
 */
static int hs_next_request(struct hs_app *a, struct hs_thread *t, struct hs_conn *c)
{
	char *end = NULL, method[16], path[512], version[16];
	uint32_t i, used;
	uint64_t len = a->body_len;
	int head;
	for (i = 0; i + 3 < c->req_len; i++)
		if (!memcmp(c->req + i, "\r\n\r\n", 4)) {
			end = c->req + i;
			break;
		}
	if (!end)
		return 0;
	used = (uint32_t) (end - c->req) + 4;
	t->requests++;
	method[0] = path[0] = version[0] = '\0';
	{
		char line[600];
		uint32_t ll = 0;
		while (ll < used && ll < sizeof(line) - 1 && c->req[ll] != '\r')
			ll++;
		memcpy(line, c->req, ll);
		line[ll] = '\0';
		if (sscanf(line, "%15s %511s %15s", method, path, version) != 3) {
			method[0] = '\0';
		}
	}
	c->close_after = 0;
	if (!strncmp(version, "HTTP/1.0", 8))
		c->close_after = !hs_contains_ci(c->req, used, "\nconnection: keep-alive");
	if (hs_contains_ci(c->req, used, "\nconnection: close"))
		c->close_after = 1;
	head = !strcmp(method, "HEAD");
	if (path[0] == '/' && path[1] && strspn(path + 1, "0123456789") == strlen(path + 1) && strlen(path + 1) <= 12)
		len = strtoull(path + 1, NULL, 10);
	if ((!strcmp(method, "POST") || !strcmp(method, "PUT")) && !strncmp(version, "HTTP/1.", 7) &&
	    !hs_contains_ci(c->req, used, "\ntransfer-encoding:") &&
	    hs_header_u64(c->req, used, "content-length:", &c->upload_left)) {
		uint32_t took;
		int expect = hs_contains_ci(c->req, used, "\nexpect: 100-continue");
		c->upload_off = 0;
		c->upload_bad = 0;
		if (a->verbose)
			printf("http_server: thread %u: %s %s, %llu bytes to check\n", t->index, method, path,
			       (unsigned long long) c->upload_left);
		memmove(c->req, c->req + used, c->req_len - used);
		c->req_len -= used;
		if (!c->upload_left) { /* an empty body: answered at once */
			c->upload_left = 0;
			t->uploads++;
			hs_start_text_response(c, 200, "OK", "received 0 bytes, pattern ok\n");
			return 1;
		}
		took = hs_upload_take(t, c, (const uint8_t *) c->req, c->req_len); /* body bytes already here */
		memmove(c->req, c->req + took, c->req_len - took);
		c->req_len -= took;
		if (c->sending)
			return 1;
		if (expect) { /* the client waits for this before it sends the body */
			c->hdr_len = (uint32_t) snprintf(c->hdr, sizeof(c->hdr), "HTTP/1.1 100 Continue\r\n\r\n");
			c->hdr_off = 0;
			c->body_len = c->body_off = 0;
			c->interim = 1;
			c->sending = 1;
			return 1;
		}
		return 0;
	}
	if ((strcmp(method, "GET") && !head) || strncmp(version, "HTTP/1.", 7) ||
	    hs_contains_ci(c->req, used, "\ncontent-length:") || hs_contains_ci(c->req, used, "\ntransfer-encoding:")) {
		t->bad_requests++;
		c->close_after = 1;
		hs_start_response(c, 501, "Not Implemented", 0, 0);
	} else {
		hs_start_response(c, 200, "OK", len, head);
	}
	if (a->verbose)
		printf("http_server: thread %u: %s %s -> %llu bytes%s\n", t->index, method, path,
		       (unsigned long long) c->body_len, c->close_after ? ", close" : "");
	memmove(c->req, c->req + used, c->req_len - used);
	c->req_len -= used;
	return 1;
}

/* ---- sending ------------------------------------------------------------------------- */

static void hs_close(void *ws, struct hs_conn *c, void *opaque)
{
	if (c->closed_by_us)
		return;
	c->closed_by_us = 1;
	iip_tcp_close(ws, c->handle, opaque);
}

/*
 * Queues as much of the response as the per-connection window allows;
 * when it is all queued, closes or moves to the next request. Returns 1
 * when it stopped because the stack or the pool refused (try again soon).
 */
static int hs_pump(void *ws, struct hs_app *a, struct hs_thread *t, struct hs_conn *c, void *opaque)
{
	struct iip_tcp_info info;
	uint32_t chunk;
	iip_tcp_get_info(ws, c->handle, &info);
	chunk = info.snd_mss ? info.snd_mss : 536;
	if (chunk > 1460)
		chunk = 1460;
	for (;;) {
		while (c->sending && (c->hdr_off < c->hdr_len || c->body_off < c->body_len)) {
			void *pkt;
			uint8_t *d;
			uint32_t n = 0;
			if (c->inflight >= a->window)
				return 0; /* iip_ops_tcp_acked brings us back */
			pkt = iip_ops_pkt_alloc(opaque);
			if (!pkt) {
				t->send_refused++;
				return 1;
			}
			d = iip_ops_pkt_get_data(pkt, opaque);
			if (c->hdr_off < c->hdr_len) {
				n = c->hdr_len - c->hdr_off < chunk ? c->hdr_len - c->hdr_off : chunk;
				memcpy(d, c->hdr + c->hdr_off, n);
			}
			{
				/* body bytes after the header part of this packet */
				uint32_t hdr_part = n;
				uint64_t room = chunk - hdr_part, left = c->body_len - c->body_off, k, j;
				if (left < room)
					room = left;
				for (j = 0, k = c->body_off; j < room; j++, k++)
					d[hdr_part + j] = hs_body_byte(k);
				n = hdr_part + (uint32_t) room;
				iip_ops_pkt_set_len(pkt, (uint16_t) n, opaque);
				if (iip_tcp_send(ws, c->handle, pkt, 0, opaque)) {
					iip_ops_pkt_free(pkt, opaque);
					t->send_refused++;
					return 1;
				}
				c->hdr_off += hdr_part;
				c->body_off += room;
			}
			c->inflight++;
			t->bytes_queued += n;
		}
		/* this response is queued */
		c->sending = 0;
		if (c->interim) { /* "100 Continue": the upload goes on */
			c->interim = 0;
			return 0;
		}
		if (c->close_after) {
			c->req_len = 0;
			hs_close(ws, c, opaque);
			return 0;
		}
		if (!hs_next_request(a, t, c)) {
			if (c->peer_fin)
				hs_close(ws, c, opaque);
			return 0;
		}
	}
}

/* ---- the application contract (COMPAT.md section 3) ------------------------------ */

static void hs_usage(const char *prog)
{
	fprintf(stderr,
		"usage: %s [backend options] -- [-p PORT] [-b BYTES] [-w PACKETS] [-v]\n"
		"  -p PORT     TCP port to serve (default 80)\n"
		"  -b BYTES    body of a response to \"/\" (K, M, G suffixes; default 1K);\n"
		"              \"/N\" serves N bytes; byte i is (uint8_t) (i * 131 + (i >> 11))\n"
		"  -w PACKETS  unacknowledged packets per connection (default 512)\n"
		"  -v          print every request\n",
		prog);
}

static int hs_parse_size(const char *s, uint64_t *out)
{
	char *end;
	unsigned long long v;
	if (!isdigit((unsigned char) s[0]))
		return -1;
	v = strtoull(s, &end, 10);
	switch (*end) {
	case 'K': case 'k': v <<= 10; end++; break;
	case 'M': case 'm': v <<= 20; end++; break;
	case 'G': case 'g': v <<= 30; end++; break;
	default: break;
	}
	if (*end || v > (1ull << 40))
		return -1;
	*out = v;
	return 0;
}

static void *__app_init(int argc, char *const *argv)
{
	struct hs_app *a = calloc(1, sizeof(*a));
	int opt, err = 0;
	unsigned long v;
	char *end;
	if (!a) {
		fprintf(stderr, "http_server: out of memory\n");
		exit(1);
	}
	a->port_be = htons(80);
	a->body_len = 1024;
	a->window = 512;
	pthread_mutex_init(&a->lock, NULL);
	while ((opt = getopt(argc, argv, "p:b:w:vh")) != -1) {
		switch (opt) {
		case 'p':
			v = strtoul(optarg, &end, 10);
			if (!isdigit((unsigned char) optarg[0]) || *end || v < 1 || v > 65535) {
				fprintf(stderr, "http_server: -p '%s': a port 1..65535\n", optarg);
				err = 1;
			}
			a->port_be = htons((uint16_t) v);
			break;
		case 'b':
			if (hs_parse_size(optarg, &a->body_len)) {
				fprintf(stderr, "http_server: -b '%s': bytes, e.g. 1024, 64K, 10M\n", optarg);
				err = 1;
			}
			break;
		case 'w':
			v = strtoul(optarg, &end, 10);
			if (!isdigit((unsigned char) optarg[0]) || *end || v < 1 || v > 65536) {
				fprintf(stderr, "http_server: -w '%s': packets 1..65536\n", optarg);
				err = 1;
			}
			a->window = (uint32_t) v;
			break;
		case 'v': a->verbose = 1; break;
		case 'h': hs_usage(argv[0]); exit(0);
		default: err = 1; break;
		}
	}
	if (err || optind != argc) {
		hs_usage(argv[0]);
		exit(2);
	}
	printf("http_server: port %u, body %llu bytes, window %u packets per connection\n", ntohs(a->port_be),
	       (unsigned long long) a->body_len, a->window);
	fflush(stdout);
	return a;
}

static void *__app_thread_init(void *workspace, uint16_t core_id, void *opaque)
{
	struct hs_app *a = hs_app_of(opaque);
	struct hs_thread *t = calloc(1, sizeof(*t));
	(void) workspace;
	if (!t) {
		fprintf(stderr, "http_server: out of memory\n");
		exit(1);
	}
	t->index = core_id;
	pthread_mutex_lock(&a->lock);
	if (a->nthreads < HS_MAX_THREADS)
		a->threads[a->nthreads++] = t;
	pthread_mutex_unlock(&a->lock);
	return t;
}

static void __app_loop(void *workspace, uint8_t mac[], uint32_t ip4_be, uint32_t *next_us, void *opaque)
{
	struct hs_app *a = hs_app_of(opaque);
	struct hs_thread *t = hs_thread_of(opaque);
	struct hs_conn *c = t->active, *next;
	int retry = 0;
	(void) mac;
	(void) ip4_be;
	for (; c; c = next) {
		next = c->next;
		hs_deactivate(t, c);
		if (hs_pump(workspace, a, t, c, opaque)) {
			hs_activate(t, c);
			retry = 1;
		}
	}
	if (retry && *next_us > HS_RETRY_US)
		*next_us = HS_RETRY_US;
}

static uint8_t __app_should_stop(void *opaque)
{
	(void) opaque;
	return 0; /* runs until the backend is told to stop (SIGINT/SIGTERM) */
}

static void __app_exit(void *app_global)
{
	struct hs_app *a = app_global;
	uint16_t i;
	for (i = 0; i < a->nthreads; i++) {
		struct hs_thread *t = a->threads[i];
		printf("http_server: thread %u: %llu connections accepted, %llu closed, %u open; %llu requests "
		       "(%llu bad), %llu bytes queued, %llu sends deferred; %llu uploads (%llu bad), %llu bytes\n",
		       t->index, (unsigned long long) t->accepted, (unsigned long long) t->closed, t->open_now,
		       (unsigned long long) t->requests, (unsigned long long) t->bad_requests,
		       (unsigned long long) t->bytes_queued, (unsigned long long) t->send_refused,
		       (unsigned long long) t->uploads, (unsigned long long) t->upload_bad,
		       (unsigned long long) t->upload_bytes);
		while (t->all) { /* still open when the backend stopped */
			struct hs_conn *c = t->all;
			t->all = c->all_next;
			free(c);
		}
		free(t);
	}
	pthread_mutex_destroy(&a->lock);
	free(a);
}

/* ---- events from the stack ------------------------------------------------------------ */

static uint8_t iip_ops_tcp_accept(void *context, void *pkt, void *opaque)
{
	(void) context;
	return PB_TCP(pkt)->dst_be == hs_app_of(opaque)->port_be;
}

static void *iip_ops_tcp_accepted(void *context, void *handle, void *pkt, void *opaque)
{
	struct hs_thread *t = hs_thread_of(opaque);
	struct hs_conn *c = calloc(1, sizeof(*c));
	(void) pkt;
	if (!c) { /* without state we cannot serve it: close at once */
		iip_tcp_close(context, handle, opaque);
		return NULL;
	}
	c->handle = handle;
	c->all_next = t->all;
	if (t->all)
		t->all->all_prev = c;
	t->all = c;
	t->accepted++;
	t->open_now++;
	return c;
}

static void *iip_ops_tcp_connected(void *context, void *handle, void *pkt, void *opaque)
{
	(void) context; (void) handle; (void) pkt; (void) opaque;
	return NULL; /* a server never connects */
}

/* new in-order bytes: copy them into the request buffer, then answer */
static void iip_ops_tcp_payload(void *context, void *handle, void *pkt, void *tcp_opaque, uint16_t head_off,
				uint16_t tail_off, void *opaque)
{
	struct hs_conn *c = tcp_opaque;
	struct hs_thread *t = hs_thread_of(opaque);
	uint32_t off, len, pos = 0;
	void *s;
	iip_tcp_rxbuf_consumed(context, handle, 1, opaque); /* copied below: the packet is free to go */
	if (!c)
		return;
	off = (uint32_t) (PB_TCP_PAYLOAD(pkt) - (uint8_t *) iip_ops_pkt_get_data(pkt, opaque)) + head_off;
	len = (uint32_t) PB_TCP_PAYLOAD_LEN(pkt) - head_off - tail_off;
	for (s = pkt; s && pos < len; s = iip_ops_pkt_scatter_gather_chain_get_next(s, opaque)) {
		const uint8_t *d = iip_ops_pkt_get_data(s, opaque);
		uint32_t n = iip_ops_pkt_get_len(s, opaque), k;
		if (off >= n) {
			off -= n;
			continue;
		}
		while (off < n && pos < len) {
			k = n - off < len - pos ? n - off : len - pos;
			if (c->upload_left && (!c->sending || c->interim)) { /* upload body: checked, not kept */
				k = hs_upload_take(t, c, d + off, k);
			} else {
				if (c->req_len + k > HS_REQ_MAX) { /* a request head this long is not ours to serve */
					t->bad_requests++;
					c->req_len = 0;
					hs_close(context, c, opaque);
					return;
				}
				memcpy(c->req + c->req_len, d + off, k);
				c->req_len += k;
			}
			pos += k;
			off += k;
		}
		off = 0;
	}
	if (PB_TCP_HDR_HAS_FIN(pkt))
		c->peer_fin = 1;
	if (c->closed_by_us)
		return;
	if (c->sending || hs_next_request(hs_app_of(opaque), t, c)) {
		/* queued now, inside iip_run, so the stack sends the batch at
		 * its end (as TSO frames when it can); if the pool or the queue
		 * is full, __app_loop tries again */
		if (hs_pump(context, hs_app_of(opaque), t, c, opaque))
			hs_activate(t, c);
	} else if (c->peer_fin)
		hs_close(context, c, opaque);
}

static void iip_ops_tcp_acked(void *context, void *handle, void *pkt, void *tcp_opaque, void *opaque)
{
	struct hs_conn *c = tcp_opaque;
	(void) context; (void) handle; (void) pkt;
	if (!c)
		return;
	if (c->inflight)
		c->inflight--;
	/* refill the window; the acknowledged packet is already off the
	 * stack's queue, and what we add goes out at the end of iip_run */
	if (c->sending && !c->in_active && hs_pump(context, hs_app_of(opaque), hs_thread_of(opaque), c, opaque))
		hs_activate(hs_thread_of(opaque), c);
}

static void iip_ops_tcp_closed(void *handle, uint8_t local_mac[], uint32_t local_ip4_be, uint16_t local_port_be,
			       uint8_t peer_mac[], uint32_t peer_ip4_be, uint16_t peer_port_be, void *tcp_opaque,
			       void *opaque)
{
	struct hs_conn *c = tcp_opaque;
	struct hs_thread *t = hs_thread_of(opaque);
	(void) handle; (void) local_mac; (void) local_ip4_be; (void) local_port_be; (void) peer_mac;
	(void) peer_ip4_be; (void) peer_port_be;
	if (!c)
		return;
	hs_deactivate(t, c);
	if (c->all_prev)
		c->all_prev->all_next = c->all_next;
	else
		t->all = c->all_next;
	if (c->all_next)
		c->all_next->all_prev = c->all_prev;
	t->closed++;
	t->open_now--;
	free(c);
}

/* not used by a TCP server */
static void iip_ops_arp_reply(void *context, void *pkt, void *opaque)
{
	(void) context; (void) pkt; (void) opaque;
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
	return __iosub_main(argc, argv);
}
