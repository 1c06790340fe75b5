/*
 * io/dpdk/port.h — one DPDK port: what it offers, what we turn on, its
 * queues, its RSS, and the report printed at start.
 *
 * Offloads: each one is used when the port reports it (rte_eth_dev_info)
 * and -x did not turn it off:
 *   rx  IPv4/TCP/UDP checksum, TCP LRO (with scatter, so that an aggregate
 *       larger than one buffer arrives as a chain);
 *   tx  IPv4/TCP/UDP checksum, multi-segment (scatter-gather: the stack
 *       then sends payload by reference, zero copy), TCP TSO (only with
 *       multi-segment, IPv4 and TCP checksum, which TSO needs).
 * The stack sees the features that EVERY port uses (its feature callbacks
 * have no port argument; dpk_features_combine()).
 *
 * RSS: the queue that receives a flow must be the one whose thread owns the
 * connection. Whatever the device does, the receive path checks every frame
 * against a Toeplitz model of the port (io/common/rss.h) and hands frames
 * that arrived on the "wrong" queue to the right thread (steer.h); the
 * connection-affinity helper answers from the same model, so the two always
 * agree. When the port has RSS we program a known key and RETA and read
 * both back into the model, so that the device itself spreads the flows
 * where the model says and software steering has nothing to do; when it
 * has no RSS (net_af_packet, net_memif, ...), the model is the default
 * key with a round-robin RETA and software steering does all the work.
 *
 * Included by main.c after its type definitions.
 */
#ifndef IO_DPDK_PORT_H
#define IO_DPDK_PORT_H

#include <rte_ethdev.h>

#define DPK_RSS_HF_WANTED (RTE_ETH_RSS_IPV4 | RTE_ETH_RSS_FRAG_IPV4 | RTE_ETH_RSS_NONFRAG_IPV4_TCP | \
			   RTE_ETH_RSS_NONFRAG_IPV4_UDP)
#define DPK_RSS_HF_MODEL (RTE_ETH_RSS_NONFRAG_IPV4_TCP | RTE_ETH_RSS_NONFRAG_IPV4_UDP)
#define DPK_KEY_MAX 128
#define DPK_RETA_MAX 2048

/* reads what the device is and offers; 0, or -1 with a message in err */
static int dpk_port_probe(struct dpk_port *p, uint16_t id, char *err, size_t err_len)
{
	uint16_t avail = rte_eth_dev_count_avail();
	int rc;
	if (!rte_eth_dev_is_valid_port(id)) {
		if (avail == 0)
			snprintf(err, err_len, "port %u does not exist: DPDK found no port at all; add one to the EAL "
				 "options, e.g. --vdev=net_tap0,iface=dtap0 or --vdev=net_af_packet0,iface=eth1 "
				 "(or a PCI device bound to vfio-pci)", id);
		else
			snprintf(err, err_len, "port %u does not exist: DPDK has %u port%s (0%s%u)", id, avail,
				 avail == 1 ? "" : "s", avail == 1 ? "" : "-", avail == 1 ? 0 : avail - 1);
		return -1;
	}
	p->id = id;
	rc = rte_eth_dev_info_get(id, &p->info);
	if (rc) {
		snprintf(err, err_len, "port %u: cannot read device info: %s", id, rte_strerror(-rc));
		return -1;
	}
	rc = rte_eth_macaddr_get(id, &p->mac);
	if (rc) {
		snprintf(err, err_len, "port %u: cannot read the MAC address: %s", id, rte_strerror(-rc));
		return -1;
	}
	if (rte_eth_dev_get_name_by_port(id, p->name) != 0)
		snprintf(p->name, sizeof(p->name), "port%u", id);
	p->driver = p->info.driver_name ? p->info.driver_name : "?";
	if (rte_eth_dev_get_mtu(id, &p->mtu) != 0 || p->mtu < 68)
		p->mtu = 1500;
	return 0;
}

/* the offloads we turn on: offered, not turned off by -x, and (for TSO) with
 * the offloads it depends on */
static void dpk_port_choose_offloads(struct dpk_port *p, uint32_t disable, uint32_t buf_room)
{
	uint64_t rx = p->info.rx_offload_capa, tx = p->info.tx_offload_capa;
	const uint64_t tso_needs = RTE_ETH_TX_OFFLOAD_IPV4_CKSUM | RTE_ETH_TX_OFFLOAD_TCP_CKSUM |
				   RTE_ETH_TX_OFFLOAD_MULTI_SEGS;
	p->rx_offloads = p->tx_offloads = 0;
	if (!(disable & DPK_OFF_RX_CSUM))
		p->rx_offloads |= rx & (RTE_ETH_RX_OFFLOAD_IPV4_CKSUM | RTE_ETH_RX_OFFLOAD_TCP_CKSUM |
					RTE_ETH_RX_OFFLOAD_UDP_CKSUM);
	if (!(disable & DPK_OFF_LRO) && (rx & RTE_ETH_RX_OFFLOAD_TCP_LRO) && (rx & RTE_ETH_RX_OFFLOAD_SCATTER))
		p->rx_offloads |= RTE_ETH_RX_OFFLOAD_TCP_LRO | RTE_ETH_RX_OFFLOAD_SCATTER;
	if ((uint32_t) p->mtu + RTE_ETHER_HDR_LEN + RTE_ETHER_CRC_LEN > buf_room && (rx & RTE_ETH_RX_OFFLOAD_SCATTER))
		p->rx_offloads |= RTE_ETH_RX_OFFLOAD_SCATTER;
	if (!(disable & DPK_OFF_TX_CSUM))
		p->tx_offloads |= tx & (RTE_ETH_TX_OFFLOAD_IPV4_CKSUM | RTE_ETH_TX_OFFLOAD_TCP_CKSUM |
					RTE_ETH_TX_OFFLOAD_UDP_CKSUM);
	if (!(disable & DPK_OFF_SG))
		p->tx_offloads |= tx & RTE_ETH_TX_OFFLOAD_MULTI_SEGS;
	if (!(disable & DPK_OFF_TSO) && (tx & RTE_ETH_TX_OFFLOAD_TCP_TSO) && (p->tx_offloads & tso_needs) == tso_needs)
		p->tx_offloads |= RTE_ETH_TX_OFFLOAD_TCP_TSO;
}

/* the RETA we program: entry i -> queue (i mod 128) mod nq, so that a RETA
 * of any power-of-two size >= 128 behaves like our 128-entry model, and a
 * smaller one like the model filled with its period */
static uint16_t dpk_reta_entry(uint32_t i, uint16_t nq, uint16_t reta_size)
{
	return (uint16_t) ((reta_size >= IO_RSS_RETA_SIZE ? i % IO_RSS_RETA_SIZE : i) % nq);
}

/*
 * After start, with RSS on: program the RETA, read RETA and key back and
 * build the model from what the device says. 0 when the model is the
 * device's; -1 (with the reason in why) when it cannot be known, in which
 * case the model stays the software default.
 */
static int dpk_port_rss_readback(struct dpk_port *p, uint16_t nq, char *why, size_t why_len)
{
	uint16_t rs = p->info.reta_size;
	struct rte_eth_rss_reta_entry64 reta[DPK_RETA_MAX / RTE_ETH_RETA_GROUP_SIZE];
	uint16_t model[IO_RSS_RETA_SIZE];
	uint8_t key[DPK_KEY_MAX] = { 0 };
	struct rte_eth_rss_conf rc;
	uint32_t i;
	int e;

	if (rs == 0 || rs > DPK_RETA_MAX || (rs & (rs - 1)) != 0) {
		snprintf(why, why_len, "RETA size %u cannot be modelled", rs);
		return -1;
	}
	memset(reta, 0, sizeof(reta));
	for (i = 0; i < rs; i++) {
		reta[i / RTE_ETH_RETA_GROUP_SIZE].mask |= 1ull << (i % RTE_ETH_RETA_GROUP_SIZE);
		reta[i / RTE_ETH_RETA_GROUP_SIZE].reta[i % RTE_ETH_RETA_GROUP_SIZE] = dpk_reta_entry(i, nq, rs);
	}
	rte_eth_dev_rss_reta_update(p->id, reta, rs); /* if refused, we read what is there */
	for (i = 0; i < (uint32_t) (rs + RTE_ETH_RETA_GROUP_SIZE - 1) / RTE_ETH_RETA_GROUP_SIZE; i++)
		reta[i].mask = ~0ull;
	e = rte_eth_dev_rss_reta_query(p->id, reta, rs);
	if (e) {
		snprintf(why, why_len, "RETA not readable (%s)", rte_strerror(-e));
		return -1;
	}
	for (i = 0; i < IO_RSS_RETA_SIZE; i++) {
		uint32_t d = i % rs; /* the device indexes with hash mod rs */
		model[i] = reta[d / RTE_ETH_RETA_GROUP_SIZE].reta[d % RTE_ETH_RETA_GROUP_SIZE];
		if (model[i] >= nq) {
			snprintf(why, why_len, "RETA names queue %u", model[i]);
			return -1;
		}
	}
	if (rs > IO_RSS_RETA_SIZE) /* entries beyond 128 must repeat the first 128 */
		for (i = IO_RSS_RETA_SIZE; i < rs; i++)
			if (reta[i / RTE_ETH_RETA_GROUP_SIZE].reta[i % RTE_ETH_RETA_GROUP_SIZE] !=
			    model[i % IO_RSS_RETA_SIZE]) {
				snprintf(why, why_len, "RETA of %u entries does not repeat every 128", rs);
				return -1;
			}
	memset(&rc, 0, sizeof(rc));
	rc.rss_key = key;
	rc.rss_key_len = p->info.hash_key_size ? p->info.hash_key_size : IO_RSS_KEY_LEN;
	if (rc.rss_key_len > DPK_KEY_MAX) {
		snprintf(why, why_len, "RSS key of %u bytes", rc.rss_key_len);
		return -1;
	}
	e = rte_eth_dev_rss_hash_conf_get(p->id, &rc);
	if (e) {
		snprintf(why, why_len, "RSS key not readable (%s)", rte_strerror(-e));
		return -1;
	}
	if ((rc.rss_hf & DPK_RSS_HF_MODEL) != DPK_RSS_HF_MODEL) {
		snprintf(why, why_len, "device does not hash TCP and UDP ports (rss_hf %#llx)",
			 (unsigned long long) rc.rss_hf);
		return -1;
	}
	/* the 12-byte IPv4 4-tuple uses the first 16 key bytes; a longer or
	 * shorter device key changes nothing there */
	io_rss_init(&p->rss, key, nq);
	io_rss_set_reta(&p->rss, model);
	return 0;
}

static int dpk_port_setup_queues(struct dpk_port *p, struct rte_eth_conf *ec, uint16_t nq, char *err,
				 size_t err_len)
{
	uint16_t q;
	int e = rte_eth_dev_configure(p->id, nq, nq, ec);
	if (e && ec->intr_conf.rxq) { /* no receive interrupts here: go on without them */
		ec->intr_conf.rxq = 0;
		p->rx_intr_why = "configuring receive interrupts failed";
		e = rte_eth_dev_configure(p->id, nq, nq, ec);
	}
	if (e) {
		snprintf(err, err_len, "port %u (%s): rte_eth_dev_configure with %u queue%s failed: %s", p->id,
			 p->driver, nq, nq == 1 ? "" : "s", rte_strerror(-e));
		return -1;
	}
	p->rxd = dpk.conf.rxd;
	p->txd = dpk.conf.txd;
	e = rte_eth_dev_adjust_nb_rx_tx_desc(p->id, &p->rxd, &p->txd);
	if (e) {
		snprintf(err, err_len, "port %u: descriptor counts %u/%u refused: %s", p->id, p->rxd, p->txd,
			 rte_strerror(-e));
		return -1;
	}
	for (q = 0; q < nq; q++) {
		const struct dpk_thread *t = &dpk.threads[q];
		struct rte_eth_rxconf rxc = p->info.default_rxconf;
		struct rte_eth_txconf txc = p->info.default_txconf;
		rxc.offloads = p->rx_offloads;
		txc.offloads = p->tx_offloads;
		e = rte_eth_rx_queue_setup(p->id, q, p->rxd, t->socket, &rxc, t->pool);
		if (e) {
			snprintf(err, err_len, "port %u: receive queue %u setup failed: %s%s", p->id, q, rte_strerror(-e),
				 e == -ENOMEM ? " (if the driver says the frames do not fit, give bigger mbufs with -s; "
				 "or EAL more memory with -m)" : "");
			return -1;
		}
		e = rte_eth_tx_queue_setup(p->id, q, p->txd, t->socket, &txc);
		if (e) {
			snprintf(err, err_len, "port %u: transmit queue %u setup failed: %s", p->id, q, rte_strerror(-e));
			return -1;
		}
	}
	return 0;
}

/* configures and starts the port with one queue pair per thread */
static int dpk_port_start(struct dpk_port *p, uint16_t nq, char *err, size_t err_len)
{
	struct rte_eth_conf ec;
	uint16_t q;
	int e;

	if (p->info.max_rx_queues < nq || p->info.max_tx_queues < nq) {
		snprintf(err, err_len, "port %u (%s) has %u receive and %u transmit queues, but there are %u lcores "
			 "(-l): one queue pair per lcore; use fewer lcores%s", p->id, p->driver, p->info.max_rx_queues,
			 p->info.max_tx_queues, nq,
			 strstr(p->driver, "af_packet") ? " or more queues (--vdev=net_af_packet0,iface=...,qpairs=N)" :
			 strstr(p->driver, "memif") ? " or more rings on the memif" : "");
		return -1;
	}
	dpk_port_choose_offloads(p, dpk.conf.disable, dpk.buf_room);
	memset(&ec, 0, sizeof(ec));
	ec.rxmode.offloads = p->rx_offloads;
	ec.txmode.offloads = p->tx_offloads;
	if (p->rx_offloads & RTE_ETH_RX_OFFLOAD_TCP_LRO)
		ec.rxmode.max_lro_pkt_size = p->info.max_lro_pkt_size < 65535 ? p->info.max_lro_pkt_size : 65535;
	p->rss_hw = nq > 1 && !(dpk.conf.disable & DPK_OFF_RSS) && (p->info.flow_type_rss_offloads & DPK_RSS_HF_MODEL);
	if (p->rss_hw) {
		static uint8_t key[DPK_KEY_MAX];
		uint8_t klen = p->info.hash_key_size;
		memset(key, 0, sizeof(key));
		memcpy(key, io_rss_key_microsoft, IO_RSS_KEY_LEN);
		ec.rxmode.mq_mode = RTE_ETH_MQ_RX_RSS;
		ec.rx_adv_conf.rss_conf.rss_hf = p->info.flow_type_rss_offloads & DPK_RSS_HF_WANTED;
		if (klen >= IO_RSS_KEY_LEN && klen <= DPK_KEY_MAX) { /* else the device keeps its own key */
			ec.rx_adv_conf.rss_conf.rss_key = key;
			ec.rx_adv_conf.rss_conf.rss_key_len = klen;
		}
	}
	io_rss_init(&p->rss, NULL, nq); /* the software model; RSS read-back replaces it */
	p->rx_intr_why = NULL;
	ec.intr_conf.rxq = dpk.conf.poll_ms ? 1 : 0;
	if (dpk_port_setup_queues(p, &ec, nq, err, err_len))
		return -1;
	e = rte_eth_dev_start(p->id);
	if (e) {
		snprintf(err, err_len, "port %u (%s): start failed: %s", p->id, p->driver, rte_strerror(-e));
		return -1;
	}
	p->started = 1;
	p->rss_why[0] = '\0';
	if (p->rss_hw && dpk_port_rss_readback(p, nq, p->rss_why, sizeof(p->rss_why)) == 0)
		p->rss_verified = 1;
	else
		io_rss_init(&p->rss, NULL, nq);
	p->rx_intr = ec.intr_conf.rxq;
	for (q = 0; p->rx_intr && q < nq; q++)
		if (rte_eth_dev_rx_intr_ctl_q_get_fd(p->id, q) < 0) {
			p->rx_intr = 0;
			p->rx_intr_why = "the driver gives no interrupt file descriptor";
		}
	/* net_tap segments TSO frames in software (librte_gso) and refuses a
	 * frame whose tso_segsz + l2 + l3 + l4 exceeds the MTU: it counts the
	 * Ethernet header in the IP MTU. Full-sized segments would be refused
	 * (and block the queue), so its segments carry 14 bytes less than the
	 * MSS: still valid TCP, slightly more frames. */
	p->tso_quirk_l2_in_mtu = !strcmp(p->driver, "net_tap") && (p->tx_offloads & RTE_ETH_TX_OFFLOAD_TCP_TSO);
	return 0;
}

/* the features the stack may use: those that every port has turned on */
static void dpk_features_combine(void)
{
	uint64_t rx = ~0ull, tx = ~0ull;
	uint16_t i;
	for (i = 0; i < dpk.nports; i++) {
		rx &= dpk.ports[i].rx_offloads;
		tx &= dpk.ports[i].tx_offloads;
	}
	dpk.feat.rx_ip4 = (rx & RTE_ETH_RX_OFFLOAD_IPV4_CKSUM) != 0;
	dpk.feat.rx_tcp = (rx & RTE_ETH_RX_OFFLOAD_TCP_CKSUM) != 0;
	dpk.feat.rx_udp = (rx & RTE_ETH_RX_OFFLOAD_UDP_CKSUM) != 0;
	dpk.feat.lro = (rx & RTE_ETH_RX_OFFLOAD_TCP_LRO) != 0;
	dpk.feat.tx_ip4 = (tx & RTE_ETH_TX_OFFLOAD_IPV4_CKSUM) != 0;
	dpk.feat.tx_tcp = (tx & RTE_ETH_TX_OFFLOAD_TCP_CKSUM) != 0;
	dpk.feat.tx_udp = (tx & RTE_ETH_TX_OFFLOAD_UDP_CKSUM) != 0;
	dpk.feat.tx_sg = (tx & RTE_ETH_TX_OFFLOAD_MULTI_SEGS) != 0;
	dpk.feat.tx_tso = dpk.feat.tx_sg && dpk.feat.tx_tcp && dpk.feat.tx_ip4 && (tx & RTE_ETH_TX_OFFLOAD_TCP_TSO);
}

static const char *dpk_offer_use(uint64_t capa, uint64_t used, uint64_t bit)
{
	if (!(capa & bit))
		return "not offered";
	return (used & bit) ? "offered, used" : "offered, not used";
}

static void dpk_port_report(const struct dpk_port *p, uint16_t nq)
{
	const struct rte_eth_dev_info *i = &p->info;
	const uint8_t *a = p->mac.addr_bytes;
	struct rte_eth_link link;
	char ip[INET_ADDRSTRLEN], lk[96];
	struct in_addr ia;
	ia.s_addr = p->ip4_be;
	inet_ntop(AF_INET, &ia, ip, sizeof(ip));
	memset(&link, 0, sizeof(link));
	if (rte_eth_link_get_nowait(p->id, &link) != 0)
		snprintf(lk, sizeof(lk), "link status unknown");
	else if (!link.link_status)
		snprintf(lk, sizeof(lk), "link down (a memif waits for its peer)");
	else
		snprintf(lk, sizeof(lk), "link up %u Mbps %s-duplex", link.link_speed,
			 link.link_duplex ? "full" : "half");
	printf("dpdk: port %u %s (driver %s) %02x:%02x:%02x:%02x:%02x:%02x %s mtu %u, %u queue pair%s "
	       "(device max %u/%u), %u/%u descriptors, largest rx frame %u, %s\n",
	       p->id, p->name, p->driver, a[0], a[1], a[2], a[3], a[4], a[5], ip, p->mtu, nq, nq == 1 ? "" : "s",
	       i->max_rx_queues, i->max_tx_queues, p->rxd, p->txd, i->max_rx_pktlen, lk);
	printf("dpdk: port %u offloads: rx ipv4 checksum %s; rx tcp checksum %s; rx udp checksum %s; rx lro %s\n",
	       p->id, dpk_offer_use(i->rx_offload_capa, p->rx_offloads, RTE_ETH_RX_OFFLOAD_IPV4_CKSUM),
	       dpk_offer_use(i->rx_offload_capa, p->rx_offloads, RTE_ETH_RX_OFFLOAD_TCP_CKSUM),
	       dpk_offer_use(i->rx_offload_capa, p->rx_offloads, RTE_ETH_RX_OFFLOAD_UDP_CKSUM),
	       dpk_offer_use(i->rx_offload_capa, p->rx_offloads, RTE_ETH_RX_OFFLOAD_TCP_LRO));
	printf("dpdk: port %u offloads: tx ipv4 checksum %s; tx tcp checksum %s; tx udp checksum %s; "
	       "tx tcp tso %s; tx multi-segment %s\n",
	       p->id, dpk_offer_use(i->tx_offload_capa, p->tx_offloads, RTE_ETH_TX_OFFLOAD_IPV4_CKSUM),
	       dpk_offer_use(i->tx_offload_capa, p->tx_offloads, RTE_ETH_TX_OFFLOAD_TCP_CKSUM),
	       dpk_offer_use(i->tx_offload_capa, p->tx_offloads, RTE_ETH_TX_OFFLOAD_UDP_CKSUM),
	       dpk_offer_use(i->tx_offload_capa, p->tx_offloads, RTE_ETH_TX_OFFLOAD_TCP_TSO),
	       dpk_offer_use(i->tx_offload_capa, p->tx_offloads, RTE_ETH_TX_OFFLOAD_MULTI_SEGS));
	if (p->tso_quirk_l2_in_mtu)
		printf("dpdk: port %u tso: the net_tap driver counts the Ethernet header in its MTU check: "
		       "segments of MSS - %u bytes\n", p->id, RTE_ETHER_HDR_LEN);
	if (nq < 2)
		printf("dpdk: port %u rss: not needed (one queue)\n", p->id);
	else if (!(i->flow_type_rss_offloads & DPK_RSS_HF_MODEL))
		printf("dpdk: port %u rss: not offered: software steering (Toeplitz, default key) moves every "
		       "frame to the thread of its flow\n", p->id);
	else if (!p->rss_hw)
		printf("dpdk: port %u rss: offered, turned off (-x rss): software steering\n", p->id);
	else if (p->rss_verified)
		printf("dpdk: port %u rss: offered, used: key and %u-entry RETA read back from the device; "
		       "software steering only corrects frames the device put elsewhere\n", p->id, i->reta_size);
	else
		printf("dpdk: port %u rss: offered, used, but %s: software steering (Toeplitz, default key) "
		       "decides the thread of every frame\n", p->id, p->rss_why);
	if (dpk.conf.poll_ms && p->rx_intr)
		printf("dpdk: port %u receive interrupts: used\n", p->id);
	else if (dpk.conf.poll_ms)
		printf("dpdk: port %u receive interrupts: not available (%s): idle waits are capped at %u us so "
		       "that its frames are still picked up\n", p->id, p->rx_intr_why ? p->rx_intr_why : "unknown",
		       DPK_NAP_US);
}

#endif /* IO_DPDK_PORT_H */
