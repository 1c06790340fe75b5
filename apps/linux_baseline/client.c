/*
 * Linux kernel baseline for the benchmarks: the client side, with the
 * options of bench-iip's client, on the Linux TCP/IP stack.
 *
 *   client -s SERVER -p PORT [-c CONNS] [-d DEPTH] [-g 1|2] [-l LEN | -m STRING]
 *          [-R LEN] [-t SECONDS] [-r RATE] [-n 6|17] [-T CORES] [-k] [-K PORT]
 *
 * Connections are spread round robin over the threads of -T (one pinned
 * thread per core, each with its own epoll loop over non-blocking sockets).
 *
 * Ping-pong (-g 1): every connection keeps -d requests outstanding; a
 * request's latency runs from the moment its first byte is handed to the
 * kernel to the moment its reply is complete (-R bytes on TCP, default the
 * request length; one datagram on UDP), and every one is recorded in a
 * histogram.  Burst (-g 2): connections send as fast as the socket accepts.
 * -r limits each thread to RATE requests (burst: payload writes) per second,
 * spread evenly rather than sent in clumps.
 *
 * Prints the bench-iip per-second lines; at the end a latency summary
 *   latency (us): p50 X p90 X p99 X p99.9 X (N samples)
 * and the total.  After -t seconds it stops, and with -k connects to the
 * server's remote-stop port (50000, or -K) to stop the server as well.
 */
#include "common.h" /* first: it defines _GNU_SOURCE */

#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <sys/epoll.h>
#include <sys/socket.h>
#include <unistd.h>

#include "latency_hist.h"
#include "stats.h"

enum { MODE_PINGPONG = 1, MODE_BURST = 2 };

/* a UDP request without an answer for this long is taken as lost */
#define UDP_LOSS_TIMEOUT_NS (1000000000ull)

/* threads that have returned; when all have (every connection failed), the
 * run ends early */
static atomic_uint threads_done;

struct client_conf {
	struct sockaddr_in server;
	int mode, proto;
	long conns, depth, duration_s, rate;
	size_t reply_len;
	int kill_server;
	uint16_t stop_port;
	struct bl_payload request;
	struct io_corelist cores;
};

struct conn {
	int fd;
	int want_out;         /* EPOLLOUT registered */
	int failed;
	/* requests granted (by depth and rate) but not fully written yet; the
	 * first one may be partly written (tx_off bytes) */
	long to_send;
	size_t tx_off;
	uint64_t tx_start_ns; /* when the first byte of the current request went out */
	/* send times of outstanding requests, oldest first (ring of depth) */
	uint64_t *sent_ns;
	long sent_head, outstanding;
	size_t rx_fill;       /* TCP: bytes of the current reply received */
	uint64_t last_progress_ns;
};

struct client_thread {
	const struct client_conf *conf;
	unsigned index;
	struct conn *conns;
	long num_conns;
	/* connections with a free request slot, one entry per slot (ping-pong) */
	long *ready;
	long ready_head, ready_count, ready_cap;
	double credit; /* rate limiting: requests that may be sent now */
	uint64_t credit_ns;
	struct bl_counters *counters;
	struct bl_hist *hist;
	uint64_t replies;
	long alive; /* connections that have not failed */
	int error;
	pthread_t thread;
};

static void ready_push(struct client_thread *t, long conn_index)
{
	t->ready[(t->ready_head + t->ready_count) % t->ready_cap] = conn_index;
	t->ready_count++;
}

static long ready_pop(struct client_thread *t)
{
	long c = t->ready[t->ready_head];
	t->ready_head = (t->ready_head + 1) % t->ready_cap;
	t->ready_count--;
	return c;
}

static void conn_fail(struct client_thread *t, struct conn *c, const char *what, int err)
{
	if (c->failed)
		return;
	c->failed = 1;
	fprintf(stderr, "client: thread %u: connection fd %d: %s: %s\n", t->index, c->fd, what,
		err ? strerror(err) : "closed by the server");
	close(c->fd);
	c->fd = -1;
	t->alive--;
	t->error = 1;
}

static void conn_set_out(struct client_thread *t, int epfd, struct conn *c, int want_out)
{
	struct epoll_event ev = { .events = EPOLLIN | (want_out ? EPOLLOUT : 0), .data.ptr = c };
	if (c->want_out == want_out)
		return;
	if (epoll_ctl(epfd, EPOLL_CTL_MOD, c->fd, &ev) != 0)
		conn_fail(t, c, "epoll_ctl", errno);
	c->want_out = want_out;
}

/* Writes granted requests until none is left or the socket is full. */
static void conn_flush(struct client_thread *t, int epfd, struct conn *c)
{
	const struct bl_payload *p = &t->conf->request;

	while (c->to_send > 0 && !c->failed) {
		if (c->tx_off == 0)
			c->tx_start_ns = bl_now_ns();
		ssize_t n = send(c->fd, p->data + c->tx_off, p->len - c->tx_off, MSG_NOSIGNAL);
		if (n < 0) {
			if (errno == EINTR)
				continue;
			if (errno == EAGAIN) {
				conn_set_out(t, epfd, c, 1);
				return;
			}
			conn_fail(t, c, "send", errno);
			return;
		}
		bl_count(&t->counters->tx_bytes, (uint64_t) n);
		c->tx_off += (size_t) n;
		if (c->tx_off < p->len)
			continue; /* TCP took part of it; try the rest */
		c->tx_off = 0;
		c->to_send--;
		bl_count(&t->counters->tx_ops, 1);
		if (t->conf->mode == MODE_PINGPONG) {
			c->sent_ns[(c->sent_head + c->outstanding) % t->conf->depth] = c->tx_start_ns;
			c->outstanding++;
		}
	}
	if (!c->failed)
		conn_set_out(t, epfd, c, 0);
}

/* A reply is complete: record its latency, free its slot. */
static void conn_reply_done(struct client_thread *t, struct conn *c, uint64_t now)
{
	if (c->outstanding == 0)
		return; /* more replies than requests: the server does not match our framing */
	bl_hist_record(t->hist, now - c->sent_ns[c->sent_head]);
	c->sent_head = (c->sent_head + 1) % t->conf->depth;
	c->outstanding--;
	c->last_progress_ns = now;
	t->replies++;
	ready_push(t, c - t->conns);
}

static void conn_on_readable(struct client_thread *t, struct conn *c)
{
	static __thread char buf[1 << 16];
	const struct client_conf *conf = t->conf;

	for (int reads = 0; reads < 16 && !c->failed; reads++) {
		ssize_t n = recv(c->fd, buf, sizeof(buf), 0);
		if (n == 0 && conf->proto == IPPROTO_TCP) {
			conn_fail(t, c, "recv", 0);
			return;
		}
		if (n < 0) {
			if (errno == EINTR)
				continue;
			if (errno != EAGAIN)
				conn_fail(t, c, "recv", errno);
			return;
		}
		uint64_t now = bl_now_ns();
		bl_count(&t->counters->rx_bytes, (uint64_t) n);
		bl_count(&t->counters->rx_ops, 1);
		if (conf->mode != MODE_PINGPONG)
			continue;
		if (conf->proto == IPPROTO_UDP) {
			conn_reply_done(t, c, now);
			continue;
		}
		c->rx_fill += (size_t) n;
		while (c->rx_fill >= conf->reply_len) {
			c->rx_fill -= conf->reply_len;
			conn_reply_done(t, c, now);
		}
	}
}

/* UDP has no retransmission: a request whose datagram (or reply) was lost
 * would hold its slot forever.  After a second without progress, give the
 * connection's slots back (the lost requests get no latency sample). */
static void udp_reclaim_lost(struct client_thread *t, uint64_t now)
{
	for (long i = 0; i < t->num_conns; i++) {
		struct conn *c = &t->conns[i];
		if (c->failed || c->outstanding == 0 || now - c->last_progress_ns < UDP_LOSS_TIMEOUT_NS)
			continue;
		while (c->outstanding > 0) {
			c->outstanding--;
			ready_push(t, i);
		}
		c->sent_head = 0;
		c->last_progress_ns = now;
	}
}

/* Rate limiting: credit accrues at rate/s and is capped at one
 * millisecond's worth (at least 1), so a late thread does not catch up in a
 * burst. */
static void credit_refill(struct client_thread *t, uint64_t now)
{
	double rate = (double) t->conf->rate, cap = rate / 1000.0 < 1 ? 1 : rate / 1000.0;
	t->credit += (double) (now - t->credit_ns) * rate / 1e9;
	t->credit_ns = now;
	if (t->credit > cap)
		t->credit = cap;
}

/* ns until the next request may go (0: now) */
static uint64_t credit_wait_ns(const struct client_thread *t)
{
	return t->credit >= 1 ? 0 : (uint64_t) ((1 - t->credit) * 1e9 / (double) t->conf->rate) + 1;
}

static int may_send(struct client_thread *t)
{
	if (t->conf->rate == 0)
		return 1;
	if (t->credit < 1)
		return 0;
	t->credit -= 1;
	return 1;
}

/* Ping-pong: hand out free slots (subject to the rate) and write. */
static void pingpong_send(struct client_thread *t, int epfd)
{
	long budget = t->ready_count; /* each entry at most once per round */
	while (budget-- > 0 && may_send(t)) {
		struct conn *c = &t->conns[ready_pop(t)];
		if (c->failed)
			continue;
		c->to_send++;
		if (!c->want_out) /* a connection waiting for EPOLLOUT resumes there */
			conn_flush(t, epfd, c);
	}
}

/* Burst: keep every connection's socket full (one payload write per
 * credit).  Returns how many connections could take more right now. */
static long burst_send(struct client_thread *t, int epfd)
{
	long open = 0;
	for (long i = 0; i < t->num_conns; i++) {
		struct conn *c = &t->conns[i];
		if (c->failed || c->want_out)
			continue; /* full: EPOLLOUT resumes it */
		/* a batch of payloads per round, so connections take turns */
		long grant = 0;
		while (grant < 64 && may_send(t))
			grant++;
		c->to_send += grant;
		conn_flush(t, epfd, c);
		open += !c->failed && !c->want_out;
	}
	return open;
}

/* epoll_wait with a nanosecond timeout, so that rate-limited sends are
 * spaced precisely without spinning (a spinning client would steal the CPU
 * from a server sharing the machine).  Kernels before 5.11 lack
 * epoll_pwait2: fall back to milliseconds, polling below one. */
static int wait_events(int epfd, struct epoll_event *events, int max, uint64_t timeout_ns)
{
	static atomic_int no_pwait2;
	if (!atomic_load_explicit(&no_pwait2, memory_order_relaxed)) {
		struct timespec ts = { .tv_sec = (time_t) (timeout_ns / 1000000000ull),
				       .tv_nsec = (long) (timeout_ns % 1000000000ull) };
		int n = epoll_pwait2(epfd, events, max, &ts, NULL);
		if (n >= 0 || errno != ENOSYS)
			return n;
		atomic_store(&no_pwait2, 1);
	}
	return epoll_wait(epfd, events, max, (int) (timeout_ns / 1000000ull));
}

static void *client_thread_main(void *arg)
{
	struct client_thread *t = arg;
	const struct client_conf *conf = t->conf;
	int epfd = epoll_create1(EPOLL_CLOEXEC);

	if (bl_pin_self(conf->cores.cores[t->index]) != 0)
		fprintf(stderr, "client: thread %u: cannot pin to core %u\n", t->index, conf->cores.cores[t->index]);
	if (epfd < 0) {
		fprintf(stderr, "client: thread %u: epoll_create1: %s\n", t->index, strerror(errno));
		t->error = 1;
		atomic_store(&bl_stop, 1);
		return NULL;
	}
	t->credit_ns = bl_now_ns();
	t->alive = t->num_conns;
	for (long i = 0; i < t->num_conns; i++) {
		struct conn *c = &t->conns[i];
		struct epoll_event ev = { .events = EPOLLIN, .data.ptr = c };
		if (epoll_ctl(epfd, EPOLL_CTL_ADD, c->fd, &ev) != 0)
			conn_fail(t, c, "epoll_ctl", errno);
		c->last_progress_ns = t->credit_ns;
	}
	/* depth slots per connection, interleaved so the first round touches
	 * every connection once before any gets its second request */
	if (conf->mode == MODE_PINGPONG)
		for (long d = 0; d < conf->depth; d++)
			for (long i = 0; i < t->num_conns; i++)
				ready_push(t, i);

	uint64_t last_reclaim_ns = t->credit_ns;
	while (!atomic_load_explicit(&bl_stop, memory_order_relaxed)) {
		/* how long we may sleep: until a reply or EPOLLOUT wakes us, unless
		 * there is sending to do now or when the rate allows it */
		uint64_t now = bl_now_ns(), wait_ns = 100000000ull;
		if (conf->rate)
			credit_refill(t, now);
		if (conf->mode == MODE_PINGPONG) {
			pingpong_send(t, epfd);
			if (conf->rate && t->ready_count > 0)
				wait_ns = credit_wait_ns(t);
			if (conf->proto == IPPROTO_UDP && now - last_reclaim_ns >= 100000000ull) {
				udp_reclaim_lost(t, now);
				last_reclaim_ns = now;
			}
		} else if (burst_send(t, epfd) > 0) {
			wait_ns = conf->rate ? credit_wait_ns(t) : 0;
		}

		struct epoll_event events[64];
		int n = wait_events(epfd, events, 64, wait_ns > 100000000ull ? 100000000ull : wait_ns);
		for (int i = 0; i < n; i++) {
			struct conn *c = events[i].data.ptr;
			if (c->failed)
				continue;
			if (events[i].events & (EPOLLIN | EPOLLHUP | EPOLLERR))
				conn_on_readable(t, c);
			if (!c->failed && (events[i].events & EPOLLOUT)) {
				conn_set_out(t, epfd, c, 0);
				conn_flush(t, epfd, c);
			}
		}
		if (t->num_conns && t->alive == 0) {
			fprintf(stderr, "client: thread %u: no connection left\n", t->index);
			break;
		}
	}
	close(epfd);
	atomic_fetch_add(&threads_done, 1);
	return NULL;
}

/* Opens and connects every socket up front, so a refused or unreachable
 * server is reported once, before the run starts. */
static int open_connection(const struct client_conf *conf, long index)
{
	int type = conf->proto == IPPROTO_UDP ? SOCK_DGRAM : SOCK_STREAM;
	int fd = socket(AF_INET, type | SOCK_CLOEXEC, conf->proto);
	struct timeval tv = { .tv_sec = 5 };
	int one = 1;
	char addr[INET_ADDRSTRLEN];

	if (fd < 0) {
		fprintf(stderr, "client: socket for connection %ld: %s\n", index, strerror(errno));
		return -1;
	}
	setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof(tv)); /* bounds the blocking connect */
	if (connect(fd, (const struct sockaddr *) &conf->server, sizeof(conf->server)) != 0) {
		inet_ntop(AF_INET, &conf->server.sin_addr, addr, sizeof(addr));
		fprintf(stderr, "client: connection %ld to %s:%u: %s\n", index, addr, ntohs(conf->server.sin_port),
			strerror(errno));
		close(fd);
		return -1;
	}
	if (conf->proto == IPPROTO_TCP)
		setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
	int flags = fcntl(fd, F_GETFL);
	if (flags < 0 || fcntl(fd, F_SETFL, flags | O_NONBLOCK) != 0) {
		fprintf(stderr, "client: connection %ld: O_NONBLOCK: %s\n", index, strerror(errno));
		close(fd);
		return -1;
	}
	return fd;
}

static void remote_stop(const struct client_conf *conf, int *rc)
{
	struct sockaddr_in sin = conf->server;
	int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, IPPROTO_TCP);

	sin.sin_port = htons(conf->stop_port);
	if (fd < 0 || connect(fd, (struct sockaddr *) &sin, sizeof(sin)) != 0) {
		fprintf(stderr, "client: remote stop (port %u): %s\n", conf->stop_port, strerror(errno));
		*rc = 1;
	} else {
		printf("remote stop sent to port %u\n", conf->stop_port);
	}
	if (fd >= 0)
		close(fd);
}

static void usage(FILE *out)
{
	fprintf(out,
		"usage: client -s SERVER -p PORT [-c CONNS] [-d DEPTH] [-g 1|2] [-l LEN | -m STRING] [-R LEN]\n"
		"              [-t SECONDS] [-r RATE] [-n 6|17] [-T CORES] [-k] [-K PORT]\n"
		"  -s SERVER  server IPv4 address\n"
		"  -p PORT    server port\n"
		"  -c CONNS   number of connections (default 1), spread over the threads\n"
		"  -d DEPTH   requests kept outstanding per connection in ping-pong (default 1)\n"
		"  -g MODE    1 ping-pong (default), 2 burst\n"
		"  -l LEN     request payload length in bytes (default 1)\n"
		"  -m STRING  request payload string (instead of -l)\n"
		"  -R LEN     TCP reply length in bytes that completes a request (default: the request length)\n"
		"  -t SECONDS duration, 0 = until SIGINT (default 0)\n"
		"  -r RATE    requests (burst: payload writes) per second per thread, 0 = unlimited (default)\n"
		"  -n PROTO   6 TCP (default) or 17 UDP\n"
		"  -T CORES   core list, one pinned thread per core (default 0)\n"
		"  -k         at the end, stop the server through its remote-stop port\n"
		"  -K PORT    the server's remote-stop port (default %d)\n",
		BL_DEFAULT_STOP_PORT);
}

static int parse_options(int argc, char *const *argv, struct client_conf *conf)
{
	const char *cores = "0", *message = NULL, *server = NULL;
	long v, length = 1, reply_len = 0;
	int ch, have_port = 0;

	conf->mode = MODE_PINGPONG;
	conf->proto = IPPROTO_TCP;
	conf->conns = 1;
	conf->depth = 1;
	conf->stop_port = BL_DEFAULT_STOP_PORT;
	while ((ch = getopt(argc, argv, "c:d:g:l:m:n:p:r:s:t:R:T:kK:h")) != -1) {
		switch (ch) {
		case 'c': if (bl_parse_long("client", 'c', optarg, 1, 1000000, &conf->conns)) return -1; break;
		case 'd': if (bl_parse_long("client", 'd', optarg, 1, 65536, &conf->depth)) return -1; break;
		case 'g':
			if (bl_parse_long("client", 'g', optarg, 1, 2, &v)) return -1;
			conf->mode = (int) v;
			break;
		case 'l': if (bl_parse_long("client", 'l', optarg, 1, BL_PAYLOAD_MAX, &length)) return -1; break;
		case 'm': message = optarg; break;
		case 'n':
			if (bl_parse_long("client", 'n', optarg, 6, 17, &v)) return -1;
			if (v != 6 && v != 17) {
				fprintf(stderr, "client: -n: protocol must be 6 (TCP) or 17 (UDP), not %ld\n", v);
				return -1;
			}
			conf->proto = (int) v;
			break;
		case 'p':
			if (bl_parse_long("client", 'p', optarg, 1, 65535, &v)) return -1;
			conf->server.sin_port = htons((uint16_t) v);
			have_port = 1;
			break;
		case 'r': if (bl_parse_long("client", 'r', optarg, 0, 1000000000, &conf->rate)) return -1; break;
		case 's': server = optarg; break;
		case 't': if (bl_parse_long("client", 't', optarg, 0, 100000000, &conf->duration_s)) return -1; break;
		case 'R': if (bl_parse_long("client", 'R', optarg, 1, BL_PAYLOAD_MAX, &reply_len)) return -1; break;
		case 'T': cores = optarg; break;
		case 'k': conf->kill_server = 1; break;
		case 'K':
			if (bl_parse_long("client", 'K', optarg, 1, 65535, &v)) return -1;
			conf->stop_port = (uint16_t) v;
			break;
		case 'h': usage(stdout); exit(0);
		default: usage(stderr); return -1;
		}
	}
	if (optind < argc) {
		fprintf(stderr, "client: unexpected argument \"%s\"\n", argv[optind]);
		usage(stderr);
		return -1;
	}
	if (server == NULL || !have_port) {
		fprintf(stderr, "client: -s SERVER and -p PORT are required\n");
		usage(stderr);
		return -1;
	}
	conf->server.sin_family = AF_INET;
	if (inet_pton(AF_INET, server, &conf->server.sin_addr) != 1) {
		fprintf(stderr, "client: -s: \"%s\" is not an IPv4 address\n", server);
		return -1;
	}
	if (bl_cores_parse("client", 'T', cores, &conf->cores) != 0)
		return -1;
	if (bl_payload_make(&conf->request, message, length) != 0)
		return -1;
	conf->reply_len = reply_len ? (size_t) reply_len : conf->request.len;
	return 0;
}

static void print_summary(const struct client_conf *conf, struct client_thread *threads, uint64_t elapsed_ns,
			  struct bl_counters *counters)
{
	static struct bl_hist all;
	uint64_t requests = 0, tx_bytes = 0;
	double seconds = (double) elapsed_ns / 1e9;

	for (unsigned i = 0; i < conf->cores.count; i++) {
		bl_hist_merge(&all, threads[i].hist);
		requests += threads[i].replies;
		tx_bytes += atomic_load(&counters[i].tx_bytes);
	}
	if (all.count)
		printf("latency (us): p50 %.2f p90 %.2f p99 %.2f p99.9 %.2f (%lu samples)\n",
		       bl_hist_percentile(&all, 50) / 1e3, bl_hist_percentile(&all, 90) / 1e3,
		       bl_hist_percentile(&all, 99) / 1e3, bl_hist_percentile(&all, 99.9) / 1e3,
		       (unsigned long) all.count);
	else
		printf("latency (us): no samples (0 samples)\n");
	if (conf->mode == MODE_PINGPONG)
		printf("total: %lu requests in %.3f s, %.0f requests/s\n", (unsigned long) requests, seconds,
		       seconds > 0 ? (double) requests / seconds : 0);
	else
		printf("total: %lu bytes sent in %.3f s, %.1f Mbps\n", (unsigned long) tx_bytes, seconds,
		       seconds > 0 ? (double) tx_bytes * 8 / 1e6 / seconds : 0);
	fflush(stdout);
}

int main(int argc, char *const *argv)
{
	static struct client_conf conf;
	struct client_thread *threads;
	struct bl_counters *counters;
	struct bl_snapshot *prev;
	unsigned nt;
	int rc = 0;

	if (parse_options(argc, argv, &conf) != 0)
		return 2;
	bl_install_stop_signals();
	nt = conf.cores.count;
	threads = calloc(nt, sizeof(*threads));
	counters = aligned_alloc(64, nt * sizeof(*counters));
	prev = calloc(nt, sizeof(*prev));
	if (threads == NULL || counters == NULL || prev == NULL) {
		fprintf(stderr, "client: out of memory\n");
		return 1;
	}
	memset(counters, 0, nt * sizeof(*counters));
	for (unsigned i = 0; i < nt; i++) {
		struct client_thread *t = &threads[i];
		t->conf = &conf;
		t->index = i;
		t->counters = &counters[i];
		t->num_conns = conf.conns / nt + ((long) i < conf.conns % nt);
		t->conns = calloc((size_t) t->num_conns + 1, sizeof(*t->conns));
		t->ready_cap = t->num_conns * conf.depth + 1;
		t->ready = calloc((size_t) t->ready_cap, sizeof(*t->ready));
		t->hist = calloc(1, sizeof(*t->hist));
		if (t->conns == NULL || t->ready == NULL || t->hist == NULL) {
			fprintf(stderr, "client: out of memory for %ld connections of depth %ld\n", conf.conns, conf.depth);
			return 1;
		}
		for (long j = 0; j < t->num_conns; j++) {
			t->conns[j].sent_ns = calloc((size_t) conf.depth, sizeof(uint64_t));
			if (t->conns[j].sent_ns == NULL) {
				fprintf(stderr, "client: out of memory\n");
				return 1;
			}
		}
	}
	/* connection k goes to thread k % nt */
	for (long k = 0; k < conf.conns; k++) {
		int fd = open_connection(&conf, k);
		if (fd < 0)
			return 1;
		threads[k % nt].conns[k / nt].fd = fd;
	}
	printf("client: %ld %s connection(s), %s, depth %ld, %zu-byte requests, %u thread(s)\n", conf.conns,
	       conf.proto == IPPROTO_UDP ? "UDP" : "TCP", conf.mode == MODE_PINGPONG ? "ping-pong" : "burst", conf.depth,
	       conf.request.len, nt);
	fflush(stdout);

	uint64_t start = bl_now_ns(), last = start, next_report = start + 1000000000ull;
	unsigned started = 0;
	for (; started < nt; started++) {
		int err = pthread_create(&threads[started].thread, NULL, client_thread_main, &threads[started]);
		if (err) {
			fprintf(stderr, "client: cannot start thread %u: %s\n", started, strerror(err));
			atomic_store(&bl_stop, 1);
			rc = 1;
			break;
		}
	}
	while (!atomic_load(&bl_stop) && atomic_load(&threads_done) < started) {
		uint64_t now = bl_now_ns();
		if (now >= next_report) { /* before the end check: -t N prints N reports */
			bl_report_interval(counters, prev, nt, now - last);
			last = now;
			next_report += 1000000000ull;
		}
		if (conf.duration_s && now - start >= (uint64_t) conf.duration_s * 1000000000ull)
			break;
		usleep(10000);
	}
	atomic_store(&bl_stop, 1);
	uint64_t elapsed = bl_now_ns() - start;
	for (unsigned i = 0; i < started; i++) {
		pthread_join(threads[i].thread, NULL);
		if (threads[i].error)
			rc = 1;
	}
	print_summary(&conf, threads, elapsed, counters);
	for (unsigned i = 0; i < nt; i++) {
		for (long j = 0; j < threads[i].num_conns; j++) {
			if (!threads[i].conns[j].failed)
				close(threads[i].conns[j].fd);
			free(threads[i].conns[j].sent_ns);
		}
		free(threads[i].conns);
		free(threads[i].ready);
		free(threads[i].hist);
	}
	if (conf.kill_server)
		remote_stop(&conf, &rc);
	free(threads);
	free(counters);
	free(prev);
	free(conf.request.data);
	return rc;
}
