/* libFuzzer target: acl_rule_parse (the words of `acl add`, from the CLI or the config file)
 * on arbitrary bytes split at blanks. A refusal always says why; an accepted rule is
 * consistent (ranges in order, prefixes without host bits in their family, flags within
 * their mask, ports and flags only with their protocol), and the match text acl show prints reads back as the
 * same rule. */
#include <string.h>

#include "fuzz_check.h"
#include "fuzz_words.h"
#include "acl/acl_rule.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	if (size > 1024)
		return 0;
	char text[1025], err[160], match[200], again_text[256];
	char *words[FUZZ_MAX_WORDS];
	memcpy(text, data, size);
	text[size] = '\0';
	struct acl_rule r, again;
	err[0] = '\0';
	if (acl_rule_parse(fuzz_split_words(text, words), words, fuzz_port_by_name, NULL, &r, err,
			   sizeof(err)) != 0) {
		FUZZ_CHECK(err[0] != '\0');
		return 0;
	}
	FUZZ_CHECK(r.sport_lo <= r.sport_hi && r.dport_lo <= r.dport_hi);
	FUZZ_CHECK(r.family == ACL_FAMILY_ANY || r.family == ACL_FAMILY_IP4 ||
		   r.family == ACL_FAMILY_IP6);
	FUZZ_CHECK(r.family != ACL_FAMILY_ANY || (r.src_len == 0 && r.dst_len == 0));
	if (r.family == ACL_FAMILY_IP6) {
		struct ip6_addr net = r.src6;
		ip6_prefix_mask(&net, r.src_len);
		FUZZ_CHECK(r.src_len <= 128 && ip6_addr_equal(&net, &r.src6));
		net = r.dst6;
		ip6_prefix_mask(&net, r.dst_len);
		FUZZ_CHECK(r.dst_len <= 128 && ip6_addr_equal(&net, &r.dst6));
	} else {
		FUZZ_CHECK(r.src_len <= 32 && r.dst_len <= 32);
		FUZZ_CHECK(r.src_len == 32 || (r.src & (0xffffffffu >> r.src_len)) == 0);
		FUZZ_CHECK(r.dst_len == 32 || (r.dst & (0xffffffffu >> r.dst_len)) == 0);
	}
	FUZZ_CHECK((r.flags_set & ~r.flags_mask) == 0);
	FUZZ_CHECK(r.flags_mask == 0 || r.proto == 6);
	FUZZ_CHECK(r.hooks != 0 && (r.hooks & ~ACL_HOOK_ALL) == 0);
	acl_rule_match_format(&r, match, sizeof(match));
	snprintf(again_text, sizeof(again_text), "deny %s", match);
	char *again_words[FUZZ_MAX_WORDS];
	int n = fuzz_split_words(again_text, again_words);
	FUZZ_CHECK(acl_rule_parse(n == 2 && strcmp(again_words[1], "any") == 0 ? 1 : n,
				  again_words, fuzz_port_by_name, NULL, &again, err, sizeof(err)) == 0);
	FUZZ_CHECK(again.family == r.family && ip6_addr_equal(&again.src6, &r.src6) &&
		   ip6_addr_equal(&again.dst6, &r.dst6));
	FUZZ_CHECK(again.proto == r.proto && again.src == r.src && again.src_len == r.src_len &&
		   again.dst == r.dst && again.dst_len == r.dst_len &&
		   again.sport_lo == r.sport_lo && again.sport_hi == r.sport_hi &&
		   again.dport_lo == r.dport_lo && again.dport_hi == r.dport_hi &&
		   again.flags_set == r.flags_set && again.flags_mask == r.flags_mask);
	return 0;
}
