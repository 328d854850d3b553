/* lib/dpstack/dps_ifreq.c: the interface ioctls answered from a table of the stack's ports,
 * as Linux answers them, which destinations are broadcast addresses, and which sources
 * sendmsg's IP_PKTINFO and IPV6_PKTINFO may name. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <cmocka.h>

#include <arpa/inet.h>
#include <net/if.h>
#include <net/if_arp.h>
#include <sys/ioctl.h>

#include "../../lib/dpstack/dps_links.h"

/* port0 (index 1) with 10.0.0.2/24 and 10.0.9.2/24, port1 (index 2, down) with 10.0.1.2/31,
 * port2 (index 3) without an address. */
static struct chan_links table(void)
{
	struct chan_links t = {.gen = 5, .nlinks = 3, .naddrs = 3};
	t.links[0] = (struct chan_link){.name = "port0", .ifindex = 1,
					.mac = {2, 0, 0, 0, 0, 1}, .mtu = 1500, .up = 1};
	t.links[1] = (struct chan_link){.name = "port1", .ifindex = 2, .mtu = 9000};
	t.links[2] = (struct chan_link){.name = "port2", .ifindex = 3, .mtu = 1500, .up = 1};
	t.addrs[0] = (struct chan_link_addr){.addr = inet_addr("10.0.0.2"), .link = 0, .plen = 24};
	t.addrs[1] = (struct chan_link_addr){.addr = inet_addr("10.0.1.2"), .link = 1, .plen = 31};
	t.addrs[2] = (struct chan_link_addr){.addr = inet_addr("10.0.9.2"), .link = 0, .plen = 24};
	return t;
}

static struct ifreq named(const char *name)
{
	struct ifreq r;
	memset(&r, 0, sizeof(r));
	snprintf(r.ifr_name, sizeof(r.ifr_name), "%s", name);
	return r;
}

static uint32_t sin_addr(const struct sockaddr *sa)
{
	struct sockaddr_in sin;
	memcpy(&sin, sa, sizeof(sin));
	assert_int_equal(sin.sin_family, AF_INET);
	return sin.sin_addr.s_addr;
}

static void ifconf_without_buffer_says_the_length_then_lists_whole_entries(void **state)
{
	(void)state;
	struct chan_links t = table();
	struct ifconf ic = {.ifc_len = 0, .ifc_buf = NULL};
	assert_int_equal(dps_ifreq_answer(&t, SIOCGIFCONF, &ic), 0);
	assert_int_equal(ic.ifc_len, 3 * sizeof(struct ifreq));
	struct ifreq list[3];
	ic = (struct ifconf){.ifc_len = 2 * sizeof(struct ifreq) + 7, .ifc_req = list};
	assert_int_equal(dps_ifreq_answer(&t, SIOCGIFCONF, &ic), 0);
	assert_int_equal(ic.ifc_len, 2 * sizeof(struct ifreq));
	assert_string_equal(list[0].ifr_name, "port0");
	assert_int_equal(sin_addr(&list[0].ifr_addr), inet_addr("10.0.0.2"));
	assert_string_equal(list[1].ifr_name, "port1");
	ic.ifc_len = -1;
	assert_int_equal(dps_ifreq_answer(&t, SIOCGIFCONF, &ic), -EINVAL);
}

static void by_name_index_mac_mtu_flags(void **state)
{
	(void)state;
	struct chan_links t = table();
	struct ifreq r = named("port1");
	assert_int_equal(dps_ifreq_answer(&t, SIOCGIFINDEX, &r), 0);
	assert_int_equal(r.ifr_ifindex, 2);
	r = named("");
	r.ifr_ifindex = 3;
	assert_int_equal(dps_ifreq_answer(&t, SIOCGIFNAME, &r), 0);
	assert_string_equal(r.ifr_name, "port2");
	r = named("port0");
	assert_int_equal(dps_ifreq_answer(&t, SIOCGIFHWADDR, &r), 0);
	assert_int_equal(r.ifr_hwaddr.sa_family, ARPHRD_ETHER);
	assert_memory_equal(r.ifr_hwaddr.sa_data, t.links[0].mac, 6);
	r = named("port1");
	assert_int_equal(dps_ifreq_answer(&t, SIOCGIFMTU, &r), 0);
	assert_int_equal(r.ifr_mtu, 9000);
	assert_int_equal(dps_ifreq_answer(&t, SIOCGIFFLAGS, &r), 0);
	assert_int_equal(r.ifr_flags, IFF_BROADCAST); /* down */
	r = named("port0");
	assert_int_equal(dps_ifreq_answer(&t, SIOCGIFFLAGS, &r), 0);
	assert_int_equal(r.ifr_flags, IFF_UP | IFF_BROADCAST | IFF_RUNNING);
}

static void addresses_are_the_first_of_the_interface(void **state)
{
	(void)state;
	struct chan_links t = table();
	struct ifreq r = named("port0");
	assert_int_equal(dps_ifreq_answer(&t, SIOCGIFADDR, &r), 0);
	assert_int_equal(sin_addr(&r.ifr_addr), inet_addr("10.0.0.2"));
	assert_int_equal(dps_ifreq_answer(&t, SIOCGIFNETMASK, &r), 0);
	assert_int_equal(sin_addr(&r.ifr_netmask), inet_addr("255.255.255.0"));
	assert_int_equal(dps_ifreq_answer(&t, SIOCGIFBRDADDR, &r), 0);
	assert_int_equal(sin_addr(&r.ifr_broadaddr), inet_addr("10.0.0.255"));
	r = named("port1"); /* a /31 has no broadcast address (RFC 3021) */
	assert_int_equal(dps_ifreq_answer(&t, SIOCGIFBRDADDR, &r), 0);
	assert_int_equal(sin_addr(&r.ifr_broadaddr), 0);
	r = named("port2");
	assert_int_equal(dps_ifreq_answer(&t, SIOCGIFADDR, &r), -EADDRNOTAVAIL);
}

static void unknown_name_or_index_is_enodev(void **state)
{
	(void)state;
	struct chan_links t = table();
	static const unsigned long reqs[] = {SIOCGIFINDEX, SIOCGIFHWADDR, SIOCGIFADDR,
					     SIOCGIFNETMASK, SIOCGIFBRDADDR, SIOCGIFFLAGS,
					     SIOCGIFMTU};
	for (unsigned i = 0; i < sizeof(reqs) / sizeof(reqs[0]); i++) {
		struct ifreq r = named("eth0");
		assert_int_equal(dps_ifreq_answer(&t, reqs[i], &r), -ENODEV);
	}
	struct ifreq r = named("");
	r.ifr_ifindex = 0;
	assert_int_equal(dps_ifreq_answer(&t, SIOCGIFNAME, &r), -ENODEV);
	/* A name that fills the field without its NUL is cut, as Linux cuts it. */
	memset(r.ifr_name, 'p', sizeof(r.ifr_name));
	assert_int_equal(dps_ifreq_answer(&t, SIOCGIFINDEX, &r), -ENODEV);
	assert_true(dps_ifreq_request(SIOCGIFCONF));
	assert_false(dps_ifreq_request(SIOCSIFMTU));
}

static void broadcast_addresses_of_the_subnets_but_not_of_a_31(void **state)
{
	(void)state;
	struct chan_links t = table();
	assert_int_equal(dps_links_table_is_broadcast(&t, inet_addr("10.0.0.255")), 1);
	assert_int_equal(dps_links_table_is_broadcast(&t, inet_addr("10.0.9.255")), 1);
	assert_int_equal(dps_links_table_is_broadcast(&t, inet_addr("10.0.0.254")), 0);
	assert_int_equal(dps_links_table_is_broadcast(&t, inet_addr("10.0.1.3")), 0);
	assert_int_equal(dps_links_table_is_broadcast(&t, inet_addr("10.0.2.255")), 0);
}

static void pktinfo_source_must_be_ours_and_interface_known(void **state)
{
	(void)state;
	struct chan_links t = table();
	assert_int_equal(dps_links_table_check_source(&t, inet_addr("10.0.9.2"), 0), 0);
	assert_int_equal(dps_links_table_check_source(&t, 0, 3), 0);
	assert_int_equal(dps_links_table_check_source(&t, 0, 0), 0);
	assert_int_equal(dps_links_table_check_source(&t, inet_addr("10.0.0.7"), 1), -ENETUNREACH);
	assert_int_equal(dps_links_table_check_source(&t, inet_addr("224.0.0.1"), 0), -EINVAL);
	assert_int_equal(dps_links_table_check_source(&t, inet_addr("10.0.0.2"), 9), -ENODEV);
}

static struct in6_addr in6(const char *text)
{
	struct in6_addr a;
	assert_int_equal(inet_pton(AF_INET6, text, &a), 1);
	return a;
}

static struct chan_link_addr6 addr6(const char *text, uint16_t link, bool usable)
{
	struct in6_addr a = in6(text);
	struct chan_link_addr6 r = {.link = link, .usable = usable};
	memcpy(r.addr.b, a.s6_addr, sizeof(r.addr.b));
	return r;
}

/* As ip6_datagram_send_ctl checks it: the interface first (ENODEV), a link-local source
 * needs one and must be on it, a source must be one of ours and past DAD (EINVAL). */
static void pktinfo6_source_checked_as_linux(void **state)
{
	(void)state;
	struct chan_links t = table();
	t.naddrs6 = 3;
	t.addrs6[0] = addr6("2001:db8::2", 0, true);
	t.addrs6[1] = addr6("fe80::1", 0, true);
	t.addrs6[2] = addr6("2001:db8::5", 2, false); /* tentative */
	struct in6_addr a;
	a = in6("2001:db8::2");
	assert_int_equal(dps_links_table_check_source6(&t, &a, 0), 0);
	assert_int_equal(dps_links_table_check_source6(&t, &a, 3), 0); /* global: any link */
	assert_int_equal(dps_links_table_check_source6(&t, &a, 9), -ENODEV);
	a = in6("::");
	assert_int_equal(dps_links_table_check_source6(&t, &a, 0), 0);
	assert_int_equal(dps_links_table_check_source6(&t, &a, 2), 0);
	a = in6("fe80::1");
	assert_int_equal(dps_links_table_check_source6(&t, &a, 1), 0);
	assert_int_equal(dps_links_table_check_source6(&t, &a, 0), -EINVAL);
	assert_int_equal(dps_links_table_check_source6(&t, &a, 3), -EINVAL); /* not on port2 */
	a = in6("2001:db8::5");
	assert_int_equal(dps_links_table_check_source6(&t, &a, 0), -EINVAL);
	a = in6("2001:db8::99");
	assert_int_equal(dps_links_table_check_source6(&t, &a, 0), -EINVAL);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(ifconf_without_buffer_says_the_length_then_lists_whole_entries),
		cmocka_unit_test(by_name_index_mac_mtu_flags),
		cmocka_unit_test(addresses_are_the_first_of_the_interface),
		cmocka_unit_test(unknown_name_or_index_is_enodev),
		cmocka_unit_test(broadcast_addresses_of_the_subnets_but_not_of_a_31),
		cmocka_unit_test(pktinfo_source_must_be_ours_and_interface_known),
		cmocka_unit_test(pktinfo6_source_checked_as_linux),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
