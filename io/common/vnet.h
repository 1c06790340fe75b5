/*
 * io/common/vnet.h — the virtio-net header that precedes every frame on a tap
 * opened with IFF_VNET_HDR and on a packet socket with PACKET_VNET_HDR
 * (the tap and af_packet backends): how the kernel and we tell each other about
 * checksum offload and segmentation (TSO/GSO) without touching the frame.
 *
 * Transmit (us -> kernel): a frame the stack marked for TCP/UDP checksum
 * offload gets VIRTIO_NET_HDR_F_NEEDS_CSUM with csum_start/csum_offset
 * naming the L4 checksum field; a frame marked for TSO also gets
 * gso_type TCPV4 and gso_size (the MSS); the kernel segments it and fills
 * the checksums (or, delivering locally, accepts it whole). The checksum
 * field must hold the pseudo-header sum, folded and not inverted, over the
 * L4 length of the frame as handed over (Linux's CHECKSUM_PARTIAL rule, for
 * GSO too): we write that value ourselves, so the result does not depend on
 * which convention the stack followed, and count the frames where the
 * stack's value differed.
 *
 * Receive (kernel -> us): VIRTIO_NET_HDR_F_DATA_VALID means the kernel
 * already validated the checksum; VIRTIO_NET_HDR_F_NEEDS_CSUM means the
 * frame was built by the local kernel and its checksum was never computed
 * (the bytes are intact: a NIC would compute it on the way out). Both count
 * as "checksum good" for the stack. gso_type != NONE marks a frame larger
 * than the MTU (the kernel did not segment it for us): it goes to the stack
 * whole, as LRO would.
 */
#ifndef IO_COMMON_VNET_H
#define IO_COMMON_VNET_H

#include <stdint.h>
#include <string.h>
#include <linux/virtio_net.h>

#include "pkt.h"
#include "pkt_offload.h"

struct io_vnet_stats {
	uint64_t tx_csum, tx_tso, tx_pseudo_fixed, tx_bad;
	uint64_t rx_data_valid, rx_needs_csum, rx_gso, rx_sw_verified;
};

/*
 * Fills h for a frame the stack pushed (a chain; only the headers are read).
 * mtu derives the MSS of a TSO frame: mtu - IP header - TCP header, as a NIC
 * configured with that MTU would. Returns 0, or -1 when the marks cannot be
 * honoured (malformed headers): the caller drops the frame.
 */
static inline int io_vnet_tx_fill(struct virtio_net_hdr *h, struct io_pkt *frame, uint16_t mtu,
				   struct io_vnet_stats *st)
{
	struct io_ip4_layout l;
	uint32_t marks = frame->flags & (IO_PKT_F_TX_TCP_CSUM | IO_PKT_F_TX_UDP_CSUM | IO_PKT_F_TX_TCP_TSO);
	uint8_t *field;
	uint16_t want;
	uint32_t l4len;
	memset(h, 0, sizeof(*h));
	h->gso_type = VIRTIO_NET_HDR_GSO_NONE;
	if (!marks)
		return 0;
	if (io_parse_ip4(frame, &l) != 1 || !l.l4_hlen || frame->len < l.l4_off + l.l4_hlen) {
		st->tx_bad++;
		return -1;
	}
	if ((l.proto == IO_IPPROTO_TCP && !(marks & (IO_PKT_F_TX_TCP_CSUM | IO_PKT_F_TX_TCP_TSO))) ||
	    (l.proto == IO_IPPROTO_UDP && !(marks & IO_PKT_F_TX_UDP_CSUM)) ||
	    (l.proto != IO_IPPROTO_TCP && l.proto != IO_IPPROTO_UDP))
		return 0; /* a mark for another protocol: nothing to offload */
	l4len = l.ip_tlen - l.ip_hlen;
	field = frame->data + l.l4_off + (l.proto == IO_IPPROTO_TCP ? 16 : 6);
	want = io_csum_fold(io_csum_pseudo(frame->data + l.ip_off, l.proto, l4len));
	if (io_rd16(field) != want) {
		io_wr16(field, want);
		st->tx_pseudo_fixed++;
	}
	h->flags = VIRTIO_NET_HDR_F_NEEDS_CSUM;
	h->csum_start = (uint16_t) l.l4_off;
	h->csum_offset = (uint16_t) (l.proto == IO_IPPROTO_TCP ? 16 : 6);
	st->tx_csum++;
	if (l.proto == IO_IPPROTO_TCP && (marks & IO_PKT_F_TX_TCP_TSO)) {
		uint32_t payload = l4len - l.l4_hlen;
		uint32_t mss = frame->tso_mss ? frame->tso_mss
					      : (mtu > l.ip_hlen + l.l4_hlen ? mtu - l.ip_hlen - l.l4_hlen : 0);
		if (!mss) {
			st->tx_bad++;
			return -1;
		}
		if (payload > mss) {
			h->gso_type = VIRTIO_NET_HDR_GSO_TCPV4;
			h->gso_size = (uint16_t) mss;
			h->hdr_len = (uint16_t) (l.l4_off + l.l4_hlen);
			st->tx_tso++;
		}
	}
	return 0;
}

/*
 * Records the receive checksum result of a frame read with header h. The
 * kernel's word is taken when it gives one; otherwise the checksums are
 * verified here, because the stack was told the NIC checks them.
 */
static inline void io_vnet_rx_note(const struct virtio_net_hdr *h, struct io_pkt *pkt, struct io_vnet_stats *st)
{
	pkt->flags &= ~IO_PKT_F_RX_MASK;
	if (h->gso_type != VIRTIO_NET_HDR_GSO_NONE)
		st->rx_gso++;
	if (h->flags & (VIRTIO_NET_HDR_F_DATA_VALID | VIRTIO_NET_HDR_F_NEEDS_CSUM)) {
		if (h->flags & VIRTIO_NET_HDR_F_DATA_VALID)
			st->rx_data_valid++;
		else
			st->rx_needs_csum++;
		/* the IPv4 header checksum is the stack's own business (the
		 * feature is off), so only the L4 result is recorded */
		pkt->flags |= IO_PKT_F_RX_TCP_GOOD | IO_PKT_F_RX_UDP_GOOD;
		return;
	}
	io_pkt_rx_verify_checksums(pkt);
	st->rx_sw_verified++;
}

#endif /* IO_COMMON_VNET_H */
