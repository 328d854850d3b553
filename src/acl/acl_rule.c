#include "acl_rule.h"

#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "match_words.h"

#define PROTO_TCP MATCH_PROTO_TCP
#define PROTO_UDP MATCH_PROTO_UDP

/* One name per TCP flag bit (RFC 9293 §3.1, RFC 3168 for ECE and CWR), bit i = 1 << i. */
static const char *const tcp_flag_names[8] = {"FIN", "SYN", "RST", "PSH", "ACK", "URG", "ECE",
					      "CWR"};
static const char *const hook_names[] = {"input", "forward"};

struct rule_parser {
	struct acl_rule *r;
	acl_port_lookup *port_by_name;
	void *ctx;
	char *err;
	size_t cap;
	bool seen_ports, seen_flags, seen_proto;
	const char *family_word;  /* the word that fixed the rule's family, for the message
				   * when another disagrees */
};

__attribute__((format(printf, 2, 3))) static int parse_error(struct rule_parser *p,
							     const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(p->err, p->cap, fmt, ap);
	va_end(ap);
	return -1;
}

static int parse_prio(struct rule_parser *p, const char *key, const char *val)
{
	unsigned long v;
	if (!match_num(val, ACL_PRIO_MAX, &v))
		return parse_error(p, "%s must be a number from 0 to %u, not '%s'", key,
				   ACL_PRIO_MAX, val);
	p->r->prio = (uint16_t)v;
	return 0;
}

static int parse_proto(struct rule_parser *p, const char *key, const char *val)
{
	p->seen_proto = true;
	return match_proto(key, val, &p->r->proto, p->err, p->cap);
}

static const char *family_name(uint8_t family)
{
	return family == ACL_FAMILY_IP6 ? "IPv6" : "IPv4";
}

/* A rule judges one family or both: every word that names one must name the same. */
static int set_family(struct rule_parser *p, const char *key, const char *val, uint8_t family)
{
	if (p->r->family != ACL_FAMILY_ANY && p->r->family != family)
		return parse_error(p, "%s '%s' is %s but %s made the rule %s: a rule judges one "
				   "family", key, val, family_name(family), p->family_word,
				   family_name(p->r->family));
	p->r->family = family;
	p->family_word = key;
	return 0;
}

static int parse_family(struct rule_parser *p, const char *key, const char *val)
{
	if (strcmp(val, "ipv4") == 0)
		return set_family(p, key, val, ACL_FAMILY_IP4);
	if (strcmp(val, "ipv6") == 0)
		return set_family(p, key, val, ACL_FAMILY_IP6);
	return parse_error(p, "%s must be ipv4 or ipv6, not '%s'", key, val);
}

static int parse_address(struct rule_parser *p, const char *key, const char *val,
			 uint32_t *addr4, struct ip6_addr *addr6, uint8_t *len)
{
	uint8_t family;
	if (match_prefix_inet(key, val, &family, addr4, addr6, len, p->err, p->cap) != 0)
		return -1;
	return set_family(p, key, val, family == 6 ? ACL_FAMILY_IP6 : ACL_FAMILY_IP4);
}

static int parse_src(struct rule_parser *p, const char *key, const char *val)
{
	return parse_address(p, key, val, &p->r->src, &p->r->src6, &p->r->src_len);
}

static int parse_dst(struct rule_parser *p, const char *key, const char *val)
{
	return parse_address(p, key, val, &p->r->dst, &p->r->dst6, &p->r->dst_len);
}

static int parse_sport(struct rule_parser *p, const char *key, const char *val)
{
	p->seen_ports = true;
	return match_port_range(key, val, &p->r->sport_lo, &p->r->sport_hi, p->err, p->cap);
}

static int parse_dport(struct rule_parser *p, const char *key, const char *val)
{
	p->seen_ports = true;
	return match_port_range(key, val, &p->r->dport_lo, &p->r->dport_hi, p->err, p->cap);
}

/* A comma-separated list of names[i] into bits 1 << i; false at an unknown or empty name. */
static bool parse_name_bits(const char *list, const char *const *names, unsigned nb_names,
			    bool nocase, uint8_t *bits)
{
	*bits = 0;
	const char *w = list;
	for (;;) {
		size_t n = strcspn(w, ",");
		unsigned i = 0;
		for (; i < nb_names; i++)
			if (strlen(names[i]) == n &&
			    (nocase ? strncasecmp(w, names[i], n) : strncmp(w, names[i], n)) == 0)
				break;
		if (i == nb_names)
			return false;
		*bits |= (uint8_t)(1u << i);
		if (w[n] == '\0')
			return true;
		w += n + 1;
	}
}

/* "SET[/MASK]": the flags of SET must be set and the others of MASK clear, as iptables'
 * --tcp-flags MASK SET; without MASK only SET is examined. */
static int parse_flags(struct rule_parser *p, const char *key, const char *val)
{
	char set[64];
	const char *slash = strchr(val, '/');
	size_t n = slash != NULL ? (size_t)(slash - val) : strlen(val);
	uint8_t mask;
	if (n >= sizeof(set))
		goto bad;
	memcpy(set, val, n);
	set[n] = '\0';
	if (!parse_name_bits(set, tcp_flag_names, 8, true, &p->r->flags_set))
		goto bad;
	mask = p->r->flags_set;
	if (slash != NULL && !parse_name_bits(slash + 1, tcp_flag_names, 8, true, &mask))
		goto bad;
	if ((p->r->flags_set & ~mask) != 0)
		return parse_error(p, "%s '%s': every flag of SET must be in MASK", key, val);
	p->r->flags_mask = mask;
	p->seen_flags = true;
	return 0;
bad:
	return parse_error(p, "%s '%s' is not FLAGS[/MASK] with FLAGS and MASK lists of "
			   "FIN,SYN,RST,PSH,ACK,URG,ECE,CWR", key, val);
}

static int parse_dev(struct rule_parser *p, const char *key, const char *val)
{
	int port = p->port_by_name(p->ctx, val);
	if (port < 0)
		return parse_error(p, "%s '%s': no port of that name", key, val);
	p->r->dev = (int16_t)port;
	return 0;
}

static int parse_hook(struct rule_parser *p, const char *key, const char *val)
{
	if (!parse_name_bits(val, hook_names, 2, false, &p->r->hooks))
		return parse_error(p, "%s '%s' is not input, forward or input,forward", key, val);
	return 0;
}

struct rule_keyword {
	const char *name;
	int (*parse)(struct rule_parser *p, const char *key, const char *val);
};

/* prio first: it may also come before the action, as `ip rule add pref N ...` reads. */
static const struct rule_keyword keywords[] = {
	{"prio", parse_prio},   {"proto", parse_proto}, {"src", parse_src},
	{"dst", parse_dst},     {"sport", parse_sport}, {"dport", parse_dport},
	{"flags", parse_flags}, {"dev", parse_dev},     {"hook", parse_hook},
	{"family", parse_family},
};

int acl_rule_parse(int argc, char **argv, acl_port_lookup *port_by_name, void *ctx,
		   struct acl_rule *out, char *err, size_t cap)
{
	*out = (struct acl_rule){
		.prio = ACL_PRIO_DEFAULT, .proto = ACL_PROTO_ANY, .sport_hi = 65535,
		.dport_hi = 65535, .dev = ACL_DEV_ANY, .hooks = ACL_HOOK_ALL,
	};
	struct rule_parser p = {.r = out, .port_by_name = port_by_name, .ctx = ctx, .err = err,
				.cap = cap};
	int i = 0;
	uint32_t seen = 0;
	if (i + 1 < argc && strcmp(argv[i], "prio") == 0) {
		if (parse_prio(&p, argv[i], argv[i + 1]) != 0)
			return -1;
		seen |= 1u << 0;     /* keywords[0] */
		i += 2;
	}
	if (i >= argc)
		return parse_error(&p, "permit or deny expected");
	if (strcmp(argv[i], "permit") == 0)
		out->deny = false;
	else if (strcmp(argv[i], "deny") == 0)
		out->deny = true;
	else
		return parse_error(&p, "'%s': permit or deny expected", argv[i]);
	for (i++; i < argc; i += 2) {
		size_t k = 0;
		while (k < sizeof(keywords) / sizeof(keywords[0]) &&
		       strcmp(argv[i], keywords[k].name) != 0)
			k++;
		if (k == sizeof(keywords) / sizeof(keywords[0]))
			return parse_error(&p, "unknown match '%s' (family, proto, src, dst, "
					   "sport, dport, flags, dev, hook or prio)", argv[i]);
		if (seen & (1u << k))
			return parse_error(&p, "'%s' given twice", argv[i]);
		seen |= 1u << k;
		if (i + 1 >= argc)
			return parse_error(&p, "'%s' needs a value", argv[i]);
		if (keywords[k].parse(&p, argv[i], argv[i + 1]) != 0)
			return -1;
	}
	if (p.seen_ports && out->proto != PROTO_TCP && out->proto != PROTO_UDP)
		return parse_error(&p, "sport and dport need proto tcp or udp");
	if (p.seen_flags && out->proto != PROTO_TCP)
		return parse_error(&p, "flags need proto tcp");
	return 0;
}

int acl_rule_order(const struct acl_rule *a, const struct acl_rule *b)
{
	if (a->prio != b->prio)
		return a->prio < b->prio ? -1 : 1;
	return a->id < b->id ? -1 : a->id > b->id;
}

char *acl_hooks_format(uint8_t hooks, char *buf, size_t cap)
{
	size_t len = 0;
	buf[0] = '\0';
	for (unsigned i = 0; i < 2; i++)
		if (hooks & (1u << i))
			len += (size_t)snprintf(buf + len, len < cap ? cap - len : 0, "%s%s",
						len ? "," : "", hook_names[i]);
	return buf;
}

char *acl_tcp_flags_format(uint8_t flags, char *buf, size_t cap)
{
	size_t len = 0;
	buf[0] = '\0';
	for (unsigned i = 0; i < 8; i++)
		if (flags & (1u << i))
			len += (size_t)snprintf(buf + len, len < cap ? cap - len : 0, "%s%s",
						len ? "," : "", tcp_flag_names[i]);
	return buf;
}

char *acl_rule_match_format(const struct acl_rule *r, char *buf, size_t cap)
{
	char f1[40], f2[40];
	buf[0] = '\0';
	size_t len = 0;
	if (r->family != ACL_FAMILY_ANY && r->src_len == 0 && r->dst_len == 0)
		len = match_append(buf, cap, len, " family %s",
				   r->family == ACL_FAMILY_IP6 ? "ipv6" : "ipv4");
	len = match_append_proto(buf, cap, len, r->proto);
	if (r->family == ACL_FAMILY_IP6) {
		len = match_append_prefix6(buf, cap, len, "src", &r->src6, r->src_len);
		len = match_append_prefix6(buf, cap, len, "dst", &r->dst6, r->dst_len);
	} else {
		len = match_append_prefix(buf, cap, len, "src", r->src, r->src_len);
		len = match_append_prefix(buf, cap, len, "dst", r->dst, r->dst_len);
	}
	len = match_append_ports(buf, cap, len, "sport", r->sport_lo, r->sport_hi);
	len = match_append_ports(buf, cap, len, "dport", r->dport_lo, r->dport_hi);
	if (r->flags_mask != 0) {
		acl_tcp_flags_format(r->flags_set, f1, sizeof(f1));
		if (r->flags_mask == r->flags_set)
			len = match_append(buf, cap, len, " flags %s", f1);
		else
			len = match_append(buf, cap, len, " flags %s/%s", f1,
					   acl_tcp_flags_format(r->flags_mask, f2, sizeof(f2)));
	}
	if (len == 0)
		match_append(buf, cap, len, " any");
	memmove(buf, buf + 1, strlen(buf)); /* the leading blank */
	return buf;
}
