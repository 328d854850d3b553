#include "flow_rule.h"

#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "acl/match_words.h"

static const char *const action_names[FLOW_ACT_COUNT] = {
#define FLOW_ACTION_NAME(e, name) name,
	FLOW_ACTIONS(FLOW_ACTION_NAME)
#undef FLOW_ACTION_NAME
};

const char *flow_action_name(enum flow_action a)
{
	return (unsigned)a < FLOW_ACT_COUNT ? action_names[a] : "?";
}

/* EtherTypes by name (IEEE 802 numbers; the IANA list). */
static const struct {
	const char *name;
	uint16_t type;
} ethertypes[] = {{"ipv4", 0x0800}, {"arp", 0x0806}, {"ipv6", 0x86dd}};

struct parse {
	struct flow_rule *r;
	const struct flow_parse_env *env;
	char *err;
	size_t cap;
	bool seen_ports, seen_ip, seen_ethertype;
	uint8_t prefix_family;      /* 4 or 6 once a prefix was read, else 0 */
	const char *prefix_word;
};

__attribute__((format(printf, 2, 3))) static int fail(struct parse *p, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(p->err, p->cap, fmt, ap);
	va_end(ap);
	return -1;
}

static int parse_prio(struct parse *p, const char *key, const char *val)
{
	unsigned long v;
	if (!match_num(val, FLOW_PRIO_MAX, &v))
		return fail(p, "%s must be a number from 0 to %u, not '%s'", key, FLOW_PRIO_MAX,
			    val);
	p->r->prio = (uint16_t)v;
	return 0;
}

static int parse_dev(struct parse *p, const char *key, const char *val)
{
	int port = p->env->port_by_name(p->env->ctx, val);
	if (port < 0)
		return fail(p, "%s '%s': no port of that name", key, val);
	p->r->m.dev = port;
	return 0;
}

/* A name from ethertypes[], or a number: decimal, or 0x and hex as Ethernet documents write
 * them. Values below 0x0600 are frame lengths, not types (IEEE 802.3 §3.2.6). */
static int parse_ethertype(struct parse *p, const char *key, const char *val)
{
	for (size_t i = 0; i < sizeof(ethertypes) / sizeof(ethertypes[0]); i++)
		if (strcmp(val, ethertypes[i].name) == 0) {
			p->r->m.ethertype = ethertypes[i].type;
			p->seen_ethertype = true;
			return 0;
		}
	unsigned long v = 0;
	bool ok;
	if (val[0] == '0' && (val[1] == 'x' || val[1] == 'X')) {
		size_t n = strlen(val + 2);
		ok = n >= 1 && n <= 4 && strspn(val + 2, "0123456789abcdefABCDEF") == n;
		for (size_t i = 0; ok && i < n; i++) {
			char c = val[2 + i];
			v = v * 16 + (unsigned long)(c <= '9' ? c - '0' : (c | 0x20) - 'a' + 10);
		}
	} else {
		ok = match_num(val, 0xffff, &v);
	}
	if (!ok || v < 0x0600)
		return fail(p, "%s must be ipv4, arp, ipv6 or a type from 0x0600 to 0xffff, not '%s'",
			    key, val);
	p->r->m.ethertype = (int32_t)v;
	p->seen_ethertype = true;
	return 0;
}

static int parse_proto(struct parse *p, const char *key, const char *val)
{
	p->seen_ip = true;
	return match_proto(key, val, &p->r->m.proto, p->err, p->cap);
}

/* An IPv4 or IPv6 prefix; both prefixes of a rule are of one family. */
static int parse_prefix(struct parse *p, const char *key, const char *val, uint32_t *addr4,
			struct ip6_addr *addr6, uint8_t *len)
{
	uint8_t family;
	p->seen_ip = true;
	if (match_prefix_inet(key, val, &family, addr4, addr6, len, p->err, p->cap) != 0)
		return -1;
	if (p->prefix_family != 0 && p->prefix_family != family)
		return fail(p, "%s '%s' is IPv%u but %s is IPv%u: a rule matches one family", key,
			    val, family, p->prefix_word, p->prefix_family);
	p->prefix_family = family;
	p->prefix_word = key;
	return 0;
}

static int parse_src(struct parse *p, const char *key, const char *val)
{
	return parse_prefix(p, key, val, &p->r->m.src, &p->r->m.src6, &p->r->m.src_len);
}

static int parse_dst(struct parse *p, const char *key, const char *val)
{
	return parse_prefix(p, key, val, &p->r->m.dst, &p->r->m.dst6, &p->r->m.dst_len);
}

/* The EtherType the IP matches imply: the prefixes' family, else the one given, else IPv4
 * (the grammar before IPv6 came). */
static int settle_ip_ethertype(struct parse *p)
{
	struct flow_match *m = &p->r->m;
	int32_t want = p->prefix_family == 6 ? FLOW_ETHERTYPE_IPV6
		       : p->prefix_family == 4 ? FLOW_ETHERTYPE_IPV4
		       : p->seen_ethertype && m->ethertype == FLOW_ETHERTYPE_IPV6
			       ? FLOW_ETHERTYPE_IPV6
			       : FLOW_ETHERTYPE_IPV4;
	if (p->seen_ethertype && m->ethertype != want)
		return fail(p, "proto, src and dst match %s: they need ethertype %s (or none)",
			    want == FLOW_ETHERTYPE_IPV6 ? "IPv6" : "IPv4",
			    want == FLOW_ETHERTYPE_IPV6 ? "ipv6" : "ipv4");
	m->ethertype = want;
	return 0;
}

static int parse_sport(struct parse *p, const char *key, const char *val)
{
	p->seen_ports = true;
	return match_port_range(key, val, &p->r->m.sport_lo, &p->r->m.sport_hi, p->err, p->cap);
}

static int parse_dport(struct parse *p, const char *key, const char *val)
{
	p->seen_ports = true;
	return match_port_range(key, val, &p->r->m.dport_lo, &p->r->m.dport_hi, p->err, p->cap);
}

static const struct {
	const char *name;
	int (*parse)(struct parse *p, const char *key, const char *val);
} keywords[] = {
	{"prio", parse_prio}, {"dev", parse_dev}, {"ethertype", parse_ethertype},
	{"proto", parse_proto}, {"src", parse_src}, {"dst", parse_dst},
	{"sport", parse_sport}, {"dport", parse_dport},
};
#define NB_KEYWORDS (sizeof(keywords) / sizeof(keywords[0]))

/* The action at argv[0] and its argument: returns the words it took, or -1. */
static int parse_action(struct parse *p, int argc, char **argv)
{
	if (argc == 0)
		return fail(p, "an action expected: drop, steer WORKER, kernel or cluster NAME");
	enum flow_action a = 0;
	while (a < FLOW_ACT_COUNT && strcmp(argv[0], action_names[a]) != 0)
		a++;
	if (a == FLOW_ACT_COUNT)
		return fail(p, "'%s': an action expected: drop, steer WORKER, kernel or cluster "
			    "NAME", argv[0]);
	p->r->action = a;
	if (a != FLOW_ACT_STEER && a != FLOW_ACT_CLUSTER)
		return 1;
	if (argc < 2)
		return fail(p, "'%s' needs a %s", argv[0], a == FLOW_ACT_STEER ? "worker index"
									 : "cluster name");
	if (a == FLOW_ACT_CLUSTER) {
		size_t n = strlen(argv[1]);
		if (n == 0 || n >= FLOW_NAME_LEN)
			return fail(p, "cluster name '%s' must have 1 to %d characters", argv[1],
				    FLOW_NAME_LEN - 1);
		memcpy(p->r->cluster, argv[1], n + 1);
		return 2;
	}
	unsigned long w;
	unsigned nb = p->env->nb_workers;
	if (!match_num(argv[1], nb > 0 ? nb - 1 : 0, &w))
		return fail(p, "steer '%s': the worker must be a number from 0 to %u (lcore show "
			    "lists them)", argv[1], nb > 0 ? nb - 1 : 0);
	p->r->worker = (uint16_t)w;
	return 2;
}

int flow_rule_parse(int argc, char **argv, const struct flow_parse_env *env,
		    struct flow_rule *out, char *err, size_t cap)
{
	*out = (struct flow_rule){
		.prio = FLOW_PRIO_DEFAULT,
		.m = {.dev = FLOW_ANY, .ethertype = FLOW_ANY, .proto = FLOW_ANY, .sport_hi = 65535,
		      .dport_hi = 65535},
	};
	struct parse p = {.r = out, .env = env, .err = err, .cap = cap};
	int i = 0;
	uint32_t seen = 0;
	if (argc >= 2 && strcmp(argv[0], "prio") == 0) {
		if (parse_prio(&p, argv[0], argv[1]) != 0)
			return -1;
		seen |= 1u << 0;     /* keywords[0] */
		i = 2;
	}
	int took = parse_action(&p, argc - i, argv + i);
	if (took < 0)
		return -1;
	for (i += took; i < argc; i += 2) {
		size_t k = 0;
		while (k < NB_KEYWORDS && strcmp(argv[i], keywords[k].name) != 0)
			k++;
		if (k == NB_KEYWORDS)
			return fail(&p, "unknown match '%s' (dev, ethertype, proto, src, dst, sport, "
				    "dport or prio)", argv[i]);
		if (seen & (1u << k))
			return fail(&p, "'%s' given twice", argv[i]);
		seen |= 1u << k;
		if (i + 1 >= argc)
			return fail(&p, "'%s' needs a value", argv[i]);
		if (keywords[k].parse(&p, argv[i], argv[i + 1]) != 0)
			return -1;
	}
	if (p.seen_ports && out->m.proto != MATCH_PROTO_TCP && out->m.proto != MATCH_PROTO_UDP)
		return fail(&p, "sport and dport need proto tcp or udp");
	if (p.seen_ip)
		return settle_ip_ethertype(&p);
	return 0;
}

int flow_rule_order(const struct flow_rule *a, const struct flow_rule *b)
{
	if (a->prio != b->prio)
		return a->prio < b->prio ? -1 : 1;
	return a->id < b->id ? -1 : a->id > b->id;
}

char *flow_match_format(const struct flow_match *m, char *buf, size_t cap)
{
	buf[0] = '\0';
	size_t len = 0;
	bool ip = m->proto != FLOW_ANY || m->src_len != 0 || m->dst_len != 0;
	bool ip6 = m->ethertype == FLOW_ETHERTYPE_IPV6;
	/* IPv4 is implied by IP matches; IPv6 by an IPv6 prefix, or said. */
	if (m->ethertype != FLOW_ANY && (!ip || (ip6 && m->src_len == 0 && m->dst_len == 0))) {
		size_t i = 0;
		while (i < sizeof(ethertypes) / sizeof(ethertypes[0]) &&
		       ethertypes[i].type != m->ethertype)
			i++;
		len = i < sizeof(ethertypes) / sizeof(ethertypes[0])
			      ? match_append(buf, cap, len, " ethertype %s", ethertypes[i].name)
			      : match_append(buf, cap, len, " ethertype 0x%04x",
					     (unsigned)m->ethertype);
	}
	len = match_append_proto(buf, cap, len, m->proto);
	if (ip6) {
		len = match_append_prefix6(buf, cap, len, "src", &m->src6, m->src_len);
		len = match_append_prefix6(buf, cap, len, "dst", &m->dst6, m->dst_len);
	} else {
		len = match_append_prefix(buf, cap, len, "src", m->src, m->src_len);
		len = match_append_prefix(buf, cap, len, "dst", m->dst, m->dst_len);
	}
	len = match_append_ports(buf, cap, len, "sport", m->sport_lo, m->sport_hi);
	len = match_append_ports(buf, cap, len, "dport", m->dport_lo, m->dport_hi);
	if (len == 0)
		match_append(buf, cap, len, " any");
	memmove(buf, buf + 1, strlen(buf)); /* the leading blank */
	return buf;
}

char *flow_action_format(const struct flow_rule *r, char *buf, size_t cap)
{
	if (r->action == FLOW_ACT_STEER)
		snprintf(buf, cap, "steer %u", r->worker);
	else if (r->action == FLOW_ACT_CLUSTER)
		snprintf(buf, cap, "cluster %s", r->cluster);
	else
		snprintf(buf, cap, "%s", flow_action_name(r->action));
	return buf;
}
