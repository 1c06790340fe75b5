/*
 * io/threadmodel/bell.h — the doorbell the networking thread rings to wake
 * a sleeping application thread (merge model), on a Linux futex.
 *
 * Why a futex and not an eventfd or a pipe: the word the sleeper waits on
 * is a sequence number the ringer bumps, so "check for work, then sleep"
 * cannot miss a ring (the kernel compares the word before sleeping), and a
 * ring costs no system call at all while nobody sleeps, which is the split
 * model's and the busy case of the merge model.  The pattern is Dekker's:
 * the sleeper stores `sleeping` then re-checks for work; the ringer makes
 * work visible then loads `sleeping`; both sequentially consistent, so at
 * least one of them sees the other.
 */
#ifndef IO_THREADMODEL_BELL_H
#define IO_THREADMODEL_BELL_H

#include <linux/futex.h>
#include <stdatomic.h>
#include <stdint.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

enum {
	TM_AWAKE = 0,
	TM_SLEEPING = 1,      /* wake me when there is something for me */
	TM_SLEEPING_TICK = 2, /* ... or when the networking thread ends an iteration */
};

struct tm_bell {
	_Alignas(64) _Atomic uint32_t seq;
	_Atomic uint32_t sleeping;   /* TM_AWAKE / TM_SLEEPING / TM_SLEEPING_TICK */
	uint64_t rings, wakeups;     /* ringer's counters (statistics) */
};

static inline void tm_bell_init(struct tm_bell *b)
{
	atomic_init(&b->seq, 0);
	atomic_init(&b->sleeping, TM_AWAKE);
	b->rings = b->wakeups = 0;
}

/* sleeper, step 1: remember the sequence, say we are going to sleep */
static inline uint32_t tm_bell_prepare(struct tm_bell *b, uint32_t how)
{
	uint32_t seq = atomic_load_explicit(&b->seq, memory_order_seq_cst);
	atomic_store_explicit(&b->sleeping, how, memory_order_seq_cst);
	return seq;
}

/* sleeper, step 2 (after re-checking for work and finding none): sleep until
 * rung or `timeout_us` passed (0: no limit) */
static inline void tm_bell_wait(struct tm_bell *b, uint32_t seq, uint32_t timeout_us)
{
	struct timespec ts, *tsp = NULL;
	if (timeout_us) {
		ts.tv_sec = timeout_us / 1000000u;
		ts.tv_nsec = (long) (timeout_us % 1000000u) * 1000;
		tsp = &ts;
	}
	/* EAGAIN (rung in between), EINTR, ETIMEDOUT: all mean "look again" */
	syscall(SYS_futex, &b->seq, FUTEX_WAIT_PRIVATE, seq, tsp, NULL, 0);
}

/* sleeper: awake again (also when it decided not to sleep after step 1) */
static inline void tm_bell_done(struct tm_bell *b)
{
	atomic_store_explicit(&b->sleeping, TM_AWAKE, memory_order_relaxed);
}

/* ringer: wakes the sleeper if it sleeps */
static inline void tm_bell_ring(struct tm_bell *b)
{
	atomic_fetch_add_explicit(&b->seq, 1, memory_order_seq_cst);
	b->rings++;
	if (atomic_load_explicit(&b->sleeping, memory_order_seq_cst) == TM_AWAKE)
		return;
	b->wakeups++;
	syscall(SYS_futex, &b->seq, FUTEX_WAKE_PRIVATE, 1, NULL, NULL, 0);
}

/* ringer: is the sleeper waiting for the end of an iteration? */
static inline int tm_bell_wants_tick(struct tm_bell *b)
{
	return atomic_load_explicit(&b->sleeping, memory_order_relaxed) == TM_SLEEPING_TICK;
}

/* ringer: is anybody asleep? */
static inline int tm_bell_sleeper(struct tm_bell *b)
{
	return atomic_load_explicit(&b->sleeping, memory_order_relaxed) != TM_AWAKE;
}

#endif
