/* SipHash-2-4, written from the paper (Aumasson & Bernstein 2012, §2): four 64-bit words of
 * state initialised from the key and constants, two SipRounds per 8-byte message word, the last
 * word carrying the message length in its top byte, then 0xff into v2 and four rounds. Input is
 * read byte-wise as little-endian words, so it works at any alignment and on any host order. */
#include "siphash.h"

static inline uint64_t sip_rotl(uint64_t x, unsigned b)
{
	return (x << b) | (x >> (64 - b));
}

/* Little-endian 64-bit load from an unaligned pointer (compilers fold this into one load). */
static inline uint64_t sip_get_le64(const uint8_t *p)
{
	return (uint64_t)p[0] | (uint64_t)p[1] << 8 | (uint64_t)p[2] << 16 |
	       (uint64_t)p[3] << 24 | (uint64_t)p[4] << 32 | (uint64_t)p[5] << 40 |
	       (uint64_t)p[6] << 48 | (uint64_t)p[7] << 56;
}

struct sip_state {
	uint64_t v0, v1, v2, v3;
};

/* The paper's SipRound (§2, figure 2). */
static inline void sip_round(struct sip_state *s)
{
	s->v0 += s->v1;
	s->v1 = sip_rotl(s->v1, 13);
	s->v1 ^= s->v0;
	s->v0 = sip_rotl(s->v0, 32);
	s->v2 += s->v3;
	s->v3 = sip_rotl(s->v3, 16);
	s->v3 ^= s->v2;
	s->v0 += s->v3;
	s->v3 = sip_rotl(s->v3, 21);
	s->v3 ^= s->v0;
	s->v2 += s->v1;
	s->v1 = sip_rotl(s->v1, 17);
	s->v1 ^= s->v2;
	s->v2 = sip_rotl(s->v2, 32);
}

/* Compression: c = 2 rounds per message word. */
static inline void sip_compress(struct sip_state *s, uint64_t m)
{
	s->v3 ^= m;
	sip_round(s);
	sip_round(s);
	s->v0 ^= m;
}

uint64_t siphash24(const struct siphash_key *k, const void *data, size_t len)
{
	const uint8_t *p = data;
	size_t left = len;
	uint64_t last;
	struct sip_state s = {
		/* "somepseudorandomlygeneratedbytes" */
		.v0 = k->k0 ^ UINT64_C(0x736f6d6570736575),
		.v1 = k->k1 ^ UINT64_C(0x646f72616e646f6d),
		.v2 = k->k0 ^ UINT64_C(0x6c7967656e657261),
		.v3 = k->k1 ^ UINT64_C(0x7465646279746573),
	};

	for (; left >= 8; left -= 8, p += 8)
		sip_compress(&s, sip_get_le64(p));

	/* The last word: the 0..7 remaining bytes, zero padded, and len mod 256 in the top byte. */
	last = (uint64_t)(len & 0xff) << 56;
	switch (left) {
	case 7:
		last |= (uint64_t)p[6] << 48;
		/* fall through */
	case 6:
		last |= (uint64_t)p[5] << 40;
		/* fall through */
	case 5:
		last |= (uint64_t)p[4] << 32;
		/* fall through */
	case 4:
		last |= (uint64_t)p[3] << 24;
		/* fall through */
	case 3:
		last |= (uint64_t)p[2] << 16;
		/* fall through */
	case 2:
		last |= (uint64_t)p[1] << 8;
		/* fall through */
	case 1:
		last |= (uint64_t)p[0];
		break;
	default:
		break;
	}
	sip_compress(&s, last);

	/* Finalisation: d = 4 rounds. */
	s.v2 ^= 0xff;
	sip_round(&s);
	sip_round(&s);
	sip_round(&s);
	sip_round(&s);
	return s.v0 ^ s.v1 ^ s.v2 ^ s.v3;
}
