# io/af_packet/build.mk — included by an application's Makefile when it is built
# with IOSUB_DIR=<path to io/af_packet> (COMPAT.md section 3). The af_packet backend
# needs libc, pthreads and the kernel's uapi headers (linux/if_packet.h,
# linux/filter.h); no library to link beyond pthreads.
CFLAGS += -D_GNU_SOURCE
LDLIBS += -lpthread
