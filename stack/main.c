/*
 * iip: an integratable TCP/IP stack.  This is the file integrators include.
 *
 * Before including it, define uint8_t, uint16_t, uint32_t, uintptr_t, NULL
 * and IIP_OPS_DEBUG_PRINTF (printf-like), and optionally any IIP_CONF_*
 * tunable (conf.h) or __iip_* primitive (base.h).  After including it,
 * define the iip_ops_* callbacks (ops.h lists them).  Everything is static:
 * one translation unit, so the compiler can inline the callbacks.  No libc,
 * no globals: all state lives in the workspace the integrator allocates.
 *
 * A frame's path, by file: run.c (iip_run) -> l2.c -> arp.c | ip4.c
 * (-> ip4_reasm.c) -> icmp.c | udp.c | tcp_in.c (-> tcp_listen.c) -> the
 * application's callbacks; the application sends through tcp_api.c / udp.c
 * -> tcp_out.c -> ip4.c -> l2.c -> iip_ops_l2_push.
 */
#ifndef IIP_MAIN_C_INCLUDED
#define IIP_MAIN_C_INCLUDED

#include "conf.h"
#include "base.h"
#include "wire.h"
#include "csum.h"
#include "stats.h"
#include "types.h"
#include "ops.h"

static void __iip_ws_prepare(struct iip_workspace *ws, void *opaque);

#include "pb.c"
#include "l2.c"
#include "arp.c"
#include "ip4.c"
#include "ip4_reasm.c"
#include "icmp.c"
#include "udp.c"
#include "tcp_conn.c"
#include "tcp_opt.c"
#include "tcp_out.c"
#include "tcp_cc.c"
#include "tcp_in.c"
#include "tcp_listen.c"
#include "tcp_timer.c"
#include "tcp_api.c"
#include "run.c"

#endif
