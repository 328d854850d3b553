/* DHCP messages (RFC 2131 §2, the BOOTP layout of RFC 951) and the options a client uses
 * (RFC 2132), with option overload (RFC 2132 §9.3) and long options split over several
 * instances (RFC 3396). */
#ifndef DPS_WIRE_DHCP_H
#define DPS_WIRE_DHCP_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "eth.h"
#include "status.h"

#define DHCP_SERVER_PORT 67
#define DHCP_CLIENT_PORT 68

#define DHCP_OFF_OP 0
#define DHCP_OFF_HTYPE 1
#define DHCP_OFF_HLEN 2
#define DHCP_OFF_HOPS 3
#define DHCP_OFF_XID 4
#define DHCP_OFF_SECS 8
#define DHCP_OFF_FLAGS 10
#define DHCP_OFF_CIADDR 12
#define DHCP_OFF_YIADDR 16
#define DHCP_OFF_SIADDR 20
#define DHCP_OFF_GIADDR 24
#define DHCP_OFF_CHADDR 28
#define DHCP_OFF_SNAME 44
#define DHCP_OFF_FILE 108
#define DHCP_OFF_COOKIE 236
#define DHCP_OFF_OPTIONS 240

#define DHCP_CHADDR_LEN 16
#define DHCP_SNAME_LEN 64
#define DHCP_FILE_LEN 128
#define DHCP_MIN_LEN DHCP_OFF_OPTIONS   /* fixed fields and the magic cookie */
/* RFC 1542 §3.1.1: relays may drop BOOTP messages shorter than 300 bytes, so requests are
 * padded to it. */
#define DHCP_BOOTP_MIN_LEN 300
/* RFC 2131 §2: a client must accept 576-byte IP datagrams, so 548 bytes of DHCP; larger
 * ones only after announcing a larger size in option 57. */
#define DHCP_MIN_MAX_MSG 576

#define DHCP_MAGIC 0x63825363u          /* RFC 2131 §3 */
#define DHCP_OP_REQUEST 1               /* BOOTREQUEST */
#define DHCP_OP_REPLY 2                 /* BOOTREPLY */
#define DHCP_HTYPE_ETHER 1
#define DHCP_FLAG_BROADCAST 0x8000      /* RFC 2131 §2, figure 2 */
#define DHCP_LEASE_INFINITE 0xffffffffu /* RFC 2131 §3.3 */

/* Option codes (RFC 2132). */
#define DHCP_OPT_PAD 0
#define DHCP_OPT_SUBNET_MASK 1
#define DHCP_OPT_ROUTER 3
#define DHCP_OPT_DNS 6
#define DHCP_OPT_HOSTNAME 12
#define DHCP_OPT_DOMAIN 15
#define DHCP_OPT_MTU 26
#define DHCP_OPT_REQUESTED_IP 50
#define DHCP_OPT_LEASE_TIME 51
#define DHCP_OPT_OVERLOAD 52
#define DHCP_OPT_MSG_TYPE 53
#define DHCP_OPT_SERVER_ID 54
#define DHCP_OPT_PARAM_LIST 55
#define DHCP_OPT_MESSAGE 56
#define DHCP_OPT_MAX_MSG_SIZE 57
#define DHCP_OPT_T1 58
#define DHCP_OPT_T2 59
#define DHCP_OPT_CLIENT_ID 61
#define DHCP_OPT_END 255

/* Message types (option 53, RFC 2132 §9.6), with their names for logs and the CLI. */
#define DHCP_MSG_LIST(X) \
	X(DISCOVER, 1, "DHCPDISCOVER") \
	X(OFFER,    2, "DHCPOFFER") \
	X(REQUEST,  3, "DHCPREQUEST") \
	X(DECLINE,  4, "DHCPDECLINE") \
	X(ACK,      5, "DHCPACK") \
	X(NAK,      6, "DHCPNAK") \
	X(RELEASE,  7, "DHCPRELEASE") \
	X(INFORM,   8, "DHCPINFORM")

enum dhcp_msg_type {
#define DHCP_MSG_ENUM(name, value, text) DHCP_##name = value,
	DHCP_MSG_LIST(DHCP_MSG_ENUM)
#undef DHCP_MSG_ENUM
};

/* "DHCPOFFER" …; "unknown" for a value outside 1..8. */
const char *dhcp_msg_type_str(unsigned type);

#define DHCP_MAX_ROUTERS 4
#define DHCP_MAX_DNS 4
#define DHCP_MESSAGE_MAX 63     /* option 56 text kept (the rest is cut) */

/* Which options a parsed message carried (DHCP_HAS_*). */
#define DHCP_HAS_SUBNET_MASK 0x01
#define DHCP_HAS_LEASE_TIME 0x02
#define DHCP_HAS_T1 0x04
#define DHCP_HAS_T2 0x08
#define DHCP_HAS_MTU 0x10

/* A parsed message, host order. The parser fills every field (absent options as 0 and their
 * DHCP_HAS_* bit clear); the builder reads only the fields of a client's request (below). */
struct dhcp_repr {
	uint8_t op;                     /* DHCP_OP_* */
	uint32_t xid;
	uint16_t secs;
	uint16_t flags;                 /* DHCP_FLAG_BROADCAST */
	uint32_t ciaddr, yiaddr, siaddr, giaddr;
	bool chaddr_ether;              /* htype Ethernet with hlen 6: chaddr holds the MAC */
	struct eth_addr chaddr;
	uint8_t msg_type;               /* option 53: enum dhcp_msg_type */
	uint32_t server_id;             /* option 54; 0: absent */
	uint32_t requested_ip;          /* option 50; 0: absent */
	uint32_t subnet_mask;           /* option 1, contiguous */
	uint32_t lease_time, t1, t2;    /* options 51, 58, 59 in seconds */
	uint16_t mtu;                   /* option 26, >= 68 */
	uint16_t max_msg_size;          /* option 57, >= 576; 0: absent */
	uint8_t has;                    /* DHCP_HAS_* */
	uint8_t nb_routers, nb_dns;
	uint32_t routers[DHCP_MAX_ROUTERS]; /* option 3, in the server's order of preference */
	uint32_t dns[DHCP_MAX_DNS];     /* option 6 */
	char message[DHCP_MESSAGE_MAX + 1]; /* option 56 (a NAK's reason), printable, NUL-ended */
};

/* Parses the DHCP message at buf[0..len) (the UDP payload). Checks, in order: the fixed
 * fields and cookie fit (TRUNCATED); op is request or reply, hlen <= 16 (BAD_FIELD); the
 * magic cookie (BAD_FIELD: BOOTP without it is no DHCP); then the options field and, when
 * option 52 says so, the file and sname fields (RFC 2132 §9.3): every option's length byte
 * and data lie inside its field, option 52 appears only in the options field with a value of
 * 1..3, the options the repr holds have their lengths (RFC 3396: several instances of one
 * code are one option, concatenated), the mask is contiguous, the MTU >= 68, option 57 >=
 * 576 (BAD_OPTION); finally option 53 is present with a value of 1..8 (BAD_FIELD). Option
 * lists longer than the repr's arrays keep their first entries; unknown options are
 * skipped. Bytes after the END option (padding) are ignored. */
enum wire_status dhcp_parse(const uint8_t *buf, size_t len, struct dhcp_repr *out);

/* Writes a client's BOOTREQUEST: op, xid, secs, flags, ciaddr, chaddr (Ethernet) from r, the
 * options message type, client identifier (RFC 2132 §9.14: type 1 and chaddr), requested
 * address (if r->requested_ip), server identifier (if r->server_id), maximum message size
 * (if r->max_msg_size) and, except in a DHCPRELEASE or DHCPDECLINE (RFC 2131 table 5), the
 * parameter request list, then END and zeros up to DHCP_BOOTP_MIN_LEN. Returns the length,
 * or 0 when cap is too small. */
size_t dhcp_build_request(uint8_t *buf, size_t cap, const struct dhcp_repr *r);

#endif
