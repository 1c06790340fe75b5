# io/af_xdp/build.mk — included by an application's Makefile when it is
# built with IOSUB_DIR=<path to io/af_xdp> (COMPAT.md section 3).
# Needs libxdp and libbpf (Debian: libxdp-dev libbpf-dev) and pthreads.
XDP_PKGS := libxdp libbpf
CFLAGS += -D_GNU_SOURCE $(shell pkg-config --cflags $(XDP_PKGS) 2>/dev/null)
LDLIBS += $(shell pkg-config --libs $(XDP_PKGS) 2>/dev/null || echo -lxdp -lbpf) -lpthread
