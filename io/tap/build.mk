# io/tap/build.mk — included by an application's Makefile when it is built
# with IOSUB_DIR=<path to io/tap> (COMPAT.md section 3). The tap backend
# needs libc, pthreads and the kernel's uapi headers (linux/if_tun.h,
# linux/virtio_net.h, linux/bpf.h); no library to link beyond pthreads.
CFLAGS += -D_GNU_SOURCE
LDLIBS += -lpthread
