/* libFuzzer target: flow_rule_parse (the words of `flow add`, from the CLI or the config file)
 * on arbitrary bytes split at blanks, and flow_key_parse plus the match on the same bytes
 * taken as a frame. A refusal always says why; an accepted rule is consistent (ranges in
 * order, prefixes without host bits, ports only with TCP or UDP, IP matches only on IPv4 or
 * IPv6, a
 * steer worker below the count), and the match text flow show prints reads back as the
 * same match. */
#include <stdbool.h>
#include <string.h>

#include "fuzz_check.h"
#include "fuzz_words.h"
#include "flow/flow_match.h"

#define NB_WORKERS 4

static const struct flow_parse_env env = {.port_by_name = fuzz_port_by_name,
					  .nb_workers = NB_WORKERS};

/* The rule's prefixes as bytes, network order: 4 (IPv4) or 16 (IPv6), returned. */
static unsigned rule_address_bytes(const struct flow_match *m, uint8_t *src, uint8_t *dst)
{
	if (m->ethertype == FLOW_ETHERTYPE_IPV6) {
		memcpy(src, m->src6.b, 16);
		memcpy(dst, m->dst6.b, 16);
		return 16;
	}
	for (unsigned i = 0; i < 4; i++) {
		src[i] = (uint8_t)(m->src >> (24 - 8 * i));
		dst[i] = (uint8_t)(m->dst >> (24 - 8 * i));
	}
	return 4;
}

static bool bit_of(const uint8_t *b, unsigned i)
{
	return (b[i / 8] >> (7 - i % 8)) & 1;
}

static bool host_bits_clear(const uint8_t *a, unsigned nbytes, uint8_t len)
{
	for (unsigned i = len; i < 8 * nbytes; i++)
		if (bit_of(a, i))
			return false;
	return true;
}

/* Bit by bit: the first len bits of the key's address (its last nbytes) are the rule's. */
static bool key_prefix_holds(const uint32_t *words, const uint8_t *rule, unsigned nbytes,
			     uint8_t len)
{
	uint8_t key[16];
	for (unsigned i = 0; i < 16; i++)
		key[i] = (uint8_t)(words[i / 4] >> (24 - 8 * (i % 4)));
	for (unsigned i = 0; i < len; i++)
		if (bit_of(key + 16 - nbytes, i) != bit_of(rule, i))
			return false;
	return true;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	if (size > 1024)
		return 0;
	char text[1025], err[160], match[200], again_text[256];
	char *words[FUZZ_MAX_WORDS];
	memcpy(text, data, size);
	text[size] = '\0';
	struct flow_rule r, again;
	struct flow_key k;
	flow_key_parse(data, size, 0, &k);
	err[0] = '\0';
	if (flow_rule_parse(fuzz_split_words(text, words), words, &env, &r, err, sizeof(err)) != 0) {
		FUZZ_CHECK(err[0] != '\0');
		return 0;
	}
	const struct flow_match *m = &r.m;
	FUZZ_CHECK(m->sport_lo <= m->sport_hi && m->dport_lo <= m->dport_hi);
	bool v6 = m->ethertype == FLOW_ETHERTYPE_IPV6;
	uint8_t src[16], dst[16];
	unsigned nbytes = rule_address_bytes(m, src, dst);
	FUZZ_CHECK(m->src_len <= 8 * nbytes && m->dst_len <= 8 * nbytes);
	FUZZ_CHECK(host_bits_clear(src, nbytes, m->src_len) &&
		   host_bits_clear(dst, nbytes, m->dst_len));
	FUZZ_CHECK((m->sport_lo == 0 && m->sport_hi == 65535 && m->dport_lo == 0 &&
		    m->dport_hi == 65535) || m->proto == 6 || m->proto == 17);
	FUZZ_CHECK((m->proto == FLOW_ANY && m->src_len == 0 && m->dst_len == 0) ||
		   m->ethertype == FLOW_ETHERTYPE_IPV4 || v6);
	FUZZ_CHECK(m->ethertype == FLOW_ANY || (m->ethertype >= 0x0600 && m->ethertype <= 0xffff));
	FUZZ_CHECK(r.action < FLOW_ACT_COUNT && (r.action != FLOW_ACT_STEER || r.worker < NB_WORKERS));
	/* The compiled test against the match read plainly. */
	struct flow_test t;
	flow_test_compile(m, &t);
	bool ip = m->proto != FLOW_ANY || m->src_len != 0 || m->dst_len != 0;
	bool ports = !(m->sport_lo == 0 && m->sport_hi == 65535 && m->dport_lo == 0 &&
		       m->dport_hi == 65535);
	bool plain = (m->dev == FLOW_ANY || m->dev == k.port) &&
		     (m->ethertype == FLOW_ANY || m->ethertype == k.ethertype) &&
		     (!ip || (k.ip && (m->proto == FLOW_ANY || m->proto == k.proto) &&
			      key_prefix_holds(k.src, src, nbytes, m->src_len) &&
			      key_prefix_holds(k.dst, dst, nbytes, m->dst_len))) &&
		     (!ports || (k.l4 && k.sport >= m->sport_lo && k.sport <= m->sport_hi &&
				 k.dport >= m->dport_lo && k.dport <= m->dport_hi));
	FUZZ_CHECK(flow_test_holds(&t, &k) == plain);
	flow_match_format(m, match, sizeof(match));
	snprintf(again_text, sizeof(again_text), "drop %s", match);
	char *again_words[FUZZ_MAX_WORDS];
	int n = fuzz_split_words(again_text, again_words);
	FUZZ_CHECK(flow_rule_parse(n == 2 && strcmp(again_words[1], "any") == 0 ? 1 : n,
				   again_words, &env, &again, err, sizeof(err)) == 0);
	again.m.dev = m->dev; /* the match text leaves dev to the daemon, which names ports */
	FUZZ_CHECK(memcmp(&again.m, m, sizeof(*m)) == 0);
	return 0;
}
