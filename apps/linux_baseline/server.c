/*
 * Linux kernel baseline for the benchmarks: the server side, the counterpart
 * of bench-iip's server on the Linux TCP/IP stack.
 *
 *   server -p PORT [-c CORES] [-g 1|2] [-l LEN | -m STRING] [-n 6|17] [-q LEN] [-K PORT]
 *
 * One thread per core of the core list, pinned, each with its own epoll loop
 * and its own SO_REUSEPORT socket, so the kernel spreads connections (or
 * datagrams) over the threads and no state is shared between them.
 *
 * Ping-pong (-g 1): every read is answered with the payload (-l bytes or the
 * -m string), as bench-iip's server does; with -q LEN, once per LEN bytes
 * received instead, so a client keeping several requests in flight on one
 * connection (-d > 1) gets exactly one reply per request even when the
 * kernel merges requests into one read.  Burst (-g 2): data is read and
 * discarded.  UDP (-n 17): every datagram is answered with the payload
 * (ping-pong) or discarded (burst).
 *
 * Stops on SIGINT/SIGTERM or when anything connects to TCP port 50000 (-K),
 * which is how a benchmark client ends a run (client -k).
 */
#include "common.h" /* first: it defines _GNU_SOURCE */

#include <fcntl.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <sys/epoll.h>
#include <sys/socket.h>
#include <unistd.h>

#include "stats.h"

enum { MODE_PINGPONG = 1, MODE_BURST = 2 };

struct server_conf {
	int mode;
	int proto; /* IPPROTO_TCP or IPPROTO_UDP */
	uint16_t port, stop_port;
	size_t request_len; /* 0: reply once per read */
	struct bl_payload reply;
	struct io_corelist cores;
};

/* A TCP connection: what is still owed to the peer.  The reply stream is the
 * payload repeated, so a count of bytes owed and the offset into the payload
 * describe everything that is pending, whatever the peer's reading speed. */
struct conn {
	int fd;
	int want_out;              /* EPOLLOUT registered */
	uint64_t owed;             /* reply bytes not yet written */
	size_t reply_off;          /* offset in the payload of the next reply byte */
	size_t request_fill;       /* with -q: bytes of the current request seen */
	struct conn *prev, *next;  /* the thread's connections, to close at exit */
};

struct server_thread {
	const struct server_conf *conf;
	unsigned index;
	int listen_fd; /* the thread's SO_REUSEPORT socket (TCP listener or UDP socket) */
	struct bl_counters *counters;
	struct conn *conns;
	pthread_t thread;
};

static void conn_close(struct server_thread *t, struct conn *c)
{
	close(c->fd); /* also removes it from the epoll set */
	if (c->prev)
		c->prev->next = c->next;
	else
		t->conns = c->next;
	if (c->next)
		c->next->prev = c->prev;
	free(c);
}

/* Writes owed reply bytes until done or the socket is full.  Returns -1 if
 * the connection failed. */
static int conn_flush(struct server_thread *t, int epfd, struct conn *c)
{
	const struct bl_payload *p = &t->conf->reply;

	while (c->owed) {
		size_t chunk = p->len - c->reply_off;
		if (chunk > c->owed)
			chunk = (size_t) c->owed;
		ssize_t n = write(c->fd, p->data + c->reply_off, chunk);
		if (n < 0) {
			if (errno == EINTR)
				continue;
			if (errno != EAGAIN)
				return -1;
			break;
		}
		c->owed -= (uint64_t) n;
		c->reply_off = (c->reply_off + (size_t) n) % p->len;
		bl_count(&t->counters->tx_bytes, (uint64_t) n);
	}
	/* ask for EPOLLOUT only while something is pending */
	int want_out = c->owed != 0;
	if (want_out != c->want_out) {
		struct epoll_event ev = { .events = EPOLLIN | (want_out ? EPOLLOUT : 0), .data.ptr = c };
		if (epoll_ctl(epfd, EPOLL_CTL_MOD, c->fd, &ev) != 0)
			return -1;
		c->want_out = want_out;
	}
	return 0;
}

/* Reads what the connection has; in ping-pong mode, adds the replies owed.
 * Returns -1 when the connection is finished (closed by the peer or failed). */
static int conn_on_readable(struct server_thread *t, int epfd, struct conn *c)
{
	static __thread char buf[1 << 16];
	const struct server_conf *conf = t->conf;

	for (int reads = 0; reads < 16; reads++) { /* bounded: one busy peer must not starve others */
		ssize_t n = read(c->fd, buf, sizeof(buf));
		if (n == 0)
			return -1;
		if (n < 0) {
			if (errno == EINTR)
				continue;
			return errno == EAGAIN ? 0 : -1;
		}
		bl_count(&t->counters->rx_bytes, (uint64_t) n);
		bl_count(&t->counters->rx_ops, 1);
		if (conf->mode != MODE_PINGPONG)
			continue;
		uint64_t replies = 1;
		if (conf->request_len) {
			c->request_fill += (size_t) n;
			replies = c->request_fill / conf->request_len;
			c->request_fill %= conf->request_len;
		}
		c->owed += replies * conf->reply.len;
		bl_count(&t->counters->tx_ops, replies);
		if (conn_flush(t, epfd, c) != 0)
			return -1;
		if ((size_t) n < sizeof(buf))
			return 0; /* drained */
	}
	return 0;
}

static void accept_all(struct server_thread *t, int epfd)
{
	for (;;) {
		int fd = accept4(t->listen_fd, NULL, NULL, SOCK_NONBLOCK | SOCK_CLOEXEC);
		if (fd < 0) {
			if (errno == EINTR || errno == ECONNABORTED)
				continue;
			if (errno != EAGAIN)
				fprintf(stderr, "server: thread %u: accept: %s\n", t->index, strerror(errno));
			return;
		}
		int one = 1;
		setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
		struct conn *c = calloc(1, sizeof(*c));
		struct epoll_event ev = { .events = EPOLLIN, .data.ptr = c };
		if (c == NULL || epoll_ctl(epfd, EPOLL_CTL_ADD, fd, &ev) != 0) {
			fprintf(stderr, "server: thread %u: cannot track a new connection: %s\n", t->index,
				c ? strerror(errno) : "out of memory");
			free(c);
			close(fd);
			continue;
		}
		c->fd = fd;
		c->next = t->conns;
		if (t->conns)
			t->conns->prev = c;
		t->conns = c;
	}
}

static void udp_on_readable(struct server_thread *t)
{
	static __thread char buf[1 << 16];
	const struct server_conf *conf = t->conf;

	for (int i = 0; i < 64; i++) {
		struct sockaddr_in from;
		socklen_t from_len = sizeof(from);
		ssize_t n = recvfrom(t->listen_fd, buf, sizeof(buf), 0, (struct sockaddr *) &from, &from_len);
		if (n < 0)
			return; /* EAGAIN, or an ICMP error reported on the socket: nothing to do */
		bl_count(&t->counters->rx_bytes, (uint64_t) n);
		bl_count(&t->counters->rx_ops, 1);
		if (conf->mode != MODE_PINGPONG)
			continue;
		if (sendto(t->listen_fd, conf->reply.data, conf->reply.len, 0, (struct sockaddr *) &from, from_len) >= 0) {
			bl_count(&t->counters->tx_bytes, conf->reply.len);
			bl_count(&t->counters->tx_ops, 1);
		}
	}
}

static void *server_thread_main(void *arg)
{
	struct server_thread *t = arg;
	int epfd = epoll_create1(EPOLL_CLOEXEC);
	struct epoll_event ev = { .events = EPOLLIN, .data.ptr = NULL }; /* NULL: the thread's own socket */

	if (bl_pin_self(t->conf->cores.cores[t->index]) != 0)
		fprintf(stderr, "server: thread %u: cannot pin to core %u\n", t->index, t->conf->cores.cores[t->index]);
	if (epfd < 0 || epoll_ctl(epfd, EPOLL_CTL_ADD, t->listen_fd, &ev) != 0) {
		fprintf(stderr, "server: thread %u: epoll: %s\n", t->index, strerror(errno));
		atomic_store(&bl_stop, 1);
		return NULL;
	}
	while (!atomic_load_explicit(&bl_stop, memory_order_relaxed)) {
		struct epoll_event events[64];
		int n = epoll_wait(epfd, events, 64, 100);
		for (int i = 0; i < n; i++) {
			struct conn *c = events[i].data.ptr;
			if (c == NULL) {
				if (t->conf->proto == IPPROTO_UDP)
					udp_on_readable(t);
				else
					accept_all(t, epfd);
				continue;
			}
			int failed = 0;
			if (events[i].events & (EPOLLIN | EPOLLHUP | EPOLLERR))
				failed = conn_on_readable(t, epfd, c) != 0;
			if (!failed && (events[i].events & EPOLLOUT))
				failed = conn_flush(t, epfd, c) != 0;
			if (failed)
				conn_close(t, c);
		}
	}
	while (t->conns)
		conn_close(t, t->conns);
	close(epfd);
	return NULL;
}

/* Opens a socket bound to port on all addresses; SO_REUSEPORT lets every
 * thread have its own.  Prints the reason and returns -1 on failure. */
static int open_bound_socket(int proto, uint16_t port, int reuseport)
{
	int type = proto == IPPROTO_UDP ? SOCK_DGRAM : SOCK_STREAM;
	int fd = socket(AF_INET, type | SOCK_NONBLOCK | SOCK_CLOEXEC, proto);
	int one = 1;
	struct sockaddr_in sin = { .sin_family = AF_INET, .sin_port = htons(port), .sin_addr.s_addr = htonl(INADDR_ANY) };

	if (fd < 0) {
		fprintf(stderr, "server: socket: %s\n", strerror(errno));
		return -1;
	}
	setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
	if (reuseport && setsockopt(fd, SOL_SOCKET, SO_REUSEPORT, &one, sizeof(one)) != 0) {
		fprintf(stderr, "server: SO_REUSEPORT: %s\n", strerror(errno));
		close(fd);
		return -1;
	}
	if (bind(fd, (struct sockaddr *) &sin, sizeof(sin)) != 0) {
		fprintf(stderr, "server: bind to %s port %u: %s\n", proto == IPPROTO_UDP ? "UDP" : "TCP", port,
			strerror(errno));
		close(fd);
		return -1;
	}
	if (type == SOCK_STREAM && listen(fd, SOMAXCONN) != 0) {
		fprintf(stderr, "server: listen on port %u: %s\n", port, strerror(errno));
		close(fd);
		return -1;
	}
	return fd;
}

static void usage(FILE *out)
{
	fprintf(out,
		"usage: server -p PORT [-c CORES] [-g 1|2] [-l LEN | -m STRING] [-n 6|17] [-q LEN] [-K PORT]\n"
		"  -p PORT    port to listen on (TCP or UDP)\n"
		"  -c CORES   core list, one pinned thread per core, e.g. 0-3 or 0,2 (default 0)\n"
		"  -g MODE    1 ping-pong: reply to every read (default); 2 burst: discard\n"
		"  -l LEN     reply payload length in bytes (default 1)\n"
		"  -m STRING  reply payload string (instead of -l)\n"
		"  -n PROTO   6 TCP (default) or 17 UDP\n"
		"  -q LEN     TCP ping-pong: reply once per LEN bytes received instead of once per read\n"
		"  -K PORT    remote-stop port: a TCP connection to it stops the server (default %d, 0: none)\n",
		BL_DEFAULT_STOP_PORT);
}

static int parse_options(int argc, char *const *argv, struct server_conf *conf)
{
	const char *cores = "0", *message = NULL;
	long v, length = 1;
	int ch, have_port = 0;

	conf->mode = MODE_PINGPONG;
	conf->proto = IPPROTO_TCP;
	conf->stop_port = BL_DEFAULT_STOP_PORT;
	while ((ch = getopt(argc, argv, "c:g:l:m:n:p:q:K:h")) != -1) {
		switch (ch) {
		case 'c': cores = optarg; break;
		case 'g':
			if (bl_parse_long("server", 'g', optarg, 1, 2, &v)) return -1;
			conf->mode = (int) v;
			break;
		case 'l':
			if (bl_parse_long("server", 'l', optarg, 1, BL_PAYLOAD_MAX, &length)) return -1;
			break;
		case 'm': message = optarg; break;
		case 'n':
			if (bl_parse_long("server", 'n', optarg, 6, 17, &v)) return -1;
			if (v != 6 && v != 17) {
				fprintf(stderr, "server: -n: protocol must be 6 (TCP) or 17 (UDP), not %ld\n", v);
				return -1;
			}
			conf->proto = (int) v;
			break;
		case 'p':
			if (bl_parse_long("server", 'p', optarg, 1, 65535, &v)) return -1;
			conf->port = (uint16_t) v;
			have_port = 1;
			break;
		case 'q':
			if (bl_parse_long("server", 'q', optarg, 1, BL_PAYLOAD_MAX, &v)) return -1;
			conf->request_len = (size_t) v;
			break;
		case 'K':
			if (bl_parse_long("server", 'K', optarg, 0, 65535, &v)) return -1;
			conf->stop_port = (uint16_t) v;
			break;
		case 'h': usage(stdout); exit(0);
		default: usage(stderr); return -1;
		}
	}
	if (optind < argc) {
		fprintf(stderr, "server: unexpected argument \"%s\"\n", argv[optind]);
		usage(stderr);
		return -1;
	}
	if (!have_port) {
		fprintf(stderr, "server: -p PORT is required\n");
		usage(stderr);
		return -1;
	}
	if (conf->stop_port && conf->stop_port == conf->port && conf->proto == IPPROTO_TCP) {
		fprintf(stderr, "server: -p and the remote-stop port (-K) are both %u\n", conf->port);
		return -1;
	}
	if (bl_cores_parse("server", 'c', cores, &conf->cores) != 0)
		return -1;
	return bl_payload_make(&conf->reply, message, length);
}

/* Until stopped: a report every second, and a watch on the remote-stop port. */
static void run_monitor(const struct server_conf *conf, int stop_fd, struct bl_counters *counters)
{
	struct bl_snapshot *prev = calloc(conf->cores.count, sizeof(*prev));
	uint64_t last = bl_now_ns();

	while (!atomic_load(&bl_stop)) {
		struct pollfd pfd = { .fd = stop_fd, .events = POLLIN };
		uint64_t now = bl_now_ns();
		int wait_ms = now >= last + 1000000000ull ? 0 : (int) ((last + 1000000000ull - now) / 1000000) + 1;

		if (poll(&pfd, stop_fd >= 0 ? 1 : 0, wait_ms > 100 ? 100 : wait_ms) > 0) {
			int fd = accept(stop_fd, NULL, NULL);
			if (fd >= 0)
				close(fd);
			printf("remote stop requested\n");
			atomic_store(&bl_stop, 1);
		}
		now = bl_now_ns();
		if (prev && now >= last + 1000000000ull) {
			bl_report_interval(counters, prev, conf->cores.count, now - last);
			last = now;
		}
	}
	free(prev);
}

int main(int argc, char *const *argv)
{
	static struct server_conf conf;
	struct server_thread *threads;
	struct bl_counters *counters;
	int stop_fd = -1, rc = 0;
	char cores_text[256];

	if (parse_options(argc, argv, &conf) != 0)
		return 2;
	bl_install_stop_signals();
	threads = calloc(conf.cores.count, sizeof(*threads));
	counters = aligned_alloc(64, conf.cores.count * sizeof(*counters));
	if (threads == NULL || counters == NULL) {
		fprintf(stderr, "server: out of memory\n");
		return 1;
	}
	memset(counters, 0, conf.cores.count * sizeof(*counters));
	/* SO_REUSEPORT would let us share the port with another server of the
	 * same user, silently splitting its traffic: probe with a plain socket,
	 * which fails if anything holds the port */
	int probe = open_bound_socket(conf.proto, conf.port, 0);
	if (probe < 0)
		return 1;
	close(probe);
	/* every socket is opened before any thread starts, so a port in use is
	 * reported here, once, with a non-zero exit */
	for (unsigned i = 0; i < conf.cores.count; i++) {
		threads[i].conf = &conf;
		threads[i].index = i;
		threads[i].counters = &counters[i];
		threads[i].listen_fd = open_bound_socket(conf.proto, conf.port, 1);
		if (threads[i].listen_fd < 0)
			return 1;
	}
	/* opened after the data sockets: once this port listens, the server is
	 * ready (tests and scripts wait for it) */
	if (conf.stop_port) {
		stop_fd = open_bound_socket(IPPROTO_TCP, conf.stop_port, 0);
		if (stop_fd < 0) {
			fprintf(stderr, "server: cannot open the remote-stop port %u (use -K to pick another, -K 0 for none)\n",
				conf.stop_port);
			return 1;
		}
	}
	io_corelist_format(&conf.cores, cores_text, sizeof(cores_text));
	printf("server: %s port %u, %s, %u thread(s) on cores %s, reply %zu bytes%s\n",
	       conf.proto == IPPROTO_UDP ? "UDP" : "TCP", conf.port, conf.mode == MODE_PINGPONG ? "ping-pong" : "burst",
	       conf.cores.count, cores_text, conf.reply.len, conf.request_len ? " per request" : " per read");
	fflush(stdout);
	for (unsigned i = 0; i < conf.cores.count; i++) {
		int err = pthread_create(&threads[i].thread, NULL, server_thread_main, &threads[i]);
		if (err) {
			fprintf(stderr, "server: cannot start thread %u: %s\n", i, strerror(err));
			atomic_store(&bl_stop, 1);
			rc = 1;
			conf.cores.count = (uint16_t) i; /* join only those started */
			break;
		}
	}
	run_monitor(&conf, stop_fd, counters);
	for (unsigned i = 0; i < conf.cores.count; i++) {
		pthread_join(threads[i].thread, NULL);
		close(threads[i].listen_fd);
	}
	if (stop_fd >= 0)
		close(stop_fd);
	free(threads);
	free(counters);
	free(conf.reply.data);
	printf("done.\n");
	return rc;
}
