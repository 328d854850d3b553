/* Multicast Listener Discovery: queries (RFC 2710 §3 for version 1, RFC 3810 §5.1 for
 * version 2) parsed, and the reports and done messages a listener sends built. */
#ifndef DPS_WIRE_MLD_H
#define DPS_WIRE_MLD_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "ipv6.h"
#include "status.h"

#define MLD1_LEN 24          /* every MLDv1 message; a query of this length is version 1 */
#define MLD2_QUERY_MIN_LEN 28
#define MLD2_RECORD_LEN 20   /* a group record without sources or auxiliary data */

/* MLDv2 record types (RFC 3810 §5.2.12). */
#define MLD2_MODE_IS_EXCLUDE 2   /* current state: listening to every source */
#define MLD2_CHANGE_TO_INCLUDE 3 /* with no sources: leaving the group */
#define MLD2_CHANGE_TO_EXCLUDE 4 /* with no sources: joining the group */

struct mld_query {
	uint8_t version;         /* 1 or 2 */
	struct ip6_addr group;   /* :: for a general query */
	uint32_t max_resp_ms;    /* Maximum Response Delay (v2: the decoded code, §5.1.3) */
};

/* Validates the query msg[0..len) (an ICMPv6 message of type 130 whose checksum the caller
 * verified) that came in ip: a link-local source (RFC 3810 §5.1.14: queries from elsewhere
 * are ignored), a length of 24 (v1) or at least 28 with its sources inside (v2)
 * (TRUNCATED), a multicast or unspecified group, sent to the group it asks about or to
 * all-nodes (BAD_FIELD). */
enum wire_status mld_query_parse(const uint8_t *msg, size_t len, const struct ip6_repr *ip,
				 struct mld_query *out);

/* An MLDv2 report (type 143, checksum zero) of n records of type rtype without sources.
 * Returns its length, or 0 when cap is too small. */
size_t mld2_build_report(uint8_t *buf, size_t cap, uint8_t rtype, const struct ip6_addr *groups,
			 unsigned n);
/* An MLDv1 message (type 131 report or 132 done) about group. Returns 24, or 0. */
size_t mld1_build(uint8_t *buf, size_t cap, uint8_t type, const struct ip6_addr *group);

/* The 8-byte Hop-by-Hop header with the Router Alert option (RFC 2711, value 0: MLD) that
 * every MLD message carries (RFC 3810 §5, RFC 2710 §3), next header ICMPv6. */
#define MLD_HBH_LEN 8
void mld_build_hbh(uint8_t buf[MLD_HBH_LEN]);

#endif
