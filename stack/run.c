/*
 * run.c: the entry points that are not tied to one protocol: memory
 * (iip_*_size, iip_add_*), the per-workspace settings and statistics
 * extensions, and iip_run, which turns a batch of received packets into
 * protocol work, fires timers, and sends each connection's output once at
 * the end of the batch.
 */

static uint32_t __iip_now_ms(void *opaque)
{
	uint32_t t[3];
	t[0] = t[1] = t[2] = 0;
	iip_ops_util_now_ns(t, opaque);
	/* t[0] (seconds >> 32) only adds multiples of 2^32 * 1000: nothing mod 2^32 */
	return t[1] * 1000U + t[2] / 1000000U;
}

/* First use of a workspace: the integrator zeroed it; fill in what is not zero. */
static void __iip_ws_prepare(struct iip_workspace *ws, void *opaque)
{
	if (__iip_likely(ws->initialized))
		return;
	ws->initialized = 1;
	ws->now_ms = __iip_now_ms(opaque);
	ws->timer_next_ms = ws->now_ms;
	if (!ws->isn_secret_set) {
		/*
		 * No secret from the integrator (iip_set_isn_secret): derive one
		 * from what varies between runs.  Weak; every shipped backend sets
		 * a random secret.
		 */
		uint32_t m[3];
		m[0] = ws->now_ms;
		m[1] = (uint32_t) (uintptr_t) ws;
		m[2] = (uint32_t) (uintptr_t) opaque;
		ws->secret[0] = __iip_halfsiphash(m, m, 3);
		ws->secret[1] = __iip_halfsiphash(m + 1, m, 3);
		ws->secret[2] = __iip_halfsiphash(ws->secret, m, 3);
		ws->secret[3] = __iip_halfsiphash(ws->secret + 1, m, 3);
	}
	/*
	 * UDP segmentation offload would split one UDP datagram into several
	 * (changing datagram boundaries applications rely on); the stack
	 * fragments large datagrams itself and never asks the NIC for it.
	 */
	(void) iip_ops_nic_feature_offload_udp_tx_tso;
	(void) iip_ops_nic_offload_udp_tx_tso_mark;
}

static __iip_unused_fn uint32_t iip_workspace_size(void)
{
	return sizeof(struct iip_workspace);
}

static __iip_unused_fn uint32_t iip_tcp_conn_size(void)
{
	return sizeof(struct iip_tcp_conn);
}

static __iip_unused_fn uint32_t iip_pb_size(void)
{
	return sizeof(struct iip_pb);
}

static __iip_unused_fn void iip_add_tcp_conn(void *context, void *conn)
{
	struct iip_workspace *ws = (struct iip_workspace *) context;
	struct iip_tcp_conn *c = (struct iip_tcp_conn *) conn;
	__iip_memset(c, 0, sizeof(*c));
	c->ht_next = ws->conn_pool;
	ws->conn_pool = c;
	ws->conn_pool_cnt++;
	ws->conn_total++;
}

static __iip_unused_fn void iip_add_pb(void *context, void *p)
{
	struct iip_workspace *ws = (struct iip_workspace *) context;
	__iip_pb_put(ws, (struct iip_pb *) p);
	ws->pb_total++;
}

/* Extension: the IP MTU of the link (68 .. 65535); default IIP_CONF_MTU. */
static __iip_unused_fn void iip_set_mtu(void *context, uint16_t mtu)
{
	if (mtu >= 68)
		((struct iip_workspace *) context)->mtu = mtu;
}

/*
 * Extension: the 128-bit secret keying initial sequence numbers (RFC 6528),
 * SYN cookies and the connection hash.  Set it from a strong random source
 * before the first connection; every shipped backend does.
 */
static __iip_unused_fn void iip_set_isn_secret(void *context, const uint8_t key[16])
{
	struct iip_workspace *ws = (struct iip_workspace *) context;
	uint32_t i;
	for (i = 0; i < 4; i++)
		ws->secret[i] = ((uint32_t) key[i * 4] << 24) | ((uint32_t) key[i * 4 + 1] << 16)
			| ((uint32_t) key[i * 4 + 2] << 8) | key[i * 4 + 3];
	ws->isn_secret_set = 1;
}

/*
 * Extension: declares a UDP port open (on != 0) or closed.  Until it is
 * first called every datagram goes to iip_ops_udp_payload; afterwards a
 * datagram for a closed port is answered with ICMP port unreachable.
 */
static __iip_unused_fn void iip_udp_port_open(void *context, uint16_t port_be, uint8_t on)
{
	struct iip_workspace *ws = (struct iip_workspace *) context;
	uint16_t port = __iip_ntohs(port_be);
	ws->udp_ports_filter = 1;
	if (on)
		ws->udp_ports_open[port >> 3] |= (uint8_t) (1U << (port & 7));
	else
		ws->udp_ports_open[port >> 3] &= (uint8_t) ~(1U << (port & 7));
}

/* Extension: a copy of the workspace's counters (stats.h lists them). */
static __iip_unused_fn void iip_stats_get(void *context, struct iip_stats *out)
{
	*out = ((struct iip_workspace *) context)->stats;
}

/* Extension: the name of counter i (0-based, in struct order); NULL past the end. */
static __iip_unused_fn const char *iip_stats_name(uint32_t i)
{
	static const char *const names[] = {
#define IIP_STATS_NAME(n) #n,
		IIP_STATS_LIST(IIP_STATS_NAME)
#undef IIP_STATS_NAME
	};
	return i < sizeof(names) / sizeof(names[0]) ? names[i] : NULL;
}

/* Extension: packet wrappers and connection objects currently in the pools. */
static __iip_unused_fn void iip_pool_counts(void *context, uint32_t *pb_free, uint32_t *pb_total, uint32_t *conn_free, uint32_t *conn_total)
{
	struct iip_workspace *ws = (struct iip_workspace *) context;
	*pb_free = ws->pb_pool.cnt;
	*pb_total = ws->pb_total;
	*conn_free = ws->conn_pool_cnt;
	*conn_total = ws->conn_total;
}

/*
 * API (seed 001): processes a batch of received packets, fires due timers,
 * sends what the batch produced (one ACK per connection at most), and asks
 * to be called again within *next_us microseconds.  Returns 0.
 */
static __iip_unused_fn uint16_t iip_run(void *context, uint8_t mac[], uint32_t ip4_be, void *pkt[], uint16_t cnt, uint32_t *next_us, void *opaque)
{
	struct iip_workspace *ws = (struct iip_workspace *) context;
	uint16_t i;
	__iip_ws_prepare(ws, opaque);
	ws->now_ms = __iip_now_ms(opaque);
	ws->in_run = 1;
	for (i = 0; i < cnt; i++)
		if (pkt[i])
			__iip_l2_input(ws, mac, ip4_be, pkt[i], opaque);
	__iip_tcp_timers(ws, opaque);
	__iip_ip4_reasm_timers(ws, opaque);
	/* the end of the batch: every connection sends once */
	while (ws->out_list) {
		struct iip_tcp_conn *c = ws->out_list;
		ws->out_list = c->out_next;
		c->in_out_list = 0;
		__iip_tcp_output(ws, c, opaque);
	}
	ws->in_run = 0;
	if (ws->pkts_pushed) {
		ws->pkts_pushed = 0;
		iip_ops_l2_flush(opaque);
	}
	{
		uint32_t ms = __iip_seq_gt(ws->timer_next_ms, ws->now_ms) ? ws->timer_next_ms - ws->now_ms : 0;
		ms = __iip_min(ms, __iip_ip4_reasm_next_ms(ws));
		*next_us = ms >= IIP_CONF_IDLE_NEXT_US / 1000 ? IIP_CONF_IDLE_NEXT_US : ms * 1000;
	}
	return 0;
}
