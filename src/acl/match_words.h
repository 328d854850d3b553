/* The match words the ACL and flow rule grammars share (`acl add`, `flow add`): numbers,
 * protocols, IPv4 and IPv6 prefixes and port ranges, read and written back the same way by both, so
 * an operator writes one spelling everywhere. Pure C, no DPDK. */
#ifndef DPS_ACL_MATCH_WORDS_H
#define DPS_ACL_MATCH_WORDS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "wire/ipv6.h"

#define MATCH_PROTO_ICMP 1
#define MATCH_PROTO_TCP 6
#define MATCH_PROTO_UDP 17
#define MATCH_PROTO_ICMPV6 58

/* A decimal number from 0 to max, nothing else (no sign, no blanks, no hex). */
bool match_num(const char *s, unsigned long max, unsigned long *out);

/* "tcp", "udp", "icmp", "icmpv6" or a number from 0 to 255. Returns 0, or -1 with a message
 * naming key in err. */
int match_proto(const char *key, const char *val, int16_t *proto, char *err, size_t cap);

/* An IPv4 address (a /32) or ADDR/LEN, host bits clear (as `ip route`). Returns 0, or -1
 * with a message in err. */
int match_prefix(const char *key, const char *val, uint32_t *addr, uint8_t *len, char *err,
		 size_t cap);

/* An IPv4 or IPv6 address or prefix (IPv6 when it has a colon), host bits clear: *family
 * becomes 4 (into *addr4) or 6 (into *addr6). Returns 0, or -1 with a message in err. */
int match_prefix_inet(const char *key, const char *val, uint8_t *family, uint32_t *addr4,
		      struct ip6_addr *addr6, uint8_t *len, char *err, size_t cap);

/* "P" or "A-B" with A <= B. Returns 0, or -1 with a message in err. */
int match_port_range(const char *key, const char *val, uint16_t *lo, uint16_t *hi, char *err,
		     size_t cap);

/* Appends printf output to buf[len..cap) without overrunning it; returns the new length
 * (which may pass cap: the text was cut). */
__attribute__((format(printf, 4, 5)))
size_t match_append(char *buf, size_t cap, size_t len, const char *fmt, ...);

/* Appends " proto NAME", " KEY A.B.C.D/LEN" or " KEY P[-P]" as the parsers read them;
 * nothing for the value that matches everything (proto < 0, len 0, 0-65535). */
size_t match_append_proto(char *buf, size_t cap, size_t len, int16_t proto);
size_t match_append_prefix(char *buf, size_t cap, size_t len, const char *key, uint32_t addr,
			   uint8_t plen);
size_t match_append_prefix6(char *buf, size_t cap, size_t len, const char *key,
			    const struct ip6_addr *addr, uint8_t plen);
size_t match_append_ports(char *buf, size_t cap, size_t len, const char *key, uint16_t lo,
			  uint16_t hi);

#endif
