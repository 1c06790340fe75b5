/*
 * Tests for io/common/rss.h: the Toeplitz hash against Microsoft's published
 * verification vectors, the table-driven fast path against the bitwise
 * definition, the symmetric key, the RETA, frame steering (including
 * malformed frames), and agreement between frame steering and the flow
 * affinity answer that helper_ip4_get_connection_affinity() gives.
 */
#include <arpa/inet.h>
#include <stdlib.h>

#include "../../io/common/rss.h"
#include "check.h"

/* From Microsoft's "Verifying the RSS Hash Calculation" (the same table is in
 * the Intel 82599 datasheet, "RSS Verification Suite"): every IPv4 row, with
 * the hash over (src, dst) and over (src, dst, sport, dport). */
static const struct ms_vector {
	const char *dst, *src;
	uint16_t dport, sport;
	uint32_t hash_ip, hash_ip_l4;
} ms_vectors[] = {
	{ "161.142.100.80", "66.9.149.187", 1766, 2794, 0x323e8fc2, 0x51ccc178 },
	{ "65.69.140.83", "199.92.111.2", 4739, 14230, 0xd718262a, 0xc626b0ea },
	{ "12.22.207.184", "24.19.198.95", 38024, 12898, 0xd2d0a5de, 0x5c2b394a },
	{ "209.142.163.6", "38.27.205.30", 2217, 48228, 0x82989176, 0xafc7327f },
	{ "202.188.127.2", "153.39.163.191", 1303, 44251, 0x5d1809c5, 0x10e828a2 },
};
#define NUM_MS_VECTORS (sizeof(ms_vectors) / sizeof(ms_vectors[0]))

static uint64_t rng_state = 0x9e3779b97f4a7c15ULL;

static uint32_t rnd32(void)
{
	/* xorshift64*: deterministic, so a failure reproduces */
	rng_state ^= rng_state >> 12;
	rng_state ^= rng_state << 25;
	rng_state ^= rng_state >> 27;
	return (uint32_t) ((rng_state * 0x2545f4914f6cdd1dULL) >> 32);
}

static uint32_t ip_be(const char *dotted)
{
	struct in_addr a;
	if (inet_pton(AF_INET, dotted, &a) != 1) {
		fprintf(stderr, "bad address in test table: %s\n", dotted);
		exit(2);
	}
	return a.s_addr;
}

/* The definition taken literally, independent of io_rss_toeplitz(): bit j of
 * the key (MSB of key[0] is bit 0); for each set input bit i, XOR the 32 key
 * bits i .. i+31. */
static uint32_t naive_toeplitz(const uint8_t *key, const uint8_t *in, size_t len)
{
	uint32_t h = 0;
	for (size_t i = 0; i < len * 8; i++) {
		if (!((in[i / 8] >> (7 - i % 8)) & 1))
			continue;
		uint32_t w = 0;
		for (size_t j = 0; j < 32; j++)
			w = (w << 1) | ((key[(i + j) / 8] >> (7 - (i + j) % 8)) & 1);
		h ^= w;
	}
	return h;
}

static void test_ms_vectors(void)
{
	struct io_rss rss;
	char what[160];

	io_rss_init(&rss, NULL, 1);
	for (size_t v = 0; v < NUM_MS_VECTORS; v++) {
		const struct ms_vector *t = &ms_vectors[v];
		uint32_t src = ip_be(t->src), dst = ip_be(t->dst);
		uint16_t sp = htons(t->sport), dp = htons(t->dport);
		uint8_t in[12];
		uint32_t h;

		memcpy(in, &src, 4);
		memcpy(in + 4, &dst, 4);
		memcpy(in + 8, &sp, 2);
		memcpy(in + 10, &dp, 2);

		h = io_rss_hash_ip4(&rss, src, dst);
		snprintf(what, sizeof(what), "MS vector IPv4 %s -> %s = 0x%08x", t->src, t->dst, t->hash_ip);
		check(h == t->hash_ip, what, "got 0x%08x", h);

		h = io_rss_hash_ip4_l4(&rss, src, dst, sp, dp);
		snprintf(what, sizeof(what), "MS vector IPv4+ports %s:%u -> %s:%u = 0x%08x", t->src, t->sport,
			 t->dst, t->dport, t->hash_ip_l4);
		check(h == t->hash_ip_l4, what, "got 0x%08x", h);

		h = io_rss_toeplitz(io_rss_key_microsoft, IO_RSS_KEY_LEN, in, 8);
		snprintf(what, sizeof(what), "MS vector bitwise IPv4 %s -> %s", t->src, t->dst);
		check(h == t->hash_ip, what, "got 0x%08x", h);

		h = io_rss_toeplitz(io_rss_key_microsoft, IO_RSS_KEY_LEN, in, 12);
		snprintf(what, sizeof(what), "MS vector bitwise IPv4+ports %s:%u -> %s:%u", t->src, t->sport,
			 t->dst, t->dport);
		check(h == t->hash_ip_l4, what, "got 0x%08x", h);

		h = naive_toeplitz(io_rss_key_microsoft, in, 12);
		snprintf(what, sizeof(what), "MS vector naive reference IPv4+ports %s -> %s", t->src, t->dst);
		check(h == t->hash_ip_l4, what, "got 0x%08x", h);
	}
}

static void random_key(uint8_t key[IO_RSS_KEY_LEN])
{
	for (int i = 0; i < IO_RSS_KEY_LEN; i++)
		key[i] = (uint8_t) rnd32();
}

/* Fast (table) path == bitwise definition == naive definition, random keys
 * and inputs, both input lengths. */
static void test_fast_path_matches_definition(void)
{
	static struct io_rss rss;
	uint8_t key[IO_RSS_KEY_LEN];
	unsigned mismatches = 0, runs = 0;
	uint32_t first_bad = 0;

	for (int k = 0; k < 20; k++) {
		random_key(key);
		io_rss_init(&rss, key, 4);
		for (int i = 0; i < 5000; i++) {
			uint32_t s = rnd32(), d = rnd32(), ports = rnd32();
			uint16_t sp = (uint16_t) ports, dp = (uint16_t) (ports >> 16);
			uint8_t in[12];
			memcpy(in, &s, 4);
			memcpy(in + 4, &d, 4);
			memcpy(in + 8, &sp, 2);
			memcpy(in + 10, &dp, 2);
			uint32_t fast4 = io_rss_hash_ip4_l4(&rss, s, d, sp, dp);
			uint32_t fast2 = io_rss_hash_ip4(&rss, s, d);
			if (fast4 != io_rss_toeplitz(key, sizeof(key), in, 12) || fast4 != naive_toeplitz(key, in, 12) ||
			    fast2 != io_rss_toeplitz(key, sizeof(key), in, 8) || fast2 != naive_toeplitz(key, in, 8)) {
				if (!mismatches)
					first_bad = s;
				mismatches++;
			}
			runs++;
		}
	}
	check(mismatches == 0, "table hash == bitwise == naive definition (20 random keys x 5000 tuples)",
	      "%u of %u differ, first src 0x%08x", mismatches, runs, first_bad);
	check(io_rss_toeplitz(key, 15, (const uint8_t *) "123456789012", 12) == 0,
	      "bitwise hash refuses a key shorter than input + 4", "returned non-zero");
}

static void test_symmetric_key(void)
{
	static struct io_rss sym, ms;
	unsigned asym4 = 0, asym2 = 0, ms_asym = 0;
	const int n = 100000;

	io_rss_init(&sym, io_rss_key_symmetric, 1);
	io_rss_init(&ms, NULL, 1);
	for (int i = 0; i < n; i++) {
		uint32_t a = rnd32(), b = rnd32(), ports = rnd32();
		uint16_t pa = (uint16_t) ports, pb = (uint16_t) (ports >> 16);
		if (io_rss_hash_ip4_l4(&sym, a, b, pa, pb) != io_rss_hash_ip4_l4(&sym, b, a, pb, pa))
			asym4++;
		if (io_rss_hash_ip4(&sym, a, b) != io_rss_hash_ip4(&sym, b, a))
			asym2++;
		if (io_rss_hash_ip4_l4(&ms, a, b, pa, pb) != io_rss_hash_ip4_l4(&ms, b, a, pb, pa))
			ms_asym++;
	}
	check(asym4 == 0, "symmetric key: hash(a:pa, b:pb) == hash(b:pb, a:pa) for 100000 random flows",
	      "%u asymmetric", asym4);
	check(asym2 == 0, "symmetric key: hash(a, b) == hash(b, a) for 100000 random pairs", "%u asymmetric", asym2);
	/* the property is the key's doing: the Microsoft key does not have it */
	check(ms_asym > (unsigned) n / 2, "Microsoft key is direction-dependent (control for the test above)",
	      "only %u of %d flows differ by direction", ms_asym, n);
}

static void test_reta(void)
{
	static struct io_rss rss;
	uint16_t table[IO_RSS_RETA_SIZE];
	int ok = 1;

	check(io_rss_init(&rss, NULL, 0) == -1, "init refuses 0 queues", "accepted");
	for (uint16_t nq = 1; nq <= 16 && ok; nq++) {
		io_rss_init(&rss, NULL, nq);
		for (unsigned i = 0; i < IO_RSS_RETA_SIZE; i++)
			if (rss.reta[i] != i % nq)
				ok = 0;
	}
	check(ok, "default RETA is round robin (entry i -> queue i %% n) for 1..16 queues", "mismatch");

	io_rss_init(&rss, NULL, 4);
	for (unsigned i = 0; i < IO_RSS_RETA_SIZE; i++)
		table[i] = (uint16_t) (3 - (i / 32)); /* blocks of 32 entries, reversed */
	check(io_rss_set_reta(&rss, table) == 0, "custom RETA accepted", "refused");
	ok = 1;
	for (int i = 0; i < 1000; i++) {
		uint32_t h = rnd32();
		if (io_rss_queue_for_hash(&rss, h) != 3 - ((h & 127) / 32))
			ok = 0;
	}
	check(ok, "queue = RETA[hash & 127] with the custom RETA", "mismatch");
	table[77] = 4;
	check(io_rss_set_reta(&rss, table) == -1 && rss.reta[77] == 3 - 77 / 32,
	      "RETA naming a queue >= num_queues refused, old RETA kept", "accepted or modified");
}

struct flow {
	uint8_t proto;
	uint32_t local_ip, peer_ip;
	uint16_t local_port, peer_port;
};

/* Builds the frame the peer sends us: Ethernet [+ VLAN] / IPv4 [+ options] /
 * TCP or UDP, src = peer, dst = local.  Returns its length. */
static size_t build_frame(uint8_t *buf, const struct flow *f, int vlan, int ip_opt_words)
{
	size_t off = 12, ihl = 5 + (size_t) ip_opt_words, l4 = f->proto == 6 ? 20 : 8;
	memset(buf, 0, 14 + 4 + 60 + 20);
	memcpy(buf, "\x02\x00\x00\x00\x00\x01\x02\x00\x00\x00\x00\x02", 12);
	if (vlan) {
		buf[off++] = 0x81;
		buf[off++] = 0x00;
		buf[off++] = 0x00;
		buf[off++] = 0x05;
	}
	buf[off++] = 0x08;
	buf[off++] = 0x00;
	uint8_t *ip = buf + off;
	ip[0] = (uint8_t) (0x40 | ihl);
	uint16_t total = htons((uint16_t) (ihl * 4 + l4));
	memcpy(ip + 2, &total, 2);
	ip[6] = 0x40; /* don't fragment */
	ip[8] = 64;
	ip[9] = f->proto;
	memcpy(ip + 12, &f->peer_ip, 4);
	memcpy(ip + 16, &f->local_ip, 4);
	for (int w = 0; w < ip_opt_words; w++)
		ip[20 + 4 * w] = 1; /* NOP options */
	memcpy(ip + ihl * 4, &f->peer_port, 2);
	memcpy(ip + ihl * 4 + 2, &f->local_port, 2);
	return off + ihl * 4 + l4;
}

static void random_flow(struct flow *f, uint8_t proto)
{
	f->proto = proto;
	f->local_ip = rnd32();
	f->peer_ip = rnd32();
	f->local_port = (uint16_t) rnd32();
	f->peer_port = (uint16_t) rnd32();
}

/* The core promise: a frame the peer sends for a flow lands on the queue
 * that the affinity function names for that flow. */
static void test_frame_matches_affinity(void)
{
	static struct io_rss rss;
	static const uint16_t queue_counts[] = { 1, 2, 3, 4, 7, 8, 16 };
	uint8_t random[IO_RSS_KEY_LEN];
	const uint8_t *keys[3] = { io_rss_key_microsoft, io_rss_key_symmetric, random };
	const char *key_names[3] = { "Microsoft", "symmetric", "random" };
	uint8_t frame[128];
	char what[200];

	random_key(random);
	for (int k = 0; k < 3; k++) {
		for (size_t q = 0; q < sizeof(queue_counts) / sizeof(queue_counts[0]); q++) {
			uint16_t nq = queue_counts[q];
			unsigned mismatches = 0, per_queue[16] = { 0 }, reverse_differs = 0;
			const int n = 20000;
			io_rss_init(&rss, keys[k], nq);
			for (int i = 0; i < n; i++) {
				struct flow f, rev;
				random_flow(&f, (i & 1) ? 17 : 6);
				size_t len = build_frame(frame, &f, (i >> 1) & 1, (int) (rnd32() % 3));
				uint16_t want = io_rss_queue_for_flow(f.proto, f.local_ip, f.local_port, f.peer_ip,
								      f.peer_port, &rss);
				uint16_t got = io_rss_queue_for_frame(&rss, frame, len);
				if (got != want)
					mismatches++;
				if (got < 16)
					per_queue[got]++;
				/* the frame we would send (src = local) hashes as the reverse flow */
				rev = f;
				rev.local_ip = f.peer_ip;
				rev.peer_ip = f.local_ip;
				rev.local_port = f.peer_port;
				rev.peer_port = f.local_port;
				len = build_frame(frame, &rev, 0, 0);
				if (io_rss_queue_for_frame(&rss, frame, len) != want)
					reverse_differs++;
			}
			snprintf(what, sizeof(what),
				 "%s key, %u queues: frame from peer lands on the affinity queue (%d random TCP/UDP flows, "
				 "with/without VLAN and IP options)",
				 key_names[k], nq, n);
			check(mismatches == 0, what, "%u mismatches", mismatches);
			if (nq > 1) {
				unsigned unused = 0;
				for (unsigned i = 0; i < nq; i++)
					if (per_queue[i] < (unsigned) n / nq / 2)
						unused++;
				snprintf(what, sizeof(what), "%s key, %u queues: every queue gets at least half its share",
					 key_names[k], nq);
				check(unused == 0, what, "%u queues underused", unused);
				if (k != 1) {
					snprintf(what, sizeof(what),
						 "%s key, %u queues: our own outgoing frames hash differently "
						 "(direction matters)", key_names[k], nq);
					check(reverse_differs > 0, what, "reverse direction always agreed");
				} else {
					snprintf(what, sizeof(what),
						 "symmetric key, %u queues: both directions of a flow share the queue", nq);
					check(reverse_differs == 0, what, "%u flows differ by direction", reverse_differs);
				}
			}
		}
	}
}

/* End to end through the frame parser with the published vectors: an
 * identity RETA over 128 queues exposes the low 7 bits of the hash. */
static void test_frame_hash_is_ms_hash(void)
{
	static struct io_rss rss;
	uint16_t identity[IO_RSS_RETA_SIZE];
	uint8_t frame[128];
	int ok = 1;

	io_rss_init(&rss, NULL, IO_RSS_RETA_SIZE);
	for (unsigned i = 0; i < IO_RSS_RETA_SIZE; i++)
		identity[i] = (uint16_t) i;
	io_rss_set_reta(&rss, identity);
	for (size_t v = 0; v < NUM_MS_VECTORS; v++) {
		struct flow f = { 6, ip_be(ms_vectors[v].dst), ip_be(ms_vectors[v].src), htons(ms_vectors[v].dport),
				  htons(ms_vectors[v].sport) };
		size_t len = build_frame(frame, &f, 0, 0);
		if (io_rss_queue_for_frame(&rss, frame, len) != (ms_vectors[v].hash_ip_l4 & 127))
			ok = 0;
		f.proto = 17;
		len = build_frame(frame, &f, 1, 0);
		if (io_rss_queue_for_frame(&rss, frame, len) != (ms_vectors[v].hash_ip_l4 & 127))
			ok = 0;
	}
	check(ok, "frame parser feeds (src, dst, sport, dport) in wire order: queue == MS hash & 127 for all rows",
	      "mismatch");
}

/* Everything that is not an unfragmented IPv4 TCP/UDP frame goes to queue 0,
 * and no length makes the parser read past the frame. */
static void test_other_frames_go_to_queue_0(void)
{
	static struct io_rss rss;
	uint8_t base[128], frame[128];
	struct flow f;
	size_t len, ip = 14;
	uint16_t q;

	io_rss_init(&rss, NULL, 8);
	/* pick a flow that does not land on queue 0, so "0" means "not hashed" */
	do {
		random_flow(&f, 6);
		len = build_frame(base, &f, 0, 0);
	} while (io_rss_queue_for_frame(&rss, base, len) == 0);
	check(1, "found a TCP flow steered to a non-zero queue", "-");

	memcpy(frame, base, len);
	frame[ip + 9] = 1; /* ICMP */
	check(io_rss_queue_for_frame(&rss, frame, len) == 0, "ICMP -> queue 0", "not 0");

	memcpy(frame, base, len);
	frame[12] = 0x08;
	frame[13] = 0x06; /* ARP */
	check(io_rss_queue_for_frame(&rss, frame, len) == 0, "ARP ethertype -> queue 0", "not 0");

	memcpy(frame, base, len);
	frame[12] = 0x86;
	frame[13] = 0xdd; /* IPv6 */
	check(io_rss_queue_for_frame(&rss, frame, len) == 0, "IPv6 ethertype -> queue 0", "not 0");

	memcpy(frame, base, len);
	frame[ip + 6] = 0x20; /* more fragments */
	check(io_rss_queue_for_frame(&rss, frame, len) == 0, "first fragment (MF set) -> queue 0", "not 0");

	memcpy(frame, base, len);
	frame[ip + 6] = 0x00;
	frame[ip + 7] = 0x10; /* offset 128 bytes */
	check(io_rss_queue_for_frame(&rss, frame, len) == 0, "later fragment (offset != 0) -> queue 0", "not 0");

	memcpy(frame, base, len);
	frame[ip] = 0x65; /* version 6 in an IPv4 ethertype */
	check(io_rss_queue_for_frame(&rss, frame, len) == 0, "IP version != 4 -> queue 0", "not 0");

	memcpy(frame, base, len);
	frame[ip] = 0x44; /* IHL 4 words: below the minimum */
	check(io_rss_queue_for_frame(&rss, frame, len) == 0, "IHL < 5 -> queue 0", "not 0");

	memcpy(frame, base, len);
	frame[ip] = 0x4f; /* IHL 15 words: header runs past the frame */
	check(io_rss_queue_for_frame(&rss, frame, len) == 0, "IHL beyond the frame -> queue 0", "not 0");

	memcpy(frame, base, len);
	frame[ip + 2] = 0;
	frame[ip + 3] = 10; /* total length smaller than the header */
	check(io_rss_queue_for_frame(&rss, frame, len) == 0, "IP total length < header length -> queue 0", "not 0");

	check(io_rss_queue_for_frame(&rss, NULL, 100) == 0, "NULL frame -> queue 0", "not 0");

	/* Every truncation of the frame, each in a buffer of exactly that size
	 * (AddressSanitizer in run.sh catches any read past its end); the ports
	 * end at byte 14 + 20 + 4, so shorter frames cannot be hashed. */
	int ok = 1;
	for (size_t l = 0; l <= len; l++) {
		uint8_t *exact = malloc(l ? l : 1);
		memcpy(exact, base, l);
		q = io_rss_queue_for_frame(&rss, exact, l);
		if (l < ip + 20 + 4 ? q != 0 : q != io_rss_queue_for_frame(&rss, base, len))
			ok = 0;
		free(exact);
	}
	check(ok, "every truncation: queue 0 until the ports are present, the flow's queue after", "mismatch");

	ok = 1;
	for (int i = 0; i < 200000; i++) {
		size_t l = rnd32() % 80;
		uint8_t *junk = malloc(l ? l : 1);
		for (size_t b = 0; b < l; b++)
			junk[b] = (uint8_t) rnd32();
		if (l >= 14 && (i & 1)) { /* half of them look like IPv4 */
			junk[12] = 0x08;
			junk[13] = 0x00;
			if (l > 14)
				junk[14] = (uint8_t) (0x40 | (junk[14] & 0x0f));
		}
		if (io_rss_queue_for_frame(&rss, junk, l) >= rss.num_queues)
			ok = 0;
		free(junk);
	}
	check(ok, "200000 random frames: no crash, queue always < num_queues", "queue out of range");
}

static void test_key_parse(void)
{
	uint8_t key[IO_RSS_KEY_LEN];
	char err[200];
	char hex[200], colon[200];
	size_t h = 0, c = 0;

	for (int i = 0; i < IO_RSS_KEY_LEN; i++) {
		h += (size_t) snprintf(hex + h, sizeof(hex) - h, "%02x", io_rss_key_microsoft[i]);
		c += (size_t) snprintf(colon + c, sizeof(colon) - c, "%s%02X", i ? ":" : "", io_rss_key_microsoft[i]);
	}
	memset(key, 0, sizeof(key));
	check(io_rss_key_parse_hex(hex, key, err, sizeof(err)) == 0 &&
		      memcmp(key, io_rss_key_microsoft, IO_RSS_KEY_LEN) == 0,
	      "key parse: 80 hex digits", "%s", err);
	memset(key, 0, sizeof(key));
	check(io_rss_key_parse_hex(colon, key, err, sizeof(err)) == 0 &&
		      memcmp(key, io_rss_key_microsoft, IO_RSS_KEY_LEN) == 0,
	      "key parse: colon-separated upper-case bytes", "%s", err);

	static const char *bad[] = { "", "6d5a", "zz", ":6d", "6d::5a", "6d5a:", "6", NULL };
	for (int i = 0; bad[i]; i++) {
		char what[100];
		err[0] = '\0';
		snprintf(what, sizeof(what), "key parse rejects \"%s\" with a message", bad[i]);
		check(io_rss_key_parse_hex(bad[i], key, err, sizeof(err)) == -1 && err[0] != '\0', what, "accepted");
	}
	char longer[260];
	snprintf(longer, sizeof(longer), "%s00", hex);
	check(io_rss_key_parse_hex(longer, key, err, sizeof(err)) == -1 && strstr(err, "longer") != NULL,
	      "key parse rejects 41 bytes", "%s", err);
	hex[78] = 'g';
	check(io_rss_key_parse_hex(hex, key, err, sizeof(err)) == -1, "key parse rejects a non-hex digit", "accepted");
	check(io_rss_key_parse_hex(NULL, key, err, sizeof(err)) == -1, "key parse rejects NULL", "accepted");
}

int main(void)
{
	test_ms_vectors();
	test_fast_path_matches_definition();
	test_symmetric_key();
	test_reta();
	test_frame_hash_is_ms_hash();
	test_frame_matches_affinity();
	test_other_frames_go_to_queue_0();
	test_key_parse();
	return check_failures ? 1 : 0;
}
