/* tests/io/test_offload.c — software offload finishing of
 * io/common/pkt_offload.h against an independent reference checksum:
 * TCP/UDP/IPv4 checksum filling, TSO segmentation of a big chained frame
 * into exact segments, receive verification (good and corrupted), and the
 * pcap writer. Writes the produced frames to argv[1] (pcap, microseconds)
 * and argv[2] (nanoseconds) for tshark to read back in run.sh. */
#include "../../io/common/pkt_offload.h"
#include "../../io/common/pcap.h"
#include "check.h"

/* reference: RFC 1071 sum computed byte pair by byte pair, no tricks */
static uint16_t ref_csum(const uint8_t *p, size_t len, uint32_t start)
{
	uint64_t sum = start;
	size_t i;
	for (i = 0; i + 1 < len; i += 2)
		sum += (uint32_t) (p[i] * 256 + p[i + 1]);
	if (len & 1)
		sum += (uint32_t) p[len - 1] * 256;
	while (sum >> 16)
		sum = (sum & 0xffff) + (sum >> 16);
	return (uint16_t) sum;
}

/* checks a linear IPv4 TCP/UDP frame with the reference: 1 if all good */
static int ref_frame_ok(const uint8_t *f, uint32_t len)
{
	const uint8_t *ip = f + 14;
	uint32_t ihl = (ip[0] & 15u) * 4, tlen = (uint32_t) (ip[2] << 8 | ip[3]);
	uint32_t pseudo;
	if (tlen + 14 > len || ref_csum(ip, ihl, 0) != 0xffff)
		return 0;
	pseudo = (uint32_t) (ip[12] << 8 | ip[13]) + (uint32_t) (ip[14] << 8 | ip[15]) +
		 (uint32_t) (ip[16] << 8 | ip[17]) + (uint32_t) (ip[18] << 8 | ip[19]) + ip[9] + (tlen - ihl);
	return ref_csum(ip + ihl, tlen - ihl, pseudo) == 0xffff;
}

static const uint8_t mac_a[6] = { 2, 0, 0, 0, 0, 1 }, mac_b[6] = { 2, 0, 0, 0, 0, 2 };

/* Ethernet + IPv4 + TCP (12 bytes of options) header segment, with the
 * IPv4 checksum zero and the TCP checksum field holding the pseudo sum
 * (without the length, TSO style, if tso) */
static struct io_pkt *tcp_header_seg(struct io_pkt_pool *p, uint32_t payload, uint8_t flags, int tso)
{
	struct io_pkt *h = io_pkt_alloc(p);
	uint8_t *f = h->data, *ip = f + 14, *tcp = ip + 20;
	uint32_t tlen = 20 + 32 + payload;
	memset(f, 0, 66);
	memcpy(f, mac_b, 6);
	memcpy(f + 6, mac_a, 6);
	f[12] = 0x08;
	ip[0] = 0x45;
	io_wr16(ip + 2, (uint16_t) tlen);
	io_wr16(ip + 4, 0x1234);
	io_wr16(ip + 6, 0x4000); /* DF */
	ip[8] = 64;
	ip[9] = 6;
	ip[12] = 10; ip[15] = 1; /* 10.0.0.1 -> 10.0.0.2 */
	ip[16] = 10; ip[19] = 2;
	io_wr16(tcp, 40000);
	io_wr16(tcp + 2, 5001);
	io_wr32(tcp + 4, 0xfffff000u); /* wraps during segmentation */
	io_wr32(tcp + 8, 0x01020304);
	tcp[12] = 8 << 4;              /* 32-byte header */
	tcp[13] = flags;
	io_wr16(tcp + 14, 65535);
	tcp[20] = 1; tcp[21] = 1; tcp[22] = 8; tcp[23] = 10; /* NOP NOP timestamps */
	io_wr32(tcp + 24, 7);
	io_wr32(tcp + 28, 9);
	io_wr16(tcp + 16, io_csum_fold(io_csum_pseudo(ip, 6, tso ? 0 : 20 + 12 + payload)));
	h->len = 66;
	return h;
}

static uint8_t pattern(uint32_t i) { return (uint8_t) (i * 7 + (i >> 8)); }

/* payload as segments of odd sizes so that odd boundaries get exercised */
static void append_payload(struct io_pkt_pool *p, struct io_pkt *h, uint32_t payload)
{
	static const uint16_t sizes[] = { 1, 999, 1448, 777, 2000, 3 };
	uint32_t off = 0, k = 0, i;
	while (off < payload) {
		struct io_pkt *s = io_pkt_alloc(p);
		uint32_t n = sizes[k++ % 6];
		if (n > payload - off)
			n = payload - off;
		for (i = 0; i < n; i++)
			s->data[i] = pattern(off + i);
		s->len = (uint16_t) n;
		io_pkt_chain_append(h, s);
		off += n;
	}
}

static struct io_pcap pc_us, pc_ns;
static uint64_t t_ns = 1700000000ull * 1000000000ull + 123456789;

static void capture(const struct io_pkt *pkt)
{
	const struct io_pkt *s;
	io_pcap_begin(&pc_us, t_ns, io_pkt_total_len(pkt));
	io_pcap_begin(&pc_ns, t_ns, io_pkt_total_len(pkt));
	for (s = pkt; s; s = s->next) {
		io_pcap_append(&pc_us, s->data, s->len);
		io_pcap_append(&pc_ns, s->data, s->len);
	}
	io_pcap_end(&pc_us);
	io_pcap_end(&pc_ns);
	t_ns += 1001;
}

int main(int argc, char **argv)
{
	struct io_pkt_pool p;
	struct io_offload_stats st;
	struct io_pkt *h, *out[64], *lin;
	uint8_t flat[65536];
	uint32_t total_payload = 20000, mss = 1500 - 20 - 32, i, k;
	int n, ok;

	if (argc < 3) {
		fprintf(stderr, "usage: %s out_us.pcap out_ns.pcap\n", argv[0]);
		return 2;
	}
	memset(&st, 0, sizeof(st));
	CHECK("pool init", io_pkt_pool_init(&p, 256, 128, 2048, 2, 65664) == 0, "failed");
	CHECK("pcap open (us)", io_pcap_open(&pc_us, argv[1], 0) == 0, "cannot write %s", argv[1]);
	CHECK("pcap open (ns)", io_pcap_open(&pc_ns, argv[2], 1) == 0, "cannot write %s", argv[2]);

	/* chain checksum across odd boundaries equals the reference */
	h = tcp_header_seg(&p, 5000, 0x10, 0);
	append_payload(&p, h, 5000);
	io_pkt_copy_out(h, 0, flat, 66 + 5000);
	CHECK("chain checksum across odd segment boundaries",
	      io_csum_fold(io_csum_chain(h, 3, 66 + 5000 - 3, 0)) == ref_csum(flat + 3, 66 + 5000 - 3, 0),
	      "%04x vs %04x", io_csum_fold(io_csum_chain(h, 3, 5063, 0)), ref_csum(flat + 3, 5063, 0));

	/* plain checksum offload: IPv4 + TCP marks on a chained 5000-byte frame
	 * (a jumbo frame: mtu 9000 so no TSO is involved) */
	h->flags |= IO_PKT_F_TX_IP4_CSUM | IO_PKT_F_TX_TCP_CSUM;
	n = io_pkt_finish_tx_offloads(&p, h, 9000, out, 64, &st);
	CHECK("checksum offload gives one linear frame", n == 1 && !out[0]->next && out[0]->len == 5066, "n %d", n);
	if (n == 1) {
		CHECK("checksums match the reference", ref_frame_ok(out[0]->data, out[0]->len), "bad checksum");
		CHECK("marks cleared on the wire frame", (out[0]->flags & IO_PKT_F_TX_MASK) == 0, "flags %x",
		      out[0]->flags);
		CHECK("input frame untouched (still pseudo sum)",
		      io_rd16(h->data + 14 + 20 + 16) == io_csum_fold(io_csum_pseudo(h->data + 14, 6, 5032)), "changed");
		CHECK("pseudo-header convention counted as followed", st.pseudo_ok == 1 && st.pseudo_mismatch == 0,
		      "ok %llu mismatch %llu", (unsigned long long) st.pseudo_ok, (unsigned long long) st.pseudo_mismatch);
		io_pkt_rx_verify_checksums(out[0]);
		CHECK("rx verification: all good", (out[0]->flags & (IO_PKT_F_RX_IP4_GOOD | IO_PKT_F_RX_TCP_GOOD)) ==
		      (IO_PKT_F_RX_IP4_GOOD | IO_PKT_F_RX_TCP_GOOD), "flags %x", out[0]->flags);
		/* flip one payload bit: TCP bad, IPv4 still good */
		out[0]->data[3000] ^= 0x10;
		io_pkt_rx_verify_checksums(out[0]);
		CHECK("rx verification: payload bit flip detected", (out[0]->flags & IO_PKT_F_RX_TCP_GOOD) == 0 &&
		      (out[0]->flags & IO_PKT_F_RX_IP4_GOOD), "flags %x", out[0]->flags);
		out[0]->data[3000] ^= 0x10;
		out[0]->data[14 + 8] ^= 0x01; /* TTL */
		io_pkt_rx_verify_checksums(out[0]);
		CHECK("rx verification: IPv4 header bit flip detected", (out[0]->flags & IO_PKT_F_RX_IP4_GOOD) == 0,
		      "flags %x", out[0]->flags);
		out[0]->data[14 + 8] ^= 0x01;
		capture(out[0]);
		io_pkt_free(out[0]);
	}
	/* the same frame without marks leaves the wire bytes as they were */
	h->flags = 0;
	n = io_pkt_finish_tx_offloads(&p, h, 9000, out, 64, &st);
	CHECK("unmarked frame copied unchanged", n == 1 && out[0]->len == 5066 &&
	      memcmp(out[0]->data, flat, 5066) == 0, "n %d", n);
	if (n == 1)
		io_pkt_free(out[0]);
	io_pkt_free(h);

	/* TSO: 20000 bytes, PSH|FIN|ACK|CWR, MTU 1500 -> MSS 1448 -> 14 segments */
	h = tcp_header_seg(&p, total_payload, 0x80 | 0x10 | 0x08 | 0x01, 1);
	append_payload(&p, h, total_payload);
	h->flags |= IO_PKT_F_TX_TCP_TSO | IO_PKT_F_TX_TCP_CSUM | IO_PKT_F_TX_IP4_CSUM;
	n = io_pkt_finish_tx_offloads(&p, h, 1500, out, 64, &st);
	CHECK("TSO: 20000 bytes at MSS 1448 -> 14 segments", n == 14, "n %d", n);
	ok = n == 14;
	for (k = 0; ok && k < 14; k++) {
		uint8_t *f = out[k]->data, *ip = f + 14, *tcp = ip + 20;
		uint32_t chunk = k < 13 ? mss : total_payload - 13 * mss;
		uint8_t want_flags = (uint8_t) (0x10 | (k == 0 ? 0x80 : 0) | (k == 13 ? 0x09 : 0));
		if (out[k]->len != 66 + chunk || io_rd16(ip + 2) != 52 + chunk || io_rd16(ip + 4) != 0x1234 + k ||
		    io_rd32(tcp + 4) != 0xfffff000u + k * mss || tcp[13] != want_flags || !ref_frame_ok(f, out[k]->len) ||
		    out[k]->len > 1514) {
			printf("segment %u wrong: len %u ip len %u id %x seq %x flags %x\n", k, out[k]->len,
			       io_rd16(ip + 2), io_rd16(ip + 4), io_rd32(tcp + 4), tcp[13]);
			ok = 0;
		}
		for (i = 0; ok && i < chunk; i++)
			if (f[66 + i] != pattern(k * mss + i)) {
				printf("segment %u payload byte %u wrong\n", k, i);
				ok = 0;
			}
		if (ok && memcmp(f + 14 + 20 + 20, h->data + 14 + 20 + 20, 12)) /* options copied */
			ok = 0;
	}
	CHECK("TSO segments: lengths, ids, seqs, flags, checksums, payload exact", ok, "see above");
	CHECK("TSO pseudo-header (without length) accepted", st.pseudo_mismatch == 0 && st.tso_frames == 1,
	      "mismatch %llu", (unsigned long long) st.pseudo_mismatch);
	for (k = 0; k < (uint32_t) (n > 0 ? n : 0); k++) {
		capture(out[k]);
		io_pkt_free(out[k]);
	}
	/* explicit MSS (tso_mss) overrides the MTU-derived one */
	h->tso_mss = 1000;
	n = io_pkt_finish_tx_offloads(&p, h, 1500, out, 64, &st);
	CHECK("TSO with tso_mss 1000 -> 20 segments", n == 20 && out[19]->len == 66 + 1000, "n %d", n);
	for (k = 0; k < (uint32_t) (n > 0 ? n : 0); k++)
		io_pkt_free(out[k]);
	h->tso_mss = 0;
	n = io_pkt_finish_tx_offloads(&p, h, 1500, out, 5, &st);
	CHECK("TSO needing more than max_out frames fails cleanly", n == -1 && io_pkt_pool_bufs_in_use(&p) ==
	      io_pkt_nsegs(h), "n %d in use %u", n, io_pkt_pool_bufs_in_use(&p));

	/* LRO-style delivery: whole chain, checksums over a chain */
	lin = io_pkt_copy_chain(&p, h);
	io_fill_ip4_csum(lin->data, &(struct io_ip4_layout) { .ip_off = 14, .ip_hlen = 20 });
	{
		struct io_ip4_layout l;
		uint32_t sum;
		io_parse_ip4(lin, &l);
		io_wr16(lin->data + 14 + 20 + 16, 0);
		sum = io_csum_chain(lin, 34, l.ip_tlen - 20, io_csum_pseudo(lin->data + 14, 6, l.ip_tlen - 20));
		io_wr16(lin->data + 14 + 20 + 16, (uint16_t) ~io_csum_fold(sum));
	}
	io_pkt_copy_out(lin, 0, flat, io_pkt_total_len(lin));
	io_pkt_rx_verify_checksums(lin);
	CHECK("rx verification over a chain (LRO frame)", ref_frame_ok(flat, io_pkt_total_len(lin)) &&
	      (lin->flags & IO_PKT_F_RX_TCP_GOOD), "flags %x", lin->flags);
	capture(lin);
	io_pkt_free(lin);
	io_pkt_free(h);

	/* UDP checksum offload, including the 0 -> 0xffff rule (not forced here,
	 * but a real value checked against the reference) */
	h = io_pkt_alloc(&p);
	{
		uint8_t *f = h->data, *ip = f + 14, *udp = ip + 20;
		memset(f, 0, 14 + 20 + 8 + 33);
		memcpy(f, mac_b, 6);
		memcpy(f + 6, mac_a, 6);
		f[12] = 0x08;
		ip[0] = 0x45; io_wr16(ip + 2, 20 + 8 + 33); ip[8] = 64; ip[9] = 17;
		ip[12] = 10; ip[15] = 1; ip[16] = 10; ip[19] = 2;
		io_wr16(udp, 7); io_wr16(udp + 2, 7); io_wr16(udp + 4, 8 + 33);
		for (i = 0; i < 33; i++)
			udp[8 + i] = (uint8_t) ('a' + i % 26);
		io_wr16(udp + 6, io_csum_fold(io_csum_pseudo(ip, 17, 41)));
		h->len = 14 + 20 + 8 + 33;
	}
	h->flags |= IO_PKT_F_TX_IP4_CSUM | IO_PKT_F_TX_UDP_CSUM;
	n = io_pkt_finish_tx_offloads(&p, h, 1500, out, 64, &st);
	CHECK("UDP checksum offload matches the reference", n == 1 && ref_frame_ok(out[0]->data, out[0]->len), "n %d", n);
	if (n == 1) {
		io_pkt_rx_verify_checksums(out[0]);
		CHECK("rx verification: UDP good", (out[0]->flags & IO_PKT_F_RX_UDP_GOOD) != 0, "flags %x", out[0]->flags);
		capture(out[0]);
		io_pkt_free(out[0]);
	}
	/* malformed: IPv4 total length beyond the frame */
	io_wr16(h->data + 16, 1400);
	n = io_pkt_finish_tx_offloads(&p, h, 1500, out, 64, &st);
	CHECK("malformed frame refused, counted", n == -1 && st.errors >= 1, "n %d", n);
	io_pkt_free(h);

	/* garbage never crashes nor leaks: random bytes with plausible headers,
	 * random marks, random chain splits (run under ASan/UBSan by run.sh) */
	{
		uint64_t x = 12345;
		uint32_t k2, produced = 0, refused = 0;
		for (k2 = 0; k2 < 20000; k2++) {
			uint32_t len = 0, nseg = 0, j;
			struct io_pkt *head = NULL;
			x ^= x << 13; x ^= x >> 7; x ^= x << 17;
			nseg = 1 + (uint32_t) (x % 4);
			for (j = 0; j < nseg; j++) {
				struct io_pkt *sg = io_pkt_alloc(&p);
				uint32_t n, b;
				x ^= x << 13; x ^= x >> 7; x ^= x << 17;
				n = (uint32_t) (x % 1600);
				for (b = 0; b < n; b++) {
					x ^= x << 13; x ^= x >> 7; x ^= x << 17;
					sg->data[b] = (uint8_t) x;
				}
				if (!j && n >= 40) { /* often make it look like IPv4 TCP/UDP */
					sg->data[12] = 0x08; sg->data[13] = 0;
					if (x & 1) sg->data[14] = (uint8_t) (0x40 | (x >> 8 & 15));
					if (x & 2) sg->data[23] = (x & 4) ? 6 : 17;
					if (x & 8) sg->data[20] = sg->data[21] = 0;
				}
				sg->len = (uint16_t) n;
				len += n;
				if (head) io_pkt_chain_append(head, sg); else head = sg;
			}
			head->flags = (uint32_t) (x >> 20) & IO_PKT_F_TX_MASK;
			head->tso_mss = (x & 0x100000000ull) ? (uint16_t) (x >> 40) : 0;
			n = io_pkt_finish_tx_offloads(&p, head, (uint16_t) (68 + (x >> 33) % 9000), out, 64, &st);
			if (n > 0) {
				while (n--) {
					io_pkt_rx_verify_checksums(out[n]);
					io_pkt_free(out[n]);
				}
				produced++;
			} else {
				refused++;
			}
			io_pkt_rx_verify_checksums(head);
			lin = io_pkt_finish_unsegmented(&p, head);
			io_pkt_free(lin);
			io_pkt_free(head);
			(void) len;
		}
		CHECK("20000 random frames: no crash, no leak", io_pkt_pool_descs_in_use(&p) == 0 &&
		      io_pkt_pool_bufs_in_use(&p) == 0 && produced > 0 && refused > 0, "produced %u refused %u in use %u",
		      produced, refused, io_pkt_pool_descs_in_use(&p));
	}

	CHECK("pcap (us) closed without error", io_pcap_close(&pc_us) == 0 && pc_us.frames == 17, "frames %llu",
	      (unsigned long long) pc_us.frames);
	CHECK("pcap (ns) closed without error", io_pcap_close(&pc_ns) == 0, "error");
	CHECK("no packet leaked", io_pkt_pool_descs_in_use(&p) == 0 && io_pkt_pool_bufs_in_use(&p) == 0, "%u %u",
	      io_pkt_pool_descs_in_use(&p), io_pkt_pool_bufs_in_use(&p));
	io_pkt_pool_destroy(&p);
	return check_failures ? 1 : 0;
}
