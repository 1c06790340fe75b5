/*
 * tcp_opt.c: TCP options: MSS (RFC 9293 3.7.1, RFC 6691), window scale and
 * timestamps (RFC 7323), SACK-permitted and SACK (RFC 2018).
 */

struct iip_tcp_opts {
	uint8_t has_mss;
	uint8_t has_wscale;
	uint8_t has_sack_perm;
	uint8_t has_ts;
	uint16_t mss;
	uint8_t wscale;
	uint8_t sack_cnt;
	uint32_t ts_val;
	uint32_t ts_ecr;
	struct iip_seq_range sack[4];
};

static uint32_t __iip_get_be32(const uint8_t *p)
{
	return ((uint32_t) p[0] << 24) | ((uint32_t) p[1] << 16) | ((uint32_t) p[2] << 8) | p[3];
}

static void __iip_put_be32(uint8_t *p, uint32_t v)
{
	p[0] = (uint8_t) (v >> 24);
	p[1] = (uint8_t) (v >> 16);
	p[2] = (uint8_t) (v >> 8);
	p[3] = (uint8_t) v;
}

/*
 * Parses the options of a segment.  Returns 0 if they are malformed (an
 * option running past the header, a known option of the wrong length): the
 * segment is then dropped (RFC 9293 3.1: a TCP MUST be prepared to handle
 * an illegal option length without crashing; dropping is the safe choice).
 */
static uint8_t __iip_tcp_opts_parse(const uint8_t *p, uint16_t len, uint8_t syn, struct iip_tcp_opts *o)
{
	uint16_t i = 0;
	__iip_memset(o, 0, sizeof(*o));
	while (i < len) {
		uint8_t kind = p[i], olen;
		if (kind == IIP_TCP_OPT_EOL)
			break;
		if (kind == IIP_TCP_OPT_NOP) {
			i++;
			continue;
		}
		if (i + 1 >= len)
			return 0;
		olen = p[i + 1];
		if (olen < 2 || i + olen > len)
			return 0;
		switch (kind) {
		case IIP_TCP_OPT_MSS:
			if (olen != 4)
				return 0;
			if (syn) {
				o->has_mss = 1;
				o->mss = (uint16_t) ((p[i + 2] << 8) | p[i + 3]);
			}
			break;
		case IIP_TCP_OPT_WSCALE:
			if (olen != 3)
				return 0;
			if (syn) {
				o->has_wscale = 1;
				/* RFC 7323 2.3: a shift above 14 is used as 14 */
				o->wscale = (uint8_t) __iip_min(p[i + 2], 14);
			}
			break;
		case IIP_TCP_OPT_SACK_PERM:
			if (olen != 2)
				return 0;
			if (syn)
				o->has_sack_perm = 1;
			break;
		case IIP_TCP_OPT_TIMESTAMP:
			if (olen != 10)
				return 0;
			o->has_ts = 1;
			o->ts_val = __iip_get_be32(&p[i + 2]);
			o->ts_ecr = __iip_get_be32(&p[i + 6]);
			break;
		case IIP_TCP_OPT_SACK:
			if (olen < 10 || ((olen - 2) % 8))
				return 0;
			{
				uint8_t n = (uint8_t) ((olen - 2) / 8), k;
				for (k = 0; k < n && o->sack_cnt < 4; k++) {
					o->sack[o->sack_cnt].start = __iip_get_be32(&p[i + 2 + k * 8]);
					o->sack[o->sack_cnt].end = __iip_get_be32(&p[i + 6 + k * 8]);
					o->sack_cnt++;
				}
			}
			break;
		default:
			break; /* unknown options are skipped (RFC 9293 3.2) */
		}
		i = (uint16_t) (i + olen);
	}
	return 1;
}

/* Writes the timestamp option, NOP-aligned: 12 bytes. */
static uint8_t *__iip_tcp_opt_put_ts(uint8_t *p, uint32_t val, uint32_t ecr)
{
	p[0] = IIP_TCP_OPT_NOP;
	p[1] = IIP_TCP_OPT_NOP;
	p[2] = IIP_TCP_OPT_TIMESTAMP;
	p[3] = 10;
	__iip_put_be32(p + 4, val);
	__iip_put_be32(p + 8, ecr);
	return p + 12;
}
