/*
 * io/threadmodel/main.c — the thread-model layer, built as a backend that
 * wraps another one:
 *
 *   IOSUB_DIR=io/threadmodel INNER_IOSUB_DIR=io/loop make      (in any app's folder)
 *   ./a.out [backend options] -- [app options] --tm -m split -c 1
 *
 * unified (default): the application runs on the networking threads, as
 * without the layer.  split / merge: each networking thread gets an
 * application thread (on another core / on the same core, sleeping when
 * idle, woken through a futex, with a higher priority); events and calls
 * cross between the two over lock-free single-producer / single-consumer
 * rings.  README.md explains the design; opts.h lists the options.
 *
 * The application's callbacks were renamed by stack_view.h (included as
 * its IIP_MAIN_C); here the renaming ends, the layer defines the real
 * names, and the real backend (THREADMODEL_INNER_MAIN_C) follows.
 */
#ifndef IO_THREADMODEL_MAIN_C
#define IO_THREADMODEL_MAIN_C

#undef __app_init
#undef __app_thread_init
#undef __app_loop
#undef __app_should_stop
#undef __app_exit
#undef iip_ops_arp_reply
#undef iip_ops_icmp_reply
#undef iip_ops_tcp_accept
#undef iip_ops_tcp_accepted
#undef iip_ops_tcp_connected
#undef iip_ops_tcp_payload
#undef iip_ops_tcp_acked
#undef iip_ops_tcp_closed
#undef iip_ops_udp_payload
#undef iip_tcp_send
#undef iip_tcp_close
#undef iip_tcp_rxbuf_consumed
#undef iip_tcp_connect
#undef iip_udp_send
#undef iip_arp_request
#undef iip_ops_pkt_alloc
#undef iip_ops_pkt_free
#undef iip_ops_pkt_clone
#undef iip_ops_util_now_ns

#include <pthread.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "pair.h"
#include "net.h"
#include "app.h"

#ifndef THREADMODEL_INNER_MAIN_C
#error "io/threadmodel: give the wrapped backend with INNER_IOSUB_DIR=<backend folder>"
#endif
#include THREADMODEL_INNER_MAIN_C

#endif
