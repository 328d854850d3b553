#include "acl_set.h"

#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <rte_acl.h>
#include <rte_common.h>
#include <rte_lcore.h>

/* The fields of struct acl_key as rte_acl sees them (one definition per field; fields that
 * share a 4-byte word share an input index). */
enum acl_field { F_PROTO, F_SRC, F_DST, F_SPORT, F_DPORT, F_FLAGS, F_DEV, F_L4, F_PAD,
		 F_COUNT };

RTE_ACL_RULE_DEF(acl_rte_rule, F_COUNT);

_Static_assert(ACL_CATEGORIES % RTE_ACL_RESULTS_MULTIPLIER == 0 &&
	       ACL_CATEGORIES <= RTE_ACL_MAX_CATEGORIES, "rte_acl_classify's categories");
_Static_assert(ACL_HOOK_ALL < 1u << ACL_CATEGORIES, "a category per hook");

#define FIELD(t, f, idx, in) \
	{.type = RTE_ACL_FIELD_TYPE_##t, .size = sizeof(((struct acl_key *)0)->f), \
	 .field_index = (idx), .input_index = (in), .offset = offsetof(struct acl_key, f)}

static const struct rte_acl_field_def acl_fields[F_COUNT] = {
	FIELD(BITMASK, proto, F_PROTO, 0),
	FIELD(MASK, src, F_SRC, 1),
	FIELD(MASK, dst, F_DST, 2),
	FIELD(RANGE, sport, F_SPORT, 3),
	FIELD(RANGE, dport, F_DPORT, 3),
	FIELD(BITMASK, tcp_flags, F_FLAGS, 4),
	FIELD(BITMASK, dev, F_DEV, 4),
	FIELD(BITMASK, l4, F_L4, 4),
	/* Always 0 and matched by every rule: rte_acl's trie walks whole 4-byte input words,
	 * and a word only three fields wide made it match the wrong rules (measured). */
	FIELD(BITMASK, unused2, F_PAD, 4),
};

/* rte_acl_create returns the existing context when the name is taken: every set gets a
 * name of its own. */
static atomic_uint acl_set_serial;

/* For qsort_r over indexes into rules (arg). */
int acl_rule_index_order(const void *a, const void *b, void *arg)
{
	const struct acl_rule *rules = arg;
	return acl_rule_order(&rules[*(const uint32_t *)a], &rules[*(const uint32_t *)b]);
}

static void rule_to_rte(const struct acl_rule *r, uint32_t slot, int32_t priority,
			struct acl_rte_rule *out)
{
	memset(out, 0, sizeof(*out));
	out->data.category_mask = r->hooks;  /* hook 1 << c is category c */
	out->data.priority = priority;
	out->data.userdata = slot + 1;       /* 0 is rte_acl's "no match" */
	if (r->proto != ACL_PROTO_ANY) {
		out->field[F_PROTO].value.u8 = (uint8_t)r->proto;
		out->field[F_PROTO].mask_range.u8 = 0xff;
	}
	out->field[F_SRC].value.u32 = r->src;
	out->field[F_SRC].mask_range.u32 = r->src_len;
	out->field[F_DST].value.u32 = r->dst;
	out->field[F_DST].mask_range.u32 = r->dst_len;
	out->field[F_SPORT].value.u16 = r->sport_lo;
	out->field[F_SPORT].mask_range.u16 = r->sport_hi;
	out->field[F_DPORT].value.u16 = r->dport_lo;
	out->field[F_DPORT].mask_range.u16 = r->dport_hi;
	out->field[F_FLAGS].value.u8 = r->flags_set;
	out->field[F_FLAGS].mask_range.u8 = r->flags_mask;
	if (r->dev != ACL_DEV_ANY) {
		out->field[F_DEV].value.u8 = (uint8_t)r->dev;
		out->field[F_DEV].mask_range.u8 = 0xff;
	}
	bool needs_l4 = r->flags_mask != 0 || r->sport_lo != 0 || r->sport_hi != 65535 ||
			r->dport_lo != 0 || r->dport_hi != 65535;
	out->field[F_L4].value.u8 = needs_l4;
	out->field[F_L4].mask_range.u8 = needs_l4;
}

static int set_build_ctx(struct acl_set *set, const struct acl_rule *rules, uint32_t n,
			 char *err, size_t cap)
{
	char name[RTE_ACL_NAMESIZE];
	snprintf(name, sizeof(name), "dps_acl_%u", atomic_fetch_add(&acl_set_serial, 1));
	struct rte_acl_param param = {
		.name = name, .socket_id = (int)rte_socket_id(),
		.rule_size = RTE_ACL_RULE_SZ(F_COUNT), .max_rule_num = n,
	};
	uint32_t *order = malloc(n * sizeof(*order));
	struct acl_rte_rule *rte_rules = malloc(n * sizeof(*rte_rules));
	set->ctx = rte_acl_create(&param);
	int rc = -ENOMEM;
	if (order == NULL || rte_rules == NULL || set->ctx == NULL)
		goto out;
	for (uint32_t i = 0; i < n; i++)
		order[i] = i;
	qsort_r(order, n, sizeof(*order), acl_rule_index_order, (void *)rules);
	/* The first in order gets the highest rte_acl priority. */
	for (uint32_t rank = 0; rank < n; rank++)
		rule_to_rte(&rules[order[rank]], order[rank], (int32_t)(n - rank), &rte_rules[rank]);
	rc = rte_acl_add_rules(set->ctx, (const struct rte_acl_rule *)rte_rules, n);
	if (rc == 0) {
		struct rte_acl_config cfg = {.num_categories = ACL_CATEGORIES,
					      .num_fields = F_COUNT};
		memcpy(cfg.defs, acl_fields, sizeof(acl_fields));
		rc = rte_acl_build(set->ctx, &cfg);
	}
out:
	if (rc != 0)
		snprintf(err, cap, "cannot build the ACL of %u rules: %s", n, strerror(-rc));
	free(order);
	free(rte_rules);
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
	if (set_build_ctx(set, rules, n, err, cap) != 0) {
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
	free(set->ids);
	free(set->deny);
	free(set->hits);
	free(set->bursts);
	free(set);
}

void acl_set_classify(const struct acl_set *set, const struct acl_key *const *keys,
		      uint32_t *slots, uint32_t n)
{
	rte_acl_classify(set->ctx, (const uint8_t **)keys, slots, n, ACL_CATEGORIES);
	for (uint32_t i = 0; i < n * ACL_CATEGORIES; i++)
		slots[i] -= 1;       /* userdata is slot + 1: no match (0) becomes ACL_NO_MATCH */
}

uint64_t acl_set_hits(const struct acl_set *set, uint32_t slot)
{
	uint64_t sum = 0;
	for (unsigned w = 0; w < set->nb_workers; w++)
		sum += set->hits[w * set->stride + slot];
	return sum;
}
