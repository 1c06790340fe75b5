/*
 * io/dpdk/steer.h — software steering between threads.
 *
 * Every received frame is checked against the Toeplitz model of its port
 * (port.h): TCP/UDP over unfragmented IPv4 belongs to the thread
 * io_rss_queue_for_frame() names (the same answer the connection-affinity
 * helper gives), ICMP, fragments and other IPv4 to thread 0, ARP replies to
 * every thread (any thread's application may be waiting for one), other ARP
 * to the thread that got it. A frame on another thread's queue moves there
 * through that thread's inbox, an rte_ring (multi-producer, single
 * consumer) of mbuf pointers: no copy, the mbuf pools are shared and
 * thread-safe. ARP replies go as clones (each thread's stack may trim its
 * own descriptor). A full inbox drops the frame and counts it.
 *
 * A thread that sleeps in interrupt mode (-e) is woken through its eventfd
 * when something lands in its inbox.
 *
 * Included by main.c.
 */
#ifndef IO_DPDK_STEER_H
#define IO_DPDK_STEER_H

#include <rte_ring.h>
#include <sys/eventfd.h>

#define DPK_STEER_ALL 0xffffu
#define DPK_INBOX_SLOTS 4096u

static uint16_t dpk_steer_target(const struct dpk_thread *t, const struct dpk_port *p, const struct rte_mbuf *m)
{
	const uint8_t *d = rte_pktmbuf_mtod(m, const uint8_t *);
	if (m->data_len >= 22 && d[12] == 0x08 && d[13] == 0x06)
		return (d[20] == 0 && d[21] == 2) ? DPK_STEER_ALL : t->index;
	return io_rss_queue_for_frame(&p->rss, d, m->data_len);
}

static void dpk_wake(struct dpk_thread *t)
{
	uint64_t one = 1;
	if (atomic_load(&t->sleeping) && write(t->efd, &one, sizeof(one)) < 0)
		t->st.wake_errors++; /* counted on the target; a missed wake costs at most -e ms */
}

static void dpk_steer_to(struct dpk_thread *t, uint16_t dst, struct rte_mbuf *m)
{
	struct dpk_thread *d = &dpk.threads[dst];
	if (rte_ring_mp_enqueue(d->inbox, m) != 0) {
		t->st.steer_drop_full++;
		rte_pktmbuf_free(m);
		return;
	}
	t->st.steer_out++;
	dpk_wake(d);
}

/* where a frame this thread received goes; 1 when it stays here */
static int dpk_steer_frame(struct dpk_thread *t, const struct dpk_port *p, struct rte_mbuf *m)
{
	uint16_t target = dpk_steer_target(t, p, m), k;
	if (target == t->index)
		return 1;
	if (target != DPK_STEER_ALL) {
		dpk_steer_to(t, target, m);
		return 0;
	}
	for (k = 0; k < dpk.nthreads; k++) {
		struct rte_mbuf *c;
		if (k == t->index)
			continue;
		c = rte_pktmbuf_clone(m, t->clone_pool);
		if (c)
			dpk_steer_to(t, k, c);
		else
			t->st.steer_drop_nobuf++;
	}
	return 1;
}

static int dpk_inbox_empty(const struct dpk_thread *t)
{
	return dpk.nthreads < 2 || rte_ring_empty(t->inbox);
}

static int dpk_steer_init(struct dpk_thread *t)
{
	char name[RTE_RING_NAMESIZE];
	t->efd = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
	if (t->efd < 0)
		return -1;
	if (dpk.nthreads < 2)
		return 0;
	snprintf(name, sizeof(name), "iip_inbox_%u", t->index);
	t->inbox = rte_ring_create(name, DPK_INBOX_SLOTS, (int) t->socket, RING_F_SC_DEQ);
	if (!t->inbox)
		t->inbox = rte_ring_create(name, DPK_INBOX_SLOTS, SOCKET_ID_ANY, RING_F_SC_DEQ);
	return t->inbox ? 0 : -1;
}

static void dpk_steer_destroy(struct dpk_thread *t)
{
	void *m;
	if (t->inbox) {
		while (rte_ring_sc_dequeue(t->inbox, &m) == 0)
			rte_pktmbuf_free((struct rte_mbuf *) m);
		rte_ring_free(t->inbox);
		t->inbox = NULL;
	}
	if (t->efd >= 0)
		close(t->efd);
	t->efd = -1;
}

#endif /* IO_DPDK_STEER_H */
