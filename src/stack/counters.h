/* Every event and every drop reason of a worker's stack, as one X-macro list each, so the
 * counters, their printable names and the CLI never drift apart (the *_error.def idea of
 * VPP). Counters are per worker, written only by their worker; the control thread reads them
 * (64-bit aligned loads are atomic on every platform DPDK supports). */
#ifndef DPS_STACK_COUNTERS_H
#define DPS_STACK_COUNTERS_H

#include <stdint.h>

/* X(ID, "name", "description") */
#define STACK_EVENT_LIST(X) \
	X(ETH_RX,             "eth.rx",               "frames received") \
	X(ARP_RX_REQUEST,     "arp.rx_request",       "ARP requests received") \
	X(ARP_RX_REPLY,       "arp.rx_reply",         "ARP replies received") \
	X(ARP_TX_REQUEST,     "arp.tx_request",       "ARP requests sent") \
	X(ARP_TX_REPLY,       "arp.tx_reply",         "ARP replies sent") \
	X(ARP_TX_GRATUITOUS,  "arp.tx_gratuitous",    "gratuitous ARP announcements sent") \
	X(IP_RX,              "ip.rx",                "IPv4 packets received") \
	X(IP_DELIVERED,       "ip.delivered",         "IPv4 packets delivered locally") \
	X(IP_FORWARDED,       "ip.forwarded",         "IPv4 packets forwarded") \
	X(IP_TX,              "ip.tx",                "IPv4 packets sent (after fragmentation)") \
	X(IP_FRAGMENTED,      "ip.fragmented",        "IPv4 datagrams fragmented on output") \
	X(IP_FRAGS_CREATED,   "ip.frags_created",     "fragments created on output") \
	X(IP_FRAGS_RX,        "ip.frags_rx",          "fragments received for local delivery") \
	X(IP_REASSEMBLED,     "ip.reassembled",       "datagrams reassembled") \
	X(IP_STEERED_OUT,     "ip.steered_out",       "datagrams that reached a worker not owning their flow, handed to the owner") \
	X(IP_STEERED_IN,      "ip.steered_in",        "datagrams taken from another worker that received them") \
	X(FLOW_STEERED_OUT,   "flow.steered_out",     "frames a flow rule sent to another worker") \
	X(FLOW_STEERED_IN,    "flow.steered_in",      "frames taken from another worker that a flow rule sent here") \
	X(IP_OPTIONS,         "ip.options",           "packets received with IP options") \
	X(ICMP_RX,            "icmp.rx",              "ICMP messages received") \
	X(ICMP_RX_ECHO,       "icmp.rx_echo",         "echo requests received") \
	X(ICMP_TX_ECHO_REPLY, "icmp.tx_echo_reply",   "echo replies sent") \
	X(ICMP_RX_ERROR,      "icmp.rx_error",        "ICMP error messages received") \
	X(ICMP_TX_UNREACH,    "icmp.tx_unreach",      "destination unreachable sent") \
	X(ICMP_TX_TIME_EXCEEDED, "icmp.tx_time_exceeded", "time exceeded sent") \
	X(ICMP_TX_PARAM_PROBLEM, "icmp.tx_param_problem", "parameter problem sent") \
	X(IP6_RX,             "ip6.rx",               "IPv6 packets received") \
	X(IP6_DELIVERED,      "ip6.delivered",        "IPv6 packets delivered locally") \
	X(IP6_TX,             "ip6.tx",               "IPv6 packets sent (after fragmentation)") \
	X(IP6_FRAGS_RX,       "ip6.frags_rx",         "fragments received for local delivery") \
	X(IP6_REASSEMBLED,    "ip6.reassembled",      "datagrams reassembled") \
	X(IP6_FRAGMENTED,     "ip6.fragmented",       "our own datagrams fragmented on output (RFC 8200 §4.5)") \
	X(IP6_FRAGS_CREATED,  "ip6.frags_created",    "fragments created on output") \
	X(IP6_FORWARDED,      "ip6.forwarded",        "IPv6 packets forwarded") \
	X(ICMP6_RX,           "icmp6.rx",             "ICMPv6 messages received") \
	X(ICMP6_RX_ECHO,      "icmp6.rx_echo",        "ICMPv6 echo requests received") \
	X(ICMP6_TX_ECHO_REPLY, "icmp6.tx_echo_reply", "ICMPv6 echo replies sent") \
	X(ICMP6_RX_ERROR,     "icmp6.rx_error",       "ICMPv6 error messages received") \
	X(ICMP6_TX_ERROR,     "icmp6.tx_error",       "ICMPv6 error messages sent") \
	X(ND_RX_NS,           "nd.rx_ns",             "neighbor solicitations received (RFC 4861)") \
	X(ND_RX_NA,           "nd.rx_na",             "neighbor advertisements received") \
	X(ND_RX_ROUTER,       "nd.rx_router",         "router solicitations, advertisements and redirects received") \
	X(ND_RX_REDIRECT,     "nd.redirect_rx",       "valid redirects (RFC 4861 §8.1) handed to the control thread, which reroutes the destination") \
	X(ND_RX_RA_AUTOCONF,  "nd.rx_ra_autoconf",    "router advertisements handed to a port's autoconfiguration (RFC 4862)") \
	X(ND_TX_NS,           "nd.tx_ns",             "neighbor solicitations sent") \
	X(ND_TX_NA,           "nd.tx_na",             "neighbor advertisements sent") \
	X(ND_TX_DAD,          "nd.tx_dad",            "duplicate address detection probes sent (RFC 4862 §5.4.2)") \
	X(ND_TX_RS,           "nd.tx_rs",             "router solicitations sent (RFC 4861 §6.3.7)") \
	X(ND_TX_REDIRECT,     "nd.redirect_tx",       "redirects sent as a router to a neighbour with a better first hop (RFC 4861 §8.2)") \
	X(MLD_RX_QUERY,       "mld.rx_query",         "MLD queries handed to the control thread") \
	X(MLD_TX,             "mld.tx",               "MLD reports and done messages sent (RFC 3810, RFC 2710)") \
	X(ICMP6_TX_ECHO,      "icmp6.tx_echo",        "ICMPv6 echo requests sent (dpstackctl ping)") \
	X(ICMP6_RX_ECHO_REPLY, "icmp6.rx_echo_reply", "ICMPv6 echo replies to our own requests") \
	X(UDP_IN_DATAGRAMS,   "udp.in_datagrams",     "UDP datagrams delivered to sockets") \
	X(UDP_OUT_DATAGRAMS,  "udp.out_datagrams",    "UDP datagrams sent") \
	X(UDP_ZERO_CHECKSUM,  "udp.zero_checksum",    "datagrams received without a checksum (accepted, RFC 768)") \
	X(UDP_ICMP_ERRORS,    "udp.icmp_errors",      "ICMP errors reported to a connected socket (RFC 1122 §4.1.3.3)") \
	X(UDP_ICMP_UNMATCHED, "udp.icmp_unmatched",   "ICMP errors about UDP of no connected socket (ignored)") \
	X(UDP6_IN_DATAGRAMS,  "udp6.in_datagrams",    "UDP datagrams over IPv6 delivered to sockets") \
	X(UDP6_OUT_DATAGRAMS, "udp6.out_datagrams",   "UDP datagrams sent over IPv6") \
	X(TCP_IN_SEGS,        "tcp.in_segs",          "TCP segments received") \
	X(TCP_OUT_SEGS,       "tcp.out_segs",         "TCP segments sent") \
	X(TCP_ACTIVE_OPENS,   "tcp.active_opens",     "connections opened by us (SYN-SENT)") \
	X(TCP_PASSIVE_OPENS,  "tcp.passive_opens",    "connections accepted from LISTEN (SYN-RECEIVED)") \
	X(TCP_SIMULTANEOUS_OPENS, "tcp.simultaneous_opens", "simultaneous opens (RFC 9293 §3.5)") \
	X(TCP_ESTABLISHED,    "tcp.established",      "connections that reached ESTABLISHED") \
	X(TCP_ESTAB_RESETS,   "tcp.estab_resets",     "established connections ended by an error") \
	X(TCP_CONN_REFUSED,   "tcp.conn_refused",     "active opens answered by a reset") \
	X(TCP_IN_RSTS,        "tcp.in_rsts",          "acceptable resets received") \
	X(TCP_OUT_RSTS,       "tcp.out_rsts",         "resets sent") \
	X(TCP_IN_FINS,        "tcp.in_fins",          "FINs received in order") \
	X(TCP_NO_CONN,        "tcp.no_conn",          "segments for no connection or listener (answered by RST)") \
	X(TCP_RETRANS_SEGS,   "tcp.retrans_segs",     "segments retransmitted") \
	X(TCP_RTO,            "tcp.rto",              "retransmission timeouts") \
	X(TCP_TIMEOUTS,       "tcp.timeouts",         "connections dropped after the retry limit or user timeout") \
	X(TCP_FAST_RETRANS,   "tcp.fast_retrans",     "fast retransmits / recovery episodes") \
	X(TCP_DUPACKS,        "tcp.dupacks",          "duplicate ACKs received") \
	X(TCP_DUPACKS_AFTER_RTO, "tcp.dupacks_after_rto", "dupACK threshold reached for an already repaired loss (RFC 6582)") \
	X(TCP_DSACKS_RX,      "tcp.dsacks_rx",        "D-SACKs received (spurious retransmissions, RFC 2883)") \
	X(TCP_RACK_LOST,      "tcp.rack_lost",        "segments RACK marked lost (RFC 8985 §6.2)") \
	X(TCP_RACK_REO_TIMEOUTS, "tcp.rack_reo_timeouts", "RACK reordering timer expiries (RFC 8985 §6.3)") \
	X(TCP_TLP_PROBES,     "tcp.tlp_probes",       "tail loss probes sent (RFC 8985 §7.3)") \
	X(TCP_TLP_RECOVERIES, "tcp.tlp_recoveries",   "tail losses a probe repaired (RFC 8985 §7.4)") \
	X(TCP_UNDOS,          "tcp.undos",            "window reductions undone as spurious (D-SACK, Eifel)") \
	X(TCP_PACING_WAITS,   "tcp.pacing_waits",     "sends held back by the pacing rate") \
	X(TCP_ORPHANS_RESET,  "tcp.orphans_reset",    "closes reset because max-orphans connections were still finishing") \
	X(TCP_DUPLICATE_SEGS, "tcp.duplicate_segs",   "segments entirely already received") \
	X(TCP_PARTIAL_DUPLICATES, "tcp.partial_duplicates", "segments partly already received") \
	X(TCP_OOO_SEGS,       "tcp.ooo_segs",         "out-of-order segments kept") \
	X(TCP_RCVBUF_GROWN,   "tcp.rcvbuf_grown",     "receive FIFOs doubled by autotuning") \
	X(TCP_RCVBUF_NO_MEMORY, "tcp.rcvbuf_no_memory", "receive FIFOs not grown: no memory") \
	X(TCP_DELAYED_ACKS,   "tcp.delayed_acks",     "ACKs sent by the delayed-ACK timer") \
	X(TCP_WINDOW_PROBES,  "tcp.window_probes",    "zero-window probes sent") \
	X(TCP_KEEPALIVE_PROBES, "tcp.keepalive_probes", "keepalive probes sent") \
	X(TCP_KEEPALIVE_TIMEOUTS, "tcp.keepalive_timeouts", "connections dropped by keepalive") \
	X(TCP_FIN_WAIT2_TIMEOUTS, "tcp.fin_wait2_timeouts", "orphaned FIN-WAIT-2 connections expired") \
	X(TCP_TIME_WAIT_REUSED, "tcp.time_wait_reused", "TIME-WAIT connections replaced by a new SYN (RFC 6191)") \
	X(TCP_SYNCOOKIES_SENT, "tcp.syncookies_sent", "SYN-ACKs with a SYN cookie (SYN queue full)") \
	X(TCP_SYNCOOKIES_RECV, "tcp.syncookies_recv", "connections restored from a SYN cookie") \
	X(TCP_SYNCOOKIES_FAILED, "tcp.syncookies_failed", "ACKs to a listener with no valid cookie") \
	X(TCP_LISTEN_OVERFLOWS, "tcp.listen_overflows", "SYNs dropped: accept queue full") \
	X(TCP_CONN_TABLE_FULL, "tcp.conn_table_full", "connections refused: the worker's connection table (tcp-connections) is full (SYN dropped, connect ENOBUFS)") \
	X(TCP_LISTEN_TABLE_FULL, "tcp.listen_table_full", "listens refused: the worker's listener table (tcp-listeners) is full (ENOBUFS)") \
	X(TCP_SYN_QUEUE_OVERFLOWS, "tcp.syn_queue_overflows", "SYNs dropped: SYN queue full, cookies off") \
	X(TCP_CHALLENGE_ACKS, "tcp.challenge_acks",   "challenge ACKs sent (RFC 5961)") \
	X(TCP_CHALLENGE_ACK_LIMITED, "tcp.challenge_ack_limited", "challenge ACKs not sent: rate limit (RFC 5961 §7)") \
	X(TCP_RST_CHALLENGED, "tcp.rst_challenged",   "in-window resets not at RCV.NXT (RFC 5961 §3)") \
	X(TCP_SYN_CHALLENGED, "tcp.syn_challenged",   "SYNs on synchronized connections (RFC 5961 §4)") \
	X(TCP_ACK_CHALLENGED, "tcp.ack_challenged",   "ACKs outside [SND.UNA-MAX.SND.WND, SND.NXT] (RFC 5961 §5)") \
	X(TCP_SYN_FIN_CHALLENGED, "tcp.syn_fin_challenged", "SYN+FIN segments on synchronized connections: challenge ACK (RFC 5961 §4)") \
	X(TCP_TIME_WAIT_ACKS, "tcp.time_wait_acks",   "segments answered by an ACK in TIME-WAIT (RFC 9293 §3.10.7.4)") \
	X(TCP_QUICK_ACKS,     "tcp.quick_acks",       "data segments ACKed at once in quick-ACK mode (Linux's quickack)") \
	X(TCP_OOO_FINS,       "tcp.ooo_fins",         "FINs kept beyond a hole, taken when it fills") \
	X(TCP_ABORT_ON_CLOSE, "tcp.abort_on_close",   "closed with unread data: reset sent (RFC 2525 §2.17)") \
	X(TCP_ABORT_LINGER,   "tcp.abort_linger",     "closed with SO_LINGER 0: reset sent") \
	X(TCP_ECN_CE_RX,      "tcp.ecn_ce_rx",        "segments received with CE (RFC 3168)") \
	X(TCP_ECN_REDUCTIONS, "tcp.ecn_reductions",   "window reductions for ECE") \
	X(TCP_ICMP_ERRORS,    "tcp.icmp_errors",      "ICMP errors matched to a connection") \
	X(TCP_ICMP_IGNORED,   "tcp.icmp_ignored",     "ICMP errors quoting a sequence number not in flight (RFC 5927)") \
	X(TCP_PMTU_CLAMPED,   "tcp.pmtu_clamped",     "frag-needed with an MTU below 552 raised to it (Linux's ip_rt_min_pmtu)") \
	X(TCP_TX_NO_MBUF,     "tcp.tx_no_mbuf",       "segments not sent: no mbuf") \
	X(TCP_TSO_SEGS,       "tcp.tso_segs",         "segments of several MSS handed to the port to cut (TSO)") \
	X(GRO_MERGED,         "gro.merged",           "received TCP segments merged into the one before them in an RX burst (GRO)") \
	X(TCP_NO_MEMORY,      "tcp.no_memory",        "connections refused: no memory for buffers") \
	X(KERNEL_ETHERTYPE,   "kernel.ethertype",     "frames of an EtherType the stack does not run, passed to the port's kernel interface") \
	X(KERNEL_VLAN,        "kernel.vlan",          "VLAN-tagged frames passed to the kernel interface") \
	X(KERNEL_ARP,         "kernel.arp_copies",    "ARP frames copied to the kernel interface (its neighbour table)") \
	X(KERNEL_ARP_REPLY_HELD, "kernel.arp_replies_held", "ARP replies of the kernel for an address the stack answers itself, not sent") \
	X(KERNEL_IP_MULTICAST, "kernel.ip_multicast", "IPv4 multicast datagrams passed to the kernel interface (the stack joins no group)") \
	X(KERNEL_IP_PROTO,    "kernel.ip_proto",      "datagrams of an IP protocol the stack does not run, passed to the kernel interface") \
	X(KERNEL_ICMP,        "kernel.icmp",          "ICMP messages passed to the kernel interface (echo replies not the stack's, types it does not handle, copies of errors)") \
	X(KERNEL_TCP,         "kernel.tcp_no_socket", "TCP segments for no connection or listener of the stack, passed to the kernel interface") \
	X(KERNEL_UDP,         "kernel.udp_no_socket", "UDP datagrams for no socket of the stack, passed to the kernel interface") \
	X(KERNEL_IP6,         "kernel.ip6",           "IPv6 datagrams not for the stack (the kernel's addresses and groups), and copies of Neighbor Discovery, passed to the kernel interface") \
	X(KERNEL_FLOW,        "kernel.flow",          "frames a flow rule's kernel action passed to the kernel interface") \
	X(KERNEL_BYPASS,      "kernel.bypass",        "IPv4 datagrams a bypass rule sent to the kernel interface") \
	X(KERNEL_BYPASS6,     "kernel.bypass6",       "IPv6 datagrams a bypass rule sent to the kernel interface") \
	X(CLUSTER_REST,       "cluster.rest",         "frames the stack does not own handed to the cluster that takes the port's rest")

#define STACK_DROP_LIST(X) \
	X(ETH_TRUNCATED,      "eth.truncated",        "frame shorter than an Ethernet header") \
	X(ETH_BAD_TYPE,       "eth.bad_type",         "802.3 length field or stacked VLAN tags") \
	X(ETH_NOT_OURS,       "eth.not_ours",         "destination MAC is another host's") \
	X(ETH_PORT_DOWN,      "eth.port_down",        "received on an administratively down port") \
	X(ETH_VLAN,           "eth.vlan",             "802.1Q/802.1ad tagged frame: VLANs not configured") \
	X(ETH_UNKNOWN_TYPE,   "eth.unknown_type",     "EtherType neither IPv4, IPv6 nor ARP") \
	X(ETH_BAD_SRC,        "eth.bad_src",          "multicast source MAC, or our own MAC looped back") \
	X(ARP_MALFORMED,      "arp.malformed",        "ARP body truncated or not Ethernet/IPv4") \
	X(ARP_BAD_SENDER,     "arp.bad_sender",       "ARP sender address is multicast, broadcast or zero-net") \
	X(ARP_ADDR_CONFLICT,  "arp.addr_conflict",    "another host claims one of our addresses") \
	X(ARP_STATIC_CONFLICT,"arp.static_conflict",  "claim against a static neighbour entry (spoofing?)") \
	X(ARP_NOT_FOR_US,     "arp.not_for_us",       "ARP request for an address that is not ours") \
	X(NEIGH_QUEUE_FULL,   "neigh.queue_full",     "packet waiting for ARP dropped: queue full") \
	X(NEIGH_FAILED,       "neigh.failed",         "next hop did not answer ARP") \
	X(NEIGH_TABLE_FULL,   "neigh.table_full",     "neighbour table full") \
	X(NEIGH_FLUSHED,      "neigh.flushed",        "queued packet dropped when its entry was removed") \
	X(IP_TRUNCATED,       "ip.truncated",         "shorter than an IPv4 header") \
	X(IP_BAD_VERSION,     "ip.bad_version",       "version field is not 4") \
	X(IP_BAD_HDR_LEN,     "ip.bad_hdr_len",       "IHL below 5 or past the frame") \
	X(IP_BAD_LENGTH,      "ip.bad_length",        "total length below the header or past the frame") \
	X(IP_BAD_CHECKSUM,    "ip.bad_checksum",      "header checksum mismatch") \
	X(IP_BAD_FIELD,       "ip.bad_field",         "reserved flag, bad fragment field or martian source") \
	X(IP_BAD_OPTION,      "ip.bad_option",        "malformed IP option") \
	X(IP_SOURCE_ROUTE,    "ip.source_route",      "LSRR/SSRR option (RFC 7126: dropped)") \
	X(IP_NOT_OURS,        "ip.not_ours",          "not for us and forwarding is off") \
	X(IP_NO_ROUTE,        "ip.no_route",          "no route to the destination") \
	X(IP_NO_SOURCE,       "ip.no_source",         "no address to send from: the route's port has none (RFC 1122 §3.2.1.3: never 0.0.0.0)") \
	X(FLOW_DROPPED,       "flow.dropped",         "dropped by a flow rule's drop action (flow show counts each rule's hits)") \
	X(FLOW_STEER_FULL,    "flow.steer_full",      "frame a flow rule steered dropped: the worker's ring was full") \
	X(FLOW_CLUSTER_GONE,  "flow.cluster_gone",    "frame a flow rule sent to a cluster that has gone (a bug: cluster del waits for the rules)") \
	X(CLUSTER_REST_GONE,  "cluster.rest_gone",    "frame for the cluster that takes the port's rest after it had gone (a bug: changes wait for the flush)") \
	X(ACL_DENIED,         "acl.denied",           "IPv4 datagram denied by an ACL rule (acl show counts each rule's hits)") \
	X(ACL6_DENIED,        "acl6.denied",          "IPv6 datagram denied by an ACL rule (acl show counts each rule's hits)") \
	X(IP_TTL_EXPIRED,     "ip.ttl_expired",       "TTL reached zero while forwarding") \
	X(IP_FRAG_NEEDED,     "ip.frag_needed",       "DF set and larger than the next-hop MTU") \
	X(IP_FRAG_FAILED,     "ip.frag_failed",       "could not fragment (no buffers)") \
	X(IP_BAD_DST,         "ip.bad_dst",           "destination is multicast, broadcast or zero-net on a forwarding path") \
	X(IP_LINK_BCAST,      "ip.link_bcast",        "unicast destination in a link-layer broadcast or multicast frame (RFC 1122 §3.3.6)") \
	X(IP_LOOPBACK_FULL,   "ip.loopback_full",     "datagram to our own address dropped: loopback queue full") \
	X(IP_LOOPBACK_ORPHAN, "ip.loopback_orphan",   "datagram to our own address dropped: the connection that sent it went first") \
	X(IP_STEER_FULL,      "ip.steer_full",        "datagram for another worker dropped: its ring was full") \
	X(IP_UNKNOWN_PROTO,   "ip.unknown_proto",     "no handler for the IP protocol") \
	X(IP_REASS_DUPLICATE, "ip.reass_duplicate",   "duplicate fragment") \
	X(IP_REASS_OVERLAP,   "ip.reass_overlap",     "overlapping fragments: datagram discarded") \
	X(IP_REASS_TINY,      "ip.reass_tiny",        "tiny fragment (RFC 1858)") \
	X(IP_REASS_TOO_BIG,   "ip.reass_too_big",     "reassembled length past 65535") \
	X(IP_REASS_BAD_LAST,  "ip.reass_bad_last",    "inconsistent last fragment") \
	X(IP_REASS_TOO_MANY,  "ip.reass_too_many",    "too many fragments in one datagram") \
	X(IP_REASS_NO_MEMORY, "ip.reass_no_memory",   "reassembly memory limit reached") \
	X(IP_REASS_TIMEOUT,   "ip.reass_timeout",     "datagram incomplete at timeout") \
	X(ICMP_TRUNCATED,     "icmp.truncated",       "shorter than an ICMP header") \
	X(ICMP_BAD_CHECKSUM,  "icmp.bad_checksum",    "ICMP checksum mismatch") \
	X(ICMP_BROADCAST_ECHO,"icmp.broadcast_echo",  "echo request to a broadcast address (ignored, RFC 1122 §3.2.2.6)") \
	X(ICMP_UNHANDLED,     "icmp.unhandled",       "ICMP type not handled") \
	X(ICMP_RATE_LIMITED,  "icmp.rate_limited",    "ICMP error not sent: rate limit (RFC 1812 §4.3.2.8)") \
	X(ICMP_ERROR_SUPPRESSED, "icmp.error_suppressed", "no ICMP error about an ICMP error, fragment or broadcast (RFC 1122 §3.2.2)") \
	X(ICMP_BAD_QUOTE,     "icmp.bad_quote",       "ICMP error not quoting the start of a datagram we sent") \
	X(IP6_TRUNCATED,      "ip6.truncated",        "shorter than an IPv6 header, or a chain whose headers do not fit its first segment") \
	X(IP6_BAD_VERSION,    "ip6.bad_version",      "version field is not 6") \
	X(IP6_BAD_LENGTH,     "ip6.bad_length",       "payload length zero or past the frame") \
	X(IP6_BAD_FIELD,      "ip6.bad_field",        "multicast, loopback or IPv4-mapped source, unspecified destination, unspecified source on a forwarding path") \
	X(IP6_BAD_EXT,        "ip6.bad_ext",          "extension header chain refused (RFC 8200 §4; parameter problem sent where due)") \
	X(IP6_NOT_OURS,       "ip6.not_ours",         "not for one of our addresses or groups, and not forwarded (ip -6 forwarding off, a link-local or multicast destination)") \
	X(IP6_NO_ROUTE,       "ip6.no_route",         "no IPv6 route to the destination, or no source address for it") \
	X(IP6_HOP_LIMIT_EXPIRED, "ip6.hop_limit_expired", "hop limit reached zero while forwarding (time exceeded sent)") \
	X(IP6_TOO_BIG,        "ip6.too_big",          "larger than the next-hop MTU while forwarding (packet too big sent; routers never fragment, RFC 8200 §5)") \
	X(IP6_BAD_DST,        "ip6.bad_dst",          "loopback or IPv4-mapped destination, or a link-layer multicast frame, on a forwarding path") \
	X(IP6_BEYOND_SCOPE,   "ip6.beyond_scope",     "link-local source to a destination off its link (RFC 4291 §2.5.6; unreachable code 2 sent)") \
	X(IP6_REASS_DUPLICATE, "ip6.reass_duplicate", "duplicate fragment") \
	X(IP6_REASS_OVERLAP,  "ip6.reass_overlap",    "overlapping fragments: datagram discarded (RFC 5722)") \
	X(IP6_REASS_TINY,     "ip6.reass_tiny",       "empty or tiny fragment (RFC 1858)") \
	X(IP6_REASS_TOO_BIG,  "ip6.reass_too_big",    "reassembled payload past 65535") \
	X(IP6_REASS_BAD_LAST, "ip6.reass_bad_last",   "inconsistent last fragment") \
	X(IP6_REASS_TOO_MANY, "ip6.reass_too_many",   "too many fragments in one datagram") \
	X(IP6_REASS_NO_MEMORY, "ip6.reass_no_memory", "reassembly memory limit reached") \
	X(IP6_REASS_TIMEOUT,  "ip6.reass_timeout",    "datagram incomplete at timeout") \
	X(IP6_FRAG_FAILED,    "ip6.frag_failed",      "could not fragment our own datagram (no buffers, or a path MTU so small it needs more than 64 pieces)") \
	X(IP6_UNKNOWN_PROTO,  "ip6.unknown_proto",    "no handler for the Next Header (parameter problem sent)") \
	X(ICMP6_TRUNCATED,    "icmp6.truncated",      "shorter than an ICMPv6 header") \
	X(ICMP6_BAD_CHECKSUM, "icmp6.bad_checksum",   "ICMPv6 checksum mismatch") \
	X(ICMP6_UNHANDLED,    "icmp6.unhandled",      "ICMPv6 type not handled") \
	X(ICMP6_FRAGMENTED_ND, "icmp6.fragmented_nd", "Neighbor Discovery message that came in fragments (RFC 6980)") \
	X(ICMP6_RATE_LIMITED, "icmp6.rate_limited",   "ICMPv6 error not sent: rate limit (RFC 4443 §2.4(f))") \
	X(ICMP6_ERROR_SUPPRESSED, "icmp6.error_suppressed", "no ICMPv6 error about an error, a multicast or a non-unicast source (RFC 4443 §2.4(e))") \
	X(ND_INVALID,         "nd.invalid",           "Neighbor Discovery message failing RFC 4861 §7.1 validation") \
	X(ND_NOT_FOR_US,      "nd.not_for_us",        "neighbor solicitation for an address that is not ours") \
	X(ND_ADDR_CONFLICT,   "nd.addr_conflict",     "another host advertises one of our addresses") \
	X(ND_DAD_CONFLICT,    "nd.dad_conflict",      "solicitation from :: or advertisement for one of our tentative addresses: duplicate (RFC 4862 §5.4.3-4)") \
	X(ND_TENTATIVE,       "nd.tentative",         "solicitation for one of our tentative addresses, not answered (RFC 4862 §5.4.3)") \
	X(ND_REDIRECT_INVALID, "nd.redirect_invalid", "redirect failing RFC 4861 §8.1 validation (hop limit, code, length, options, source, target, destination)") \
	X(ND_REDIRECT_NOT_ROUTER, "nd.redirect_not_router", "redirect not from the first-hop router of its destination (RFC 4861 §8.1)") \
	X(ND_REDIRECT_FORWARDING, "nd.redirect_forwarding", "redirect ignored: IPv6 forwarding on, a router keeps its routes (RFC 4861 §8.2)") \
	X(MLD_INVALID,        "mld.invalid",          "MLD query failing validation (RFC 3810 §5.1.14, RFC 2710 §3)") \
	X(IP6_CTL_FULL,       "ip6.ctl_full",         "DAD, router advertisement or MLD news the control thread's inbox had no room for") \
	X(TX_NO_MBUF,         "tx.no_mbuf",           "mbuf pool empty") \
	X(TX_QUEUE_FULL,      "tx.queue_full",        "port TX queue full") \
	X(TX_LINK_DOWN,       "tx.link_down",         "output port is administratively down") \
	X(TX_NO_TSO,          "tx.no_tso",            "TCP segment built for TSO reached a port without it (route changed)") \
	X(TX_PREPARE,         "tx.prepare",           "frame the port's transmit preparation refused (rte_eth_tx_prepare)") \
	X(UDP_TRUNCATED,      "udp.truncated",        "shorter than a UDP header") \
	X(UDP_BAD_LENGTH,     "udp.bad_length",       "length field below 8 or past the IP payload") \
	X(UDP_BAD_PORT,       "udp.bad_port",         "destination port 0") \
	X(UDP_BAD_CHECKSUM,   "udp.bad_checksum",     "UDP checksum mismatch") \
	X(UDP6_ZERO_CHECKSUM, "udp6.zero_checksum",   "UDP over IPv6 without a checksum (mandatory, RFC 8200 §8.1)") \
	X(UDP_NO_PORT,        "udp.no_port",          "no socket for the port (answered by port unreachable)") \
	X(UDP6_NO_PORT,       "udp6.no_port",         "IPv6: no socket for the port (answered by ICMPv6 port unreachable)") \
	X(UDP_IGNORED_BCAST,  "udp.ignored_bcast",    "broadcast for a port no socket has (no ICMP, RFC 1122 §4.1.3.1)") \
	X(UDP_RCVBUF_ERRORS,  "udp.rcvbuf_errors",    "datagram dropped: socket receive buffer full") \
	X(TCP_TRUNCATED,      "tcp.truncated",        "shorter than a TCP header") \
	X(TCP_BAD_HDR_LEN,    "tcp.bad_hdr_len",      "data offset below 5 or past the segment") \
	X(TCP_BAD_OPTION,     "tcp.bad_option",       "malformed TCP option") \
	X(TCP_BAD_FLAGS,      "tcp.bad_flags",        "port 0, or SYN with FIN to a listener or SYN-SENT") \
	X(TCP_BAD_CHECKSUM,   "tcp.bad_checksum",     "TCP checksum mismatch") \
	X(TCP_BCAST,          "tcp.bcast",            "TCP to a broadcast or multicast address (RFC 1122 §4.2.3.10)") \
	X(TCP_PAWS,           "tcp.paws",             "segment with an old timestamp (RFC 7323 PAWS)") \
	X(TCP_OUT_OF_WINDOW,  "tcp.out_of_window",    "segment outside the receive window (answered by ACK)") \
	X(TCP_BAD_ACK,        "tcp.bad_ack",          "SYN-SENT: ACK for something never sent") \
	X(TCP_NO_ACK,         "tcp.no_ack",           "synchronized state: segment without ACK") \
	X(TCP_LISTEN_NO_SYN,  "tcp.listen_no_syn",    "segment to a listener that is no SYN") \
	X(TCP_DATA_PAST_WINDOW, "tcp.data_past_window", "data beyond the receive window (trimmed)") \
	X(TCP_DATA_AFTER_FIN, "tcp.data_after_fin",   "data after the peer's FIN") \
	X(TCP_OOO_DROPPED,    "tcp.ooo_dropped",      "out-of-order segment dropped: too many holes")

enum stack_event {
#define STACK_ENUM(id, name, text) STACK_EV_##id,
	STACK_EVENT_LIST(STACK_ENUM)
#undef STACK_ENUM
	STACK_EV_COUNT
};

enum stack_drop {
#define STACK_ENUM(id, name, text) STACK_DROP_##id,
	STACK_DROP_LIST(STACK_ENUM)
#undef STACK_ENUM
	STACK_DROP_COUNT
};

struct stack_counter_info {
	const char *name;
	const char *text;
};

extern const struct stack_counter_info stack_event_info[STACK_EV_COUNT];
extern const struct stack_counter_info stack_drop_info[STACK_DROP_COUNT];

/* Per-port traffic of one worker. */
struct stack_port_counters {
	uint64_t rx_packets;
	uint64_t rx_bytes;
	uint64_t tx_packets;
	uint64_t tx_bytes;
	uint64_t tx_dropped;   /* counted in tx_packets too: refused by the port's queue (or a
				* peer's hand-off ring), or chained for a PMD that sends one
				* segment and no mbuf to gather it into (tx.no_mbuf) */
	/* The exception path (src/stack/exception.h): frames passed to the port's kernel
	 * interface (not in rx_packets' fate counters: they were received), frames the kernel
	 * sent out of the port (also in tx_packets), and frames for the kernel that its
	 * interface's queue refused (or an mbuf to copy them into was missing). */
	uint64_t to_kernel;
	uint64_t from_kernel;
	uint64_t kernel_dropped;
};

#endif
