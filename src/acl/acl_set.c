#include "acl_set.h"

#include <errno.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <rte_acl.h>
#include <rte_byteorder.h>
#include <rte_common.h>
#include <rte_lcore.h>

/* The fields of the keys as rte_acl sees them, one definition per field (fields that share
 * a 4-byte word share an input index), in one order for both families: the protocol, the
 * source address's words, the destination's, then the ports, flags, port, l4 and padding. */
#define ADDR4_WORDS 1
#define ADDR6_WORDS 4
#define NB_FIELDS(words) (1 + 2 * (words) + 6)
#define NB_FIELDS4 NB_FIELDS(ADDR4_WORDS)
#define NB_FIELDS6 NB_FIELDS(ADDR6_WORDS)

_Static_assert(ACL_CATEGORIES % RTE_ACL_RESULTS_MULTIPLIER == 0 &&
	       ACL_CATEGORIES <= RTE_ACL_MAX_CATEGORIES, "rte_acl_classify's categories");
_Static_assert(ACL_HOOK_ALL < 1u << ACL_CATEGORIES, "a category per hook");

#define FIELD_AT(t, sz, off, idx, in) \
	{.type = RTE_ACL_FIELD_TYPE_##t, .size = (sz), .field_index = (idx), \
	 .input_index = (in), .offset = (off)}
#define FIELD(key, t, f, idx, in) \
	FIELD_AT(t, sizeof(((struct key *)0)->f), offsetof(struct key, f), idx, in)
#define WORD6(f, i, idx) FIELD_AT(MASK, 4, offsetof(struct acl_key6, f) + 4 * (i), idx, idx)

/* After the addresses, both keys end alike; w is the number of address words. */
#define TAIL_FIELDS(key, w) \
	FIELD(key, RANGE, sport, 1 + 2 * (w), 1 + 2 * (w)), \
	FIELD(key, RANGE, dport, 2 + 2 * (w), 1 + 2 * (w)), \
	FIELD(key, BITMASK, tcp_flags, 3 + 2 * (w), 2 + 2 * (w)), \
	FIELD(key, BITMASK, dev, 4 + 2 * (w), 2 + 2 * (w)), \
	FIELD(key, BITMASK, l4, 5 + 2 * (w), 2 + 2 * (w)), \
	/* Always 0 and matched by every rule: rte_acl's trie walks whole 4-byte input \
	 * words, and a word only three fields wide made it match the wrong rules \
	 * (measured). */ \
	FIELD(key, BITMASK, unused2, 6 + 2 * (w), 2 + 2 * (w))

static const struct rte_acl_field_def acl_fields4[NB_FIELDS4] = {
	FIELD(acl_key, BITMASK, proto, 0, 0),
	FIELD(acl_key, MASK, src, 1, 1),
	FIELD(acl_key, MASK, dst, 2, 2),
	TAIL_FIELDS(acl_key, ADDR4_WORDS),
};

static const struct rte_acl_field_def acl_fields6[NB_FIELDS6] = {
	FIELD(acl_key6, BITMASK, proto, 0, 0),
	WORD6(src, 0, 1), WORD6(src, 1, 2), WORD6(src, 2, 3), WORD6(src, 3, 4),
	WORD6(dst, 0, 5), WORD6(dst, 1, 6), WORD6(dst, 2, 7), WORD6(dst, 3, 8),
	TAIL_FIELDS(acl_key6, ADDR6_WORDS),
};

/* One family's context: its fields and the rules it takes. */
struct acl_layout {
	const struct rte_acl_field_def *defs;
	uint32_t nb_fields;
	unsigned addr_words;
	uint8_t family;          /* takes the rules of this family and of both */
};

static const struct acl_layout layout4 = {acl_fields4, NB_FIELDS4, ADDR4_WORDS, ACL_FAMILY_IP4};
static const struct acl_layout layout6 = {acl_fields6, NB_FIELDS6, ADDR6_WORDS, ACL_FAMILY_IP6};

/* rte_acl_create returns the existing context when the name is taken: every context gets a
 * name of its own. */
static atomic_uint acl_set_serial;

/* For qsort_r over indexes into rules (arg). */
int acl_rule_index_order(const void *a, const void *b, void *arg)
{
	const struct acl_rule *rules = arg;
	return acl_rule_order(&rules[*(const uint32_t *)a], &rules[*(const uint32_t *)b]);
}

/* A prefix of len bits as rte_acl's MASK field over word i of an address: the bits of the
 * prefix that fall in that word. */
static uint32_t word_prefix_len(uint8_t len, unsigned i)
{
	return len <= 32 * i ? 0 : len >= 32 * (i + 1) ? 32 : len - 32 * i;
}

/* An IPv6 address's word i in host order, as rte_acl wants rule values. */
static uint32_t addr6_word(const struct ip6_addr *a, unsigned i)
{
	uint32_t w;
	memcpy(&w, a->b + 4 * i, 4);
	return rte_be_to_cpu_32(w);
}

static void rule_addresses_to_rte(const struct acl_rule *r, unsigned words,
				  struct rte_acl_field *f)
{
	if (words == ADDR4_WORDS) {
		f[1].value.u32 = r->src;
		f[1].mask_range.u32 = r->src_len;
		f[2].value.u32 = r->dst;
		f[2].mask_range.u32 = r->dst_len;
		return;
	}
	/* A rule of both families names no address: every word left 0/0 matches anything. */
	if (r->family != ACL_FAMILY_IP6)
		return;
	for (unsigned i = 0; i < words; i++) {
		f[1 + i].value.u32 = addr6_word(&r->src6, i);
		f[1 + i].mask_range.u32 = word_prefix_len(r->src_len, i);
		f[1 + words + i].value.u32 = addr6_word(&r->dst6, i);
		f[1 + words + i].mask_range.u32 = word_prefix_len(r->dst_len, i);
	}
}

static void rule_to_rte(const struct acl_rule *r, unsigned words, uint32_t slot,
			int32_t priority, struct rte_acl_rule *out)
{
	struct rte_acl_field *f = out->field;
	memset(f, 0, NB_FIELDS(words) * sizeof(*f));
	out->data.category_mask = r->hooks;  /* hook 1 << c is category c */
	out->data.priority = priority;
	out->data.userdata = slot + 1;       /* 0 is rte_acl's "no match" */
	if (r->proto != ACL_PROTO_ANY) {
		f[0].value.u8 = (uint8_t)r->proto;
		f[0].mask_range.u8 = 0xff;
	}
	rule_addresses_to_rte(r, words, f);
	const unsigned t = 1 + 2 * words;    /* the tail's first field */
	f[t].value.u16 = r->sport_lo;
	f[t].mask_range.u16 = r->sport_hi;
	f[t + 1].value.u16 = r->dport_lo;
	f[t + 1].mask_range.u16 = r->dport_hi;
	f[t + 2].value.u8 = r->flags_set;
	f[t + 2].mask_range.u8 = r->flags_mask;
	if (r->dev != ACL_DEV_ANY) {
		f[t + 3].value.u8 = (uint8_t)r->dev;
		f[t + 3].mask_range.u8 = 0xff;
	}
	bool needs_l4 = r->flags_mask != 0 || r->sport_lo != 0 || r->sport_hi != 65535 ||
			r->dport_lo != 0 || r->dport_hi != 65535;
	f[t + 4].value.u8 = needs_l4;
	f[t + 4].mask_range.u8 = needs_l4;
}

/* Builds the context of layout l from the rules of its family (and of both) among
 * rules[0..n), taken in the order order[]: *ctx stays NULL when there is none. */
static int set_build_ctx(struct rte_acl_ctx **ctx, const struct acl_layout *l,
			 const struct acl_rule *rules, const uint32_t *order, uint32_t n)
{
	const size_t rule_size = RTE_ACL_RULE_SZ(l->nb_fields);
	uint32_t taken = 0;
	for (uint32_t i = 0; i < n; i++)
		taken += rules[i].family == ACL_FAMILY_ANY || rules[i].family == l->family;
	*ctx = NULL;
	if (taken == 0)
		return 0;
	char name[RTE_ACL_NAMESIZE];
	snprintf(name, sizeof(name), "dps_acl%u_%u", l->family,
		 atomic_fetch_add(&acl_set_serial, 1));
	struct rte_acl_param param = {
		.name = name, .socket_id = (int)rte_socket_id(),
		.rule_size = (uint32_t)rule_size, .max_rule_num = taken,
	};
	uint8_t *rte_rules = malloc(taken * rule_size);
	*ctx = rte_acl_create(&param);
	if (rte_rules == NULL || *ctx == NULL) {
		free(rte_rules);
		return -ENOMEM;
	}
	/* The first in order gets the highest rte_acl priority. */
	uint32_t k = 0;
	for (uint32_t rank = 0; rank < n; rank++) {
		const struct acl_rule *r = &rules[order[rank]];
		if (r->family == ACL_FAMILY_ANY || r->family == l->family)
			rule_to_rte(r, l->addr_words, order[rank], (int32_t)(n - rank),
				    (struct rte_acl_rule *)(rte_rules + k++ * rule_size));
	}
	int rc = rte_acl_add_rules(*ctx, (const struct rte_acl_rule *)rte_rules, taken);
	if (rc == 0) {
		struct rte_acl_config cfg = {.num_categories = ACL_CATEGORIES,
					      .num_fields = l->nb_fields};
		memcpy(cfg.defs, l->defs, l->nb_fields * sizeof(*l->defs));
		rc = rte_acl_build(*ctx, &cfg);
	}
	free(rte_rules);
	return rc;
}

/* Both families' contexts. */
static int set_build_contexts(struct acl_set *set, const struct acl_rule *rules, uint32_t n,
			      char *err, size_t cap)
{
	uint32_t *order = malloc(n * sizeof(*order));
	int rc = -ENOMEM;
	if (order != NULL) {
		for (uint32_t i = 0; i < n; i++)
			order[i] = i;
		qsort_r(order, n, sizeof(*order), acl_rule_index_order, (void *)rules);
		rc = set_build_ctx(&set->ctx, &layout4, rules, order, n);
		if (rc == 0)
			rc = set_build_ctx(&set->ctx6, &layout6, rules, order, n);
	}
	if (rc != 0)
		snprintf(err, cap, "cannot build the ACL of %u rules: %s", n, strerror(-rc));
	free(order);
	return rc;
}

struct acl_set *acl_set_build(const struct acl_rule *rules, uint32_t n, unsigned nb_workers,
			      char *err, size_t cap)
{
	struct acl_set *set = calloc(1, sizeof(*set));
	if (set == NULL)
		goto nomem;
	set->nb_rules = n;
	set->nb_workers = nb_workers;
	set->stride = RTE_ALIGN_CEIL((size_t)n, RTE_CACHE_LINE_SIZE / sizeof(uint64_t));
	set->ids = malloc(n * sizeof(*set->ids));
	set->deny = malloc(n);
	set->hits = aligned_alloc(RTE_CACHE_LINE_SIZE, nb_workers * set->stride * sizeof(uint64_t));
	set->bursts = aligned_alloc(RTE_CACHE_LINE_SIZE, nb_workers * sizeof(*set->bursts));
	if (set->ids == NULL || set->deny == NULL || set->hits == NULL || set->bursts == NULL)
		goto nomem;
	memset(set->bursts, 0, nb_workers * sizeof(*set->bursts));
	memset(set->hits, 0, nb_workers * set->stride * sizeof(uint64_t));
	for (uint32_t i = 0; i < n; i++) {
		set->ids[i] = rules[i].id;
		set->deny[i] = rules[i].deny;
	}
	if (set_build_contexts(set, rules, n, err, cap) != 0) {
		acl_set_free(set);
		return NULL;
	}
	return set;
nomem:
	snprintf(err, cap, "out of memory for an ACL of %u rules", n);
	acl_set_free(set);
	return NULL;
}

void acl_set_free(struct acl_set *set)
{
	if (set == NULL)
		return;
	rte_acl_free(set->ctx);
	rte_acl_free(set->ctx6);
	free(set->ids);
	free(set->deny);
	free(set->hits);
	free(set->bursts);
	free(set);
}

static void ctx_classify(const struct rte_acl_ctx *ctx, const uint8_t **keys, uint32_t *slots,
			 uint32_t n)
{
	if (ctx == NULL) {
		/* No rule of that family. */
		for (uint32_t i = 0; i < n * ACL_CATEGORIES; i++)
			slots[i] = ACL_NO_MATCH;
		return;
	}
	rte_acl_classify(ctx, keys, slots, n, ACL_CATEGORIES);
	for (uint32_t i = 0; i < n * ACL_CATEGORIES; i++)
		slots[i] -= 1;       /* userdata is slot + 1: no match (0) becomes ACL_NO_MATCH */
}

void acl_set_classify(const struct acl_set *set, const struct acl_key *const *keys,
		      uint32_t *slots, uint32_t n)
{
	ctx_classify(set->ctx, (const uint8_t **)keys, slots, n);
}

void acl_set_classify6(const struct acl_set *set, const struct acl_key6 *key, uint32_t *slots)
{
	const uint8_t *k = (const uint8_t *)key;
	ctx_classify(set->ctx6, &k, slots, 1);
}

uint64_t acl_set_hits(const struct acl_set *set, uint32_t slot)
{
	uint64_t sum = 0;
	for (unsigned w = 0; w < set->nb_workers; w++)
		sum += set->hits[w * set->stride + slot];
	return sum;
}
