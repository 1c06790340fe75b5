/*
 * io/threadmodel/stack_view.h — the stack as an application built with the
 * thread-model layer sees it.  build.mk makes this file the application's
 * IIP_MAIN_C: it includes the real stack (THREADMODEL_IIP_MAIN_C), then
 * renames, for the application's code that follows, the names the layer
 * stands in for:
 *
 *  - the application contract (__app_init ... __app_exit) and the stack's
 *    event callbacks (iip_ops_tcp_payload ...): the application's
 *    definitions become tm_inner_*, and the layer defines the real names
 *    (net.h), which the backend and the stack call;
 *  - the API calls the application makes (iip_tcp_send ...) and the packet
 *    pool's alloc / free / clone: they go to the layer's stand-ins
 *    (app.h), which run them on the networking thread.
 *
 * main.c (the layer's IOSUB_MAIN_C) ends the renaming before the layer's
 * and the backend's own code.  The application's source is unchanged.
 */
#ifndef IO_THREADMODEL_STACK_VIEW_H
#define IO_THREADMODEL_STACK_VIEW_H

#ifndef THREADMODEL_IIP_MAIN_C
#error "io/threadmodel: build through its build.mk (IOSUB_DIR=io/threadmodel INNER_IOSUB_DIR=<backend> make)"
#endif
#include THREADMODEL_IIP_MAIN_C

static uint16_t tm_app_tcp_send(void *ws, void *handle, void *pkt, uint16_t tcp_flags, void *opaque);
static uint16_t tm_app_tcp_close(void *ws, void *handle, void *opaque);
static void tm_app_tcp_rxbuf_consumed(void *ws, void *handle, uint16_t cnt, void *opaque);
static uint16_t tm_app_tcp_connect(void *ws, uint8_t local_mac[], uint32_t local_ip4_be, uint16_t local_port_be,
				   uint8_t peer_mac[], uint32_t peer_ip4_be, uint16_t peer_port_be, void *opaque);
static uint16_t tm_app_udp_send(void *ws, uint8_t local_mac[], uint32_t local_ip4_be, uint16_t local_port_be,
				uint8_t peer_mac[], uint32_t peer_ip4_be, uint16_t peer_port_be, void *pkt, void *opaque);
static void tm_app_arp_request(void *ws, uint8_t local_mac[], uint32_t local_ip4_be, uint32_t target_ip4_be,
			       void *opaque);
static void *tm_app_pkt_alloc(void *opaque);
static void tm_app_pkt_free(void *pkt, void *opaque);
static void *tm_app_pkt_clone(void *pkt, void *opaque);

/*
 * The clock, when the application uses the backend's (COMPAT.md section 3):
 * a backend's clock need not be callable from another thread (io/loop
 * caches the time in a global), so the application thread reads
 * CLOCK_MONOTONIC_RAW shifted onto the backend's clock, measured once on
 * the networking thread.  A virtual clock (io/loop -V) does not make sense
 * with split or merge: the application thread runs in real time.
 */
#ifdef APP_IIP_OPS_UTIL_NOW_NS_NONE
#define THREADMODEL_APP_CLOCK 1
static void tm_app_util_now_ns(uint32_t t[3], void *opaque);
#define iip_ops_util_now_ns tm_app_util_now_ns
#endif

#define __app_init tm_inner_app_init
#define __app_thread_init tm_inner_app_thread_init
#define __app_loop tm_inner_app_loop
#define __app_should_stop tm_inner_app_should_stop
#define __app_exit tm_inner_app_exit

#define iip_ops_arp_reply tm_inner_ops_arp_reply
#define iip_ops_icmp_reply tm_inner_ops_icmp_reply
#define iip_ops_tcp_accept tm_inner_ops_tcp_accept
#define iip_ops_tcp_accepted tm_inner_ops_tcp_accepted
#define iip_ops_tcp_connected tm_inner_ops_tcp_connected
#define iip_ops_tcp_payload tm_inner_ops_tcp_payload
#define iip_ops_tcp_acked tm_inner_ops_tcp_acked
#define iip_ops_tcp_closed tm_inner_ops_tcp_closed
#define iip_ops_udp_payload tm_inner_ops_udp_payload

#define iip_tcp_send tm_app_tcp_send
#define iip_tcp_close tm_app_tcp_close
#define iip_tcp_rxbuf_consumed tm_app_tcp_rxbuf_consumed
#define iip_tcp_connect tm_app_tcp_connect
#define iip_udp_send tm_app_udp_send
#define iip_arp_request tm_app_arp_request
#define iip_ops_pkt_alloc tm_app_pkt_alloc
#define iip_ops_pkt_free tm_app_pkt_free
#define iip_ops_pkt_clone tm_app_pkt_clone

#endif
