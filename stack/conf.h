/*
 * conf.h: every tunable of the stack, with its default and the reason for it.
 *
 * An integrator overrides any of these by defining the macro before including
 * stack/main.c.  Limits that size memory inside the workspace (hash table,
 * reassembly slots) change iip_workspace_size(); everything else is free.
 */
#ifndef IIP_CONF_H
#define IIP_CONF_H

/* Longest link-layer address the stack stores (Ethernet: 6 bytes). */
#ifndef IIP_CONF_L2ADDR_LEN_MAX
#define IIP_CONF_L2ADDR_LEN_MAX (6)
#endif

/* Default IP MTU of the link; iip_set_mtu() changes it per workspace. */
#ifndef IIP_CONF_MTU
#define IIP_CONF_MTU (1500)
#endif

/* TTL of every datagram we originate (RFC 1700 / RFC 1122 3.2.1.7 default). */
#ifndef IIP_CONF_IP4_TTL
#define IIP_CONF_IP4_TTL (64)
#endif

/*
 * Fragment reassembly (RFC 791, RFC 815): at most this many datagrams in
 * reassembly at once, each at most IIP_CONF_IP4_REASM_MAX_FRAGS fragments.
 * Memory is bounded by these two numbers: the oldest datagram is evicted when
 * a new one arrives and every slot is taken.
 */
#ifndef IIP_CONF_IP4_REASM_SLOTS
#define IIP_CONF_IP4_REASM_SLOTS (8)
#endif
#ifndef IIP_CONF_IP4_REASM_MAX_FRAGS
#define IIP_CONF_IP4_REASM_MAX_FRAGS (64)
#endif
/* RFC 1122 3.3.2: reassembly timeout between 60 s and 120 s is recommended;
 * Linux uses 30 s.  We keep the RFC's lower bound. */
#ifndef IIP_CONF_IP4_REASM_TIMEOUT_MS
#define IIP_CONF_IP4_REASM_TIMEOUT_MS (60000)
#endif

/* ICMP errors we originate (RFC 1812 4.3.2.8: rate limiting): a token bucket
 * of this many messages refilled every IIP_CONF_ICMP_RATE_INTERVAL_MS. */
#ifndef IIP_CONF_ICMP_RATE_BURST
#define IIP_CONF_ICMP_RATE_BURST (10)
#endif
#ifndef IIP_CONF_ICMP_RATE_INTERVAL_MS
#define IIP_CONF_ICMP_RATE_INTERVAL_MS (100)
#endif

/* Buckets of the TCP connection hash table (power of two). */
#ifndef IIP_CONF_TCP_CONN_HT_SIZE
#define IIP_CONF_TCP_CONN_HT_SIZE (4096)
#endif

/* RFC 6298 2.1: initial RTO of 1 s. */
#ifndef IIP_CONF_TCP_RTO_INIT_MS
#define IIP_CONF_TCP_RTO_INIT_MS (1000)
#endif
/*
 * RFC 6298 2.4 says the RTO SHOULD be at least 1 s; RFC 8961 and every
 * production stack (Linux: 200 ms) use less.  We follow Linux by default so
 * that a tail loss does not stall a connection for a full second; define it
 * to 1000 for strict RFC 6298 behaviour.
 */
#ifndef IIP_CONF_TCP_RTO_MIN_MS
#define IIP_CONF_TCP_RTO_MIN_MS (200)
#endif
/* RFC 6298 2.5: a maximum of at least 60 s may be placed on the RTO. */
#ifndef IIP_CONF_TCP_RTO_MAX_MS
#define IIP_CONF_TCP_RTO_MAX_MS (60000)
#endif
/* RFC 1122 4.2.3.5: give up after R2 retransmissions (data) ... */
#ifndef IIP_CONF_TCP_RETRIES_MAX
#define IIP_CONF_TCP_RETRIES_MAX (12)
#endif
/* ... and after this many SYN / SYN-ACK retransmissions (R2 for SYN >= 3 min). */
#ifndef IIP_CONF_TCP_SYN_RETRIES_MAX
#define IIP_CONF_TCP_SYN_RETRIES_MAX (6)
#endif

/* RFC 9293 3.4.2: MSL; TIME-WAIT lasts 2 MSL.  Linux uses a 60 s TIME-WAIT. */
#ifndef IIP_CONF_TCP_MSL_MS
#define IIP_CONF_TCP_MSL_MS (30000)
#endif
/* A FIN-WAIT-2 whose peer sends nothing for this long is dropped (RFC 9293
 * leaves it open; Linux tcp_fin_timeout is 60 s); data from the peer, which
 * the application still receives after its half-close, restarts the wait. */
#ifndef IIP_CONF_TCP_FIN_WAIT_2_TIMEOUT_MS
#define IIP_CONF_TCP_FIN_WAIT_2_TIMEOUT_MS (60000)
#endif

/* RFC 1122 4.2.3.2 / RFC 9293 3.8.6.3: an ACK may be delayed, but by less than
 * 0.5 s; RFC 5681 4.2 asks for at most 200 ms.  40 ms matches Linux. */
#ifndef IIP_CONF_TCP_DELAYED_ACK_MS
#define IIP_CONF_TCP_DELAYED_ACK_MS (40)
#endif

/* RFC 6928: initial window of 10 segments. */
#ifndef IIP_CONF_TCP_INIT_CWND_SEGS
#define IIP_CONF_TCP_INIT_CWND_SEGS (10)
#endif

/*
 * Receive buffer, counted in packets because that is what the integrator's
 * pool holds: the advertised window is (this - packets not yet consumed by
 * the application via iip_tcp_rxbuf_consumed - packets held out of order)
 * times the MSS.  See docs/api.md, "flow control".
 */
#ifndef IIP_CONF_TCP_RX_BUF_PKTS
#define IIP_CONF_TCP_RX_BUF_PKTS (1024)
#endif
/* At most this many out-of-order segments are held per connection. */
#ifndef IIP_CONF_TCP_OOO_MAX_PKTS
#define IIP_CONF_TCP_OOO_MAX_PKTS (256)
#endif
/* At most this many packets waiting to be sent or acknowledged per connection;
 * iip_tcp_send refuses beyond it. */
#ifndef IIP_CONF_TCP_TX_QUEUE_PKTS
#define IIP_CONF_TCP_TX_QUEUE_PKTS (2048)
#endif
/* Our window scale shift (RFC 7323 2.3): 1024 packets of 1460 B need 2^21. */
#ifndef IIP_CONF_TCP_WSCALE
#define IIP_CONF_TCP_WSCALE (7)
#endif

/* Half-open connections (SYN-RECEIVED) allowed before SYN cookies are used. */
#ifndef IIP_CONF_TCP_SYN_BACKLOG
#define IIP_CONF_TCP_SYN_BACKLOG (256)
#endif

/* RFC 5961 7: challenge ACKs are rate limited to this many per second. */
#ifndef IIP_CONF_TCP_CHALLENGE_ACK_LIMIT
#define IIP_CONF_TCP_CHALLENGE_ACK_LIMIT (1000)
#endif

/* RFC 1122 4.2.3.6: keepalive idle time default is no less than 2 hours. */
#ifndef IIP_CONF_TCP_KEEPALIVE_IDLE_MS
#define IIP_CONF_TCP_KEEPALIVE_IDLE_MS (7200000UL)
#endif
#ifndef IIP_CONF_TCP_KEEPALIVE_INTVL_MS
#define IIP_CONF_TCP_KEEPALIVE_INTVL_MS (75000)
#endif
#ifndef IIP_CONF_TCP_KEEPALIVE_PROBES
#define IIP_CONF_TCP_KEEPALIVE_PROBES (9)
#endif

/* Largest TSO frame handed to the NIC (IPv4 total length is 16 bits). */
#ifndef IIP_CONF_TCP_TSO_MAX
#define IIP_CONF_TCP_TSO_MAX (65535 - 20 - 60)
#endif

/* Longest iip_run may ask to sleep when nothing is pending (microseconds). */
#ifndef IIP_CONF_IDLE_NEXT_US
#define IIP_CONF_IDLE_NEXT_US (1000000)
#endif

#endif /* IIP_CONF_H */
