/*
 * tcp_conn.c: connection objects: the pool (iip_add_tcp_conn), the 4-tuple
 * hash table (O(1) lookup, several local addresses allowed), keyed initial
 * sequence numbers (RFC 6528), timers, and the end of a connection's life.
 */

/* HalfSipHash-2-4 (32-bit SipHash): a keyed PRF using 32-bit arithmetic only. */
#define __IIP_ROTL32(x, b) (uint32_t) (((x) << (b)) | ((x) >> (32 - (b))))
#define __IIP_HSIP_ROUND(v0, v1, v2, v3) \
	do { \
		v0 += v1; v1 = __IIP_ROTL32(v1, 5); v1 ^= v0; v0 = __IIP_ROTL32(v0, 16); \
		v2 += v3; v3 = __IIP_ROTL32(v3, 8); v3 ^= v2; \
		v0 += v3; v3 = __IIP_ROTL32(v3, 7); v3 ^= v0; \
		v2 += v1; v1 = __IIP_ROTL32(v1, 13); v1 ^= v2; v2 = __IIP_ROTL32(v2, 16); \
	} while (0)

static uint32_t __iip_halfsiphash(const uint32_t key[2], const uint32_t *m, uint32_t n_words)
{
	uint32_t v0 = key[0], v1 = key[1], v2 = 0x6c796765U ^ key[0], v3 = 0x74656462U ^ key[1];
	uint32_t i;
	for (i = 0; i < n_words; i++) {
		v3 ^= m[i];
		__IIP_HSIP_ROUND(v0, v1, v2, v3);
		__IIP_HSIP_ROUND(v0, v1, v2, v3);
		v0 ^= m[i];
	}
	v3 ^= (n_words * 4) << 24;
	__IIP_HSIP_ROUND(v0, v1, v2, v3);
	__IIP_HSIP_ROUND(v0, v1, v2, v3);
	v0 ^= (n_words * 4) << 24;
	v2 ^= 0xff;
	__IIP_HSIP_ROUND(v0, v1, v2, v3);
	__IIP_HSIP_ROUND(v0, v1, v2, v3);
	__IIP_HSIP_ROUND(v0, v1, v2, v3);
	__IIP_HSIP_ROUND(v0, v1, v2, v3);
	return v1 ^ v3;
}

/*
 * RFC 6528 3: ISN = M + F(localip, localport, remoteip, remoteport, secretkey)
 * with M a 4-microsecond timer; our clock is in milliseconds, so M advances
 * by 250 per millisecond.
 */
static uint32_t __iip_tcp_isn(struct iip_workspace *ws, uint32_t local_ip4_be, uint16_t local_port_be,
			      uint32_t peer_ip4_be, uint16_t peer_port_be)
{
	uint32_t m[3];
	m[0] = local_ip4_be;
	m[1] = peer_ip4_be;
	m[2] = ((uint32_t) local_port_be << 16) | peer_port_be;
	return ws->now_ms * 250U + __iip_halfsiphash(&ws->secret[0], m, 3);
}

static uint32_t __iip_tcp_hash(struct iip_workspace *ws, uint32_t local_ip4_be, uint16_t local_port_be,
			       uint32_t peer_ip4_be, uint16_t peer_port_be)
{
	/* keyed so that a peer cannot aim all its flows at one bucket */
	uint32_t h = (peer_ip4_be ^ ws->secret[2]) * 0x9e3779b1U;
	h ^= (((uint32_t) peer_port_be << 16) | local_port_be) + ws->secret[3];
	h *= 0x85ebca6bU;
	h ^= local_ip4_be;
	h ^= h >> 15;
	h *= 0xc2b2ae35U;
	h ^= h >> 13;
	return h & (IIP_CONF_TCP_CONN_HT_SIZE - 1);
}

static struct iip_tcp_conn *__iip_tcp_lookup(struct iip_workspace *ws, uint32_t local_ip4_be, uint16_t local_port_be,
					     uint32_t peer_ip4_be, uint16_t peer_port_be)
{
	struct iip_tcp_conn *c = ws->conn_ht[__iip_tcp_hash(ws, local_ip4_be, local_port_be, peer_ip4_be, peer_port_be)];
	for (; c; c = c->ht_next)
		if (c->peer_port_be == peer_port_be && c->local_port_be == local_port_be
				&& c->peer_ip4_be == peer_ip4_be && c->local_ip4_be == local_ip4_be)
			return c;
	return NULL;
}

/*
 * The payload per segment we send: the peer's MSS option clamped by the
 * path MTU (RFC 6691), less the timestamp option's 12 bytes when used
 * (RFC 9293 3.7.1 Eff.snd.MSS).  Absurd values (a peer MSS below the
 * option bytes wrapped to 65524; 0 stopped the sender) are floored at 64.
 */
static void __iip_tcp_set_snd_mss(struct iip_tcp_conn *c)
{
	uint32_t mss = __iip_min((uint32_t) c->peer_mss, (uint32_t) c->pmtu - 40U), opt = c->opt_ts ? 12U : 0U;
	c->snd_mss = (uint16_t) (mss >= 64U + opt ? mss - opt : 64U);
}

static void __iip_tcp_timer_set(struct iip_workspace *ws, struct iip_tcp_conn *c, uint8_t which, uint32_t *slot, uint32_t after_ms)
{
	*slot = ws->now_ms + after_ms;
	c->timers_on |= which;
	if (__iip_seq_lt(*slot, ws->timer_next_ms))
		ws->timer_next_ms = *slot;
}

#define __iip_tcp_timer_off(c, which) ((c)->timers_on &= (uint8_t) ~(which))

/* Removes the connection from the batch's pending-output list. */
static void __iip_tcp_out_list_remove(struct iip_workspace *ws, struct iip_tcp_conn *c)
{
	struct iip_tcp_conn **pp;
	if (!c->in_out_list)
		return;
	for (pp = &ws->out_list; *pp; pp = &(*pp)->out_next)
		if (*pp == c) {
			*pp = c->out_next;
			break;
		}
	c->in_out_list = 0;
}

/* Frees everything a connection holds and unlinks it; it is not yet in the pool. */
static void __iip_tcp_conn_unlink(struct iip_workspace *ws, struct iip_tcp_conn *c, void *opaque)
{
	struct iip_tcp_conn **pp = &ws->conn_ht[__iip_tcp_hash(ws, c->local_ip4_be, c->local_port_be, c->peer_ip4_be, c->peer_port_be)];
	for (; *pp; pp = &(*pp)->ht_next)
		if (*pp == c) {
			*pp = c->ht_next;
			break;
		}
	if (c->all_prev)
		c->all_prev->all_next = c->all_next;
	else
		ws->conn_all = c->all_next;
	if (c->all_next)
		c->all_next->all_prev = c->all_prev;
	__iip_tcp_out_list_remove(ws, c);
	if (c->state == IIP_TCP_STATE_SYN_RECEIVED && ws->syn_received_cnt)
		ws->syn_received_cnt--;
	__iip_q_free_all(ws, &c->txq, opaque);
	__iip_q_free_all(ws, &c->ooo, opaque);
	c->tx_next_pb = NULL;
	ws->conn_live--;
}

/* Tells the application, once, that the connection is gone (its handle dies). */
static void __iip_tcp_notify_closed(struct iip_workspace *ws, struct iip_tcp_conn *c, void *opaque)
{
	if (!c->app_notified)
		return;
	c->app_notified = 0;
	IIP_STATS_INC(ws, tcp_conn_closed);
	iip_ops_tcp_closed(c, c->local_mac, c->local_ip4_be, c->local_port_be, c->peer_mac, c->peer_ip4_be, c->peer_port_be,
			   c->app_opaque, opaque);
}

/* The end of a connection: unlink, tell the app, return the object to the pool. */
static void __iip_tcp_conn_release(struct iip_workspace *ws, struct iip_tcp_conn *c, void *opaque)
{
	__iip_tcp_conn_unlink(ws, c, opaque);
	c->state = IIP_TCP_STATE_CLOSED;
	__iip_tcp_notify_closed(ws, c, opaque);
	c->ht_next = ws->conn_pool;
	ws->conn_pool = c;
	ws->conn_pool_cnt++;
}

/*
 * Enters TIME-WAIT (RFC 9293 3.6): the application is told now, the object
 * stays for 2 MSL to absorb old duplicates.
 */
static void __iip_tcp_enter_time_wait(struct iip_workspace *ws, struct iip_tcp_conn *c, void *opaque)
{
	c->state = IIP_TCP_STATE_TIME_WAIT;
	__iip_tcp_timer_off(c, IIP_TCP_TIMER_RTX | IIP_TCP_TIMER_DELACK | IIP_TCP_TIMER_KEEPALIVE);
	__iip_tcp_timer_set(ws, c, IIP_TCP_TIMER_CLOSE, &c->t_close, 2 * IIP_CONF_TCP_MSL_MS);
	__iip_q_free_all(ws, &c->txq, opaque);
	__iip_q_free_all(ws, &c->ooo, opaque);
	c->tx_next_pb = NULL;
	__iip_tcp_notify_closed(ws, c, opaque);
}

/*
 * A connection object for a new 4-tuple.  When the pool is empty, the oldest
 * connection in TIME-WAIT is reused (RFC 6191 permits reuse when old
 * duplicates cannot be confused, which keyed ISNs and timestamps provide).
 */
static struct iip_tcp_conn *__iip_tcp_conn_new(struct iip_workspace *ws, uint32_t local_ip4_be, uint16_t local_port_be,
					       uint32_t peer_ip4_be, uint16_t peer_port_be, void *opaque)
{
	struct iip_tcp_conn *c = ws->conn_pool;
	uint32_t h;
	if (!c) {
		struct iip_tcp_conn *it, *oldest = NULL;
		/*
		 * The earliest end of wait; among equal ends (the clock counts
		 * ms) the one created first, the list holding the newest first.
		 * A connection with output still pending in this batch is
		 * skipped: its ACK of the peer's FIN has not gone out, and the
		 * peer would resend the FIN and meet a RST.
		 */
		for (it = ws->conn_all; it; it = it->all_next)
			if (it->state == IIP_TCP_STATE_TIME_WAIT && !it->in_out_list
					&& (!oldest || __iip_seq_le(it->t_close, oldest->t_close)))
				oldest = it;
		if (!oldest)
			return NULL;
		__iip_tcp_conn_release(ws, oldest, opaque);
		c = ws->conn_pool;
	}
	ws->conn_pool = c->ht_next;
	ws->conn_pool_cnt--;
	__iip_memset(c, 0, sizeof(*c));
	c->local_ip4_be = local_ip4_be;
	c->local_port_be = local_port_be;
	c->peer_ip4_be = peer_ip4_be;
	c->peer_port_be = peer_port_be;
	h = __iip_tcp_hash(ws, local_ip4_be, local_port_be, peer_ip4_be, peer_port_be);
	c->ht_next = ws->conn_ht[h];
	ws->conn_ht[h] = c;
	c->all_next = ws->conn_all;
	if (ws->conn_all)
		ws->conn_all->all_prev = c;
	ws->conn_all = c;
	ws->conn_live++;
	c->rto_ms = IIP_CONF_TCP_RTO_INIT_MS;
	c->pmtu = __iip_mtu(ws);
	c->peer_mss = 536; /* RFC 9293 3.7.1: when the peer sends no MSS option */
	c->keepalive_idle_ms = IIP_CONF_TCP_KEEPALIVE_IDLE_MS;
	c->keepalive_intvl_ms = IIP_CONF_TCP_KEEPALIVE_INTVL_MS;
	c->keepalive_probes = IIP_CONF_TCP_KEEPALIVE_PROBES;
	c->last_rx_ms = ws->now_ms;
	return c;
}
