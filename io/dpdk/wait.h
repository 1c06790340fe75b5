/*
 * io/dpdk/wait.h — interrupt mode (-e MS): sleep when there is nothing to
 * do instead of busy polling.
 *
 * Each thread has one epoll set holding the receive-interrupt descriptors
 * of its queue on every port (rte_eth_dev_rx_intr_ctl_q_get_fd,
 * edge-triggered, as EAL registers them itself: some drivers hand out the
 * queue's data descriptor, which must not be read) and its steering
 * eventfd. An idle thread arms the interrupts (rte_eth_dev_rx_intr_enable),
 * looks at its queues once more (a frame that came before arming raised
 * no interrupt), sleeps in epoll_pwait2 for at most min(next_us, -e), then
 * disarms them and goes back to polling.
 *
 * A port whose driver has no receive interrupts (net_af_packet) cannot wake
 * the thread, so its waits are capped at DPK_NAP_US: less CPU than busy
 * polling, at most that much added latency.
 *
 * Included by main.c.
 */
#ifndef IO_DPDK_WAIT_H
#define IO_DPDK_WAIT_H

#include <sys/epoll.h>

static int dpk_wait_init(struct dpk_thread *t)
{
	struct epoll_event ev;
	uint16_t i;
	t->epfd = -1;
	if (!dpk.conf.poll_ms)
		return 0;
	t->epfd = epoll_create1(EPOLL_CLOEXEC);
	if (t->epfd < 0)
		return -1;
	memset(&ev, 0, sizeof(ev));
	ev.events = EPOLLIN;
	ev.data.u32 = UINT32_MAX;
	if (epoll_ctl(t->epfd, EPOLL_CTL_ADD, t->efd, &ev))
		return -1;
	t->nap_only = 0;
	for (i = 0; i < dpk.nports; i++) {
		const struct dpk_port *p = &dpk.ports[i];
		int fd = p->rx_intr ? rte_eth_dev_rx_intr_ctl_q_get_fd(p->id, t->index) : -1;
		if (fd < 0) {
			t->nap_only = 1;
			continue;
		}
		ev.events = EPOLLIN | EPOLLET;
		ev.data.u32 = i;
		if (epoll_ctl(t->epfd, EPOLL_CTL_ADD, fd, &ev))
			t->nap_only = 1;
	}
	return 0;
}

static void dpk_wait_destroy(struct dpk_thread *t)
{
	if (t->epfd >= 0)
		close(t->epfd);
	t->epfd = -1;
}

static void dpk_rx_intr_arm(struct dpk_thread *t, int on)
{
	uint16_t i;
	for (i = 0; i < dpk.nports; i++)
		if (dpk.ports[i].rx_intr) {
			if (on)
				rte_eth_dev_rx_intr_enable(dpk.ports[i].id, t->index);
			else
				rte_eth_dev_rx_intr_disable(dpk.ports[i].id, t->index);
		}
}

static uint32_t dpk_receive(struct dpk_thread *t);

/* sleeps at most timeout_us, less when a frame or a steered frame comes;
 * frames found by the last look before sleeping stay in t->rx for the loop */
static void dpk_wait(struct dpk_thread *t, uint64_t timeout_us)
{
	struct epoll_event ev[8];
	struct timespec ts;
	int n, k;
	if (!timeout_us || t->epfd < 0)
		return;
	if (t->nap_only && timeout_us > DPK_NAP_US)
		timeout_us = DPK_NAP_US;
	atomic_store(&t->sleeping, 1);
	dpk_rx_intr_arm(t, 1);
	if (!dpk_inbox_empty(t) || atomic_load(&dpk.stop) || dpk_receive(t)) {
		dpk_rx_intr_arm(t, 0);
		atomic_store(&t->sleeping, 0);
		return;
	}
	ts.tv_sec = (time_t) (timeout_us / 1000000u);
	ts.tv_nsec = (long) (timeout_us % 1000000u) * 1000;
	t->st.sleeps++;
	n = epoll_pwait2(t->epfd, ev, 8, &ts, NULL);
	for (k = 0; k < n; k++)
		if (ev[k].data.u32 == UINT32_MAX) {
			uint64_t v;
			if (read(t->efd, &v, sizeof(v)) < 0 && errno != EAGAIN)
				t->st.wake_errors++;
			t->st.steer_wakeups++;
		} else
			t->st.rx_wakeups++;
	dpk_rx_intr_arm(t, 0);
	atomic_store(&t->sleeping, 0);
}

#endif /* IO_DPDK_WAIT_H */
