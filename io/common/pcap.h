/*
 * io/common/pcap.h — a classic libpcap file writer any backend can turn on.
 *
 * File = global header (magic, version 2.4, snaplen, LINKTYPE_ETHERNET)
 * followed by one record header + bytes per frame. The magic number says
 * whether timestamps carry microseconds (0xa1b2c3d4) or nanoseconds
 * (0xa1b23c4d); everything is written in host byte order, which readers
 * detect from the magic. Frames longer than the snap length are cut and
 * keep their original length in the record.
 *
 * Chains of any packet type are written with io_pcap_begin (total length),
 * io_pcap_append (each segment) and io_pcap_end; io_pcap_write does a
 * contiguous frame in one call. Output is buffered by stdio; io_pcap_close
 * flushes and reports write errors. Not thread-safe: one writer per thread,
 * or a lock around it.
 */
#ifndef IO_COMMON_PCAP_H
#define IO_COMMON_PCAP_H

#include <stdint.h>
#include <stdio.h>
#include <string.h>

#define IO_PCAP_LINKTYPE_ETHERNET 1
#define IO_PCAP_SNAPLEN 262144u

struct io_pcap {
	FILE *f;
	int nsec;           /* nanosecond timestamps */
	int error;          /* a write failed */
	uint32_t rec_left;  /* bytes of the current record still to write */
	uint64_t frames;
};

struct io_pcap_file_hdr {
	uint32_t magic;
	uint16_t version_major, version_minor;
	int32_t thiszone;
	uint32_t sigfigs, snaplen, linktype;
};

struct io_pcap_rec_hdr {
	uint32_t ts_sec, ts_frac, incl_len, orig_len;
};

static inline void io_pcap_put(struct io_pcap *w, const void *p, size_t n)
{
	if (n && fwrite(p, 1, n, w->f) != n)
		w->error = 1;
}

/* opens path for writing; 0 on success, -1 (errno set by fopen) otherwise */
static inline int io_pcap_open(struct io_pcap *w, const char *path, int nsec)
{
	struct io_pcap_file_hdr h;
	memset(w, 0, sizeof(*w));
	w->f = fopen(path, "wb");
	if (!w->f)
		return -1;
	w->nsec = nsec;
	memset(&h, 0, sizeof(h));
	h.magic = nsec ? 0xa1b23c4du : 0xa1b2c3d4u;
	h.version_major = 2;
	h.version_minor = 4;
	h.snaplen = IO_PCAP_SNAPLEN;
	h.linktype = IO_PCAP_LINKTYPE_ETHERNET;
	io_pcap_put(w, &h, sizeof(h));
	return w->error ? -1 : 0;
}

/* starts a record of total_len bytes taken at t_ns (nanoseconds since any epoch) */
static inline void io_pcap_begin(struct io_pcap *w, uint64_t t_ns, uint32_t total_len)
{
	struct io_pcap_rec_hdr r;
	r.ts_sec = (uint32_t) (t_ns / 1000000000u);
	r.ts_frac = (uint32_t) (t_ns % 1000000000u);
	if (!w->nsec)
		r.ts_frac /= 1000u;
	r.orig_len = total_len;
	r.incl_len = total_len < IO_PCAP_SNAPLEN ? total_len : IO_PCAP_SNAPLEN;
	w->rec_left = r.incl_len;
	io_pcap_put(w, &r, sizeof(r));
	w->frames++;
}

/* adds the next n bytes of the current record (bytes past the snap length
 * or past the announced total are dropped) */
static inline void io_pcap_append(struct io_pcap *w, const void *data, uint32_t n)
{
	if (n > w->rec_left)
		n = w->rec_left;
	io_pcap_put(w, data, n);
	w->rec_left -= n;
}

/* ends the record; pads with zeros if fewer bytes than announced came, so
 * the file stays readable whatever the caller did */
static inline void io_pcap_end(struct io_pcap *w)
{
	static const uint8_t zeros[256];
	while (w->rec_left) {
		uint32_t n = w->rec_left < sizeof(zeros) ? w->rec_left : (uint32_t) sizeof(zeros);
		io_pcap_put(w, zeros, n);
		w->rec_left -= n;
	}
}

static inline void io_pcap_write(struct io_pcap *w, uint64_t t_ns, const void *frame, uint32_t len)
{
	io_pcap_begin(w, t_ns, len);
	io_pcap_append(w, frame, len);
	io_pcap_end(w);
}

/* flushes and closes; 0 if every write succeeded, -1 otherwise */
static inline int io_pcap_close(struct io_pcap *w)
{
	int rc = 0;
	if (!w->f)
		return 0;
	if (fflush(w->f) != 0 || w->error)
		rc = -1;
	if (fclose(w->f) != 0)
		rc = -1;
	w->f = NULL;
	return rc;
}

#endif /* IO_COMMON_PCAP_H */
