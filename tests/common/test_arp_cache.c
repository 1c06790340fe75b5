/* io/common/arp_cache.h: learning, retries with their timing, expiry, eviction. */
#include "check.h"
#include "../../io/common/arp_cache.h"

static uint32_t ip(uint8_t a, uint8_t b, uint8_t c, uint8_t d)
{
	uint8_t v[4] = { a, b, c, d };
	uint32_t r;
	memcpy(&r, v, 4);
	return r;
}

int main(void)
{
	struct io_arp_cache c;
	uint8_t mac[6] = { 2, 0, 0, 0, 0, 9 }, out[6] = { 0 };
	uint32_t a = ip(10, 0, 0, 9), t = 1000;
	unsigned i;
	int asks = 0;

	io_arp_cache_init(&c, 30000, 200, 3);
	check(io_arp_cache_resolve(&c, a, out, t) == IO_ARP_ASK, "unknown address: ask", "%s", "wrong result");
	check(io_arp_cache_resolve(&c, a, out, t + 199) == IO_ARP_WAIT, "within the retry time: wait", "%s", "wrong result");
	check(io_arp_cache_next_ms(&c, t + 150) == 50, "next retry due in 50 ms", "got %u", io_arp_cache_next_ms(&c, t + 150));
	check(io_arp_cache_resolve(&c, a, out, t + 200) == IO_ARP_ASK, "retry time passed: ask again", "%s", "wrong result");
	check(io_arp_cache_resolve(&c, a, out, t + 400) == IO_ARP_ASK, "third try", "%s", "wrong result");
	check(io_arp_cache_resolve(&c, a, out, t + 600) == IO_ARP_FAILED, "after max tries: failed", "%s", "wrong result");
	check(io_arp_cache_resolve(&c, a, out, t + 601) == IO_ARP_ASK, "a failed entry starts over", "%s", "wrong result");

	io_arp_cache_learn(&c, (const uint8_t *) &a, mac, t + 700);
	check(io_arp_cache_resolve(&c, a, out, t + 701) == IO_ARP_FOUND && !memcmp(out, mac, 6), "reply learnt: found with its MAC", "%s", "wrong result");
	check(io_arp_cache_next_ms(&c, t + 701) == UINT32_MAX, "nothing pending after the reply", "%s", "wrong result");
	check(io_arp_cache_resolve(&c, a, out, t + 700 + 29999) == IO_ARP_FOUND, "still valid just before the TTL", "%s", "wrong result");
	check(io_arp_cache_resolve(&c, a, out, t + 700 + 30000) == IO_ARP_ASK, "expired after the TTL: ask", "%s", "wrong result");

	/* more addresses than entries: the oldest goes, nothing breaks */
	io_arp_cache_init(&c, 30000, 200, 3);
	for (i = 0; i < IO_ARP_CACHE_SIZE + 10; i++) {
		uint32_t x = ip(10, 1, (uint8_t) (i >> 8), (uint8_t) i);
		mac[5] = (uint8_t) i;
		io_arp_cache_learn(&c, (const uint8_t *) &x, mac, t + i);
	}
	{
		uint32_t newest = ip(10, 1, 0, (uint8_t) (IO_ARP_CACHE_SIZE + 9)), oldest = ip(10, 1, 0, 0);
		check(io_arp_cache_resolve(&c, newest, out, t + 100) == IO_ARP_FOUND && out[5] == IO_ARP_CACHE_SIZE + 9, "newest entry kept", "%s", "wrong result");
		check(io_arp_cache_resolve(&c, oldest, out, t + 100) == IO_ARP_ASK, "oldest entry evicted", "%s", "wrong result");
	}
	/* a zero address is never learnt */
	{
		uint32_t zero = 0;
		io_arp_cache_init(&c, 30000, 200, 3);
		io_arp_cache_learn(&c, (const uint8_t *) &zero, mac, t);
		for (i = 0; i < IO_ARP_CACHE_SIZE; i++)
			asks += c.e[i].ip_be != 0;
		check(asks == 0, "0.0.0.0 is not learnt", "%d entries", asks);
	}
	return check_failures ? 1 : 0;
}
