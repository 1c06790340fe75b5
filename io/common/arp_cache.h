/*
 * arp_cache.h: a small neighbour table for applications on the stack.
 *
 * The stack keeps no ARP table (seed 001: "an ARP table is assumed to be
 * maintained by users"): it answers requests for our address and hands ARP
 * replies to iip_ops_arp_reply.  This helper is the table an application
 * keeps: entries learnt from replies, resolution with retries, and
 * expiry, so that every client application does not write its own.
 *
 * Use, per networking thread (not thread-safe, like the workspace):
 *
 *   struct io_arp_cache arp;  io_arp_cache_init(&arp, 30000, 200, 5);
 *   in iip_ops_arp_reply:     io_arp_cache_learn(&arp, PB_ARP_IP_SENDER(pkt), PB_ARP_HW_SENDER(pkt), now_ms);
 *   to send to ip:            switch (io_arp_cache_resolve(&arp, ip_be, mac_out, now_ms)) {
 *                             case IO_ARP_FOUND: ... send with mac_out ...
 *                             case IO_ARP_ASK:   iip_arp_request(ws, my_mac, my_ip, ip_be, opaque);
 *                             case IO_ARP_WAIT:  try again later (io_arp_cache_next_ms tells when)
 *                             case IO_ARP_FAILED: no answer after the retries }
 *
 * Header-style (static functions); needs only <stdint.h> and <string.h>.
 */
#ifndef IO_COMMON_ARP_CACHE_H
#define IO_COMMON_ARP_CACHE_H

#include <stdint.h>
#include <string.h>

#define IO_ARP_CACHE_SIZE 64	/* entries; the oldest is replaced when full */

enum io_arp_result {
	IO_ARP_FOUND = 0,	/* mac_out holds the address */
	IO_ARP_ASK,		/* send an ARP request now (counted as a try) */
	IO_ARP_WAIT,		/* a request is out; wait for the reply or the retry time */
	IO_ARP_FAILED		/* no reply after every try; the entry is dropped */
};

struct io_arp_entry {
	uint32_t ip_be;		/* 0: free */
	uint8_t mac[6];
	uint8_t resolved;
	uint8_t tries;
	uint32_t stamp_ms;	/* learnt at (resolved) or last asked at (pending) */
};

struct io_arp_cache {
	uint32_t ttl_ms;	/* a learnt entry is trusted this long */
	uint32_t retry_ms;	/* between requests for an unresolved address */
	uint8_t max_tries;
	struct io_arp_entry e[IO_ARP_CACHE_SIZE];
};

static inline void io_arp_cache_init(struct io_arp_cache *c, uint32_t ttl_ms, uint32_t retry_ms, uint8_t max_tries)
{
	memset(c, 0, sizeof(*c));
	c->ttl_ms = ttl_ms;
	c->retry_ms = retry_ms;
	c->max_tries = max_tries ? max_tries : 1;
}

/* The entry for ip_be, or the slot to use for it (free, else the oldest). */
static inline struct io_arp_entry *io_arp_cache_slot(struct io_arp_cache *c, uint32_t ip_be, int *found)
{
	struct io_arp_entry *victim = &c->e[0];
	unsigned i;
	for (i = 0; i < IO_ARP_CACHE_SIZE; i++) {
		struct io_arp_entry *x = &c->e[i];
		if (x->ip_be == ip_be) {
			*found = 1;
			return x;
		}
		if (!x->ip_be)
			victim = x;
		else if (victim->ip_be && (int32_t) (x->stamp_ms - victim->stamp_ms) < 0)
			victim = x;
	}
	*found = 0;
	return victim;
}

/* Records a reply (or any trustworthy sender): ip (4 bytes, network order) is at mac. */
static inline void io_arp_cache_learn(struct io_arp_cache *c, const uint8_t *ip, const uint8_t *mac, uint32_t now_ms)
{
	uint32_t ip_be;
	int found;
	struct io_arp_entry *x;
	memcpy(&ip_be, ip, 4);
	if (!ip_be)
		return;
	x = io_arp_cache_slot(c, ip_be, &found);
	x->ip_be = ip_be;
	memcpy(x->mac, mac, 6);
	x->resolved = 1;
	x->tries = 0;
	x->stamp_ms = now_ms;
}

/*
 * What to do to send to ip_be now.  A learnt entry older than ttl_ms is
 * resolved again.
 */
static inline enum io_arp_result io_arp_cache_resolve(struct io_arp_cache *c, uint32_t ip_be, uint8_t mac_out[6], uint32_t now_ms)
{
	int found;
	struct io_arp_entry *x = io_arp_cache_slot(c, ip_be, &found);
	if (found && x->resolved) {
		if (now_ms - x->stamp_ms < c->ttl_ms) {
			memcpy(mac_out, x->mac, 6);
			return IO_ARP_FOUND;
		}
		/* stale: resolve again, as for an unknown address */
		x->resolved = 0;
		x->tries = 1;
		x->stamp_ms = now_ms;
		return IO_ARP_ASK;
	}
	if (!found) {
		memset(x, 0, sizeof(*x));
		x->ip_be = ip_be;
		x->tries = 1;
		x->stamp_ms = now_ms;
		return IO_ARP_ASK;
	}
	if (now_ms - x->stamp_ms < c->retry_ms)
		return IO_ARP_WAIT;
	if (x->tries >= c->max_tries) {
		memset(x, 0, sizeof(*x));
		return IO_ARP_FAILED;
	}
	x->tries++;
	x->stamp_ms = now_ms;
	return IO_ARP_ASK;
}

/* Milliseconds until a pending resolution wants a retry (UINT32_MAX: none pending). */
static inline uint32_t io_arp_cache_next_ms(const struct io_arp_cache *c, uint32_t now_ms)
{
	uint32_t next = UINT32_MAX;
	unsigned i;
	for (i = 0; i < IO_ARP_CACHE_SIZE; i++) {
		const struct io_arp_entry *x = &c->e[i];
		if (x->ip_be && !x->resolved) {
			uint32_t due = now_ms - x->stamp_ms >= c->retry_ms ? 0 : c->retry_ms - (now_ms - x->stamp_ms);
			if (due < next)
				next = due;
		}
	}
	return next;
}

#endif /* IO_COMMON_ARP_CACHE_H */
