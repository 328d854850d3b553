/* The EAL command line dpstackd builds (src/ctl/eal_args.c) and the capabilities its ports
 * need (src/ctl/port_caps.c), for made-up machines: no EAL is started. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>
#include <linux/capability.h>

#include "../../src/ctl/eal_args.h"
#include "../../src/ctl/port_caps.h"

static struct daemon d;
static char *argv[DAEMON_MAX_EAL_ARGS + 1];
static char store[8192];
static char err[256];
static char line[4096];

static void setup_daemon(const char *eal, unsigned workers)
{
	memset(&d, 0, sizeof(d));
	config_defaults(&d);
	d.nb_workers = workers;
	static char words[512];
	snprintf(words, sizeof(words), "%s", eal);
	for (char *save = NULL, *w = strtok_r(words, " ", &save); w != NULL;
	     w = strtok_r(NULL, " ", &save))
		d.eal_argv[d.eal_argc++] = w;
	d.nb_ports = 1;
	strcpy(d.ports[0].name, "port0");
	strcpy(d.ports[0].devargs, "net_af_xdp0,iface=veth0");
}

static struct eal_host host(unsigned ncpus, unsigned free_hugepages)
{
	struct eal_host h = {.free_hugepages = free_hugepages, .nb_cpus = ncpus};
	for (unsigned i = 0; i < ncpus; i++)
		h.cpus[i] = i;
	return h;
}

/* The EAL line as one string after "dpstackd". */
static const char *build(const struct eal_host *h)
{
	int n = eal_args_build(&d, h, argv, store, sizeof(store), err, sizeof(err));
	if (n < 0)
		return NULL;
	line[0] = '\0';
	for (int i = 1; i < n; i++)
		snprintf(line + strlen(line), sizeof(line) - strlen(line), "%s%s", i > 1 ? " " : "",
			 argv[i]);
	assert_null(argv[n]);
	return line;
}

static void test_no_memory_option_without_hugepages_adds_no_huge_size_no_shconf(void **state)
{
	setup_daemon("", 1);
	struct eal_host h = host(2, 0);
	assert_string_equal(build(&h), "--lcores=0@0,1@1 --vdev=net_af_xdp0,iface=veth0 "
				       "--no-pci --no-huge -m 512 --no-shconf");
}

static void test_enough_hugepages_in_memory(void **state)
{
	setup_daemon("", 1);
	struct eal_host h = host(4, EAL_MIN_FREE_HUGEPAGES);
	assert_string_equal(build(&h), "--lcores=0@0,1@1 --vdev=net_af_xdp0,iface=veth0 "
				       "--no-pci --in-memory");
}

static void test_size_option_keeps_no_huge_and_no_shconf(void **state)
{
	setup_daemon("-m 256", 1);
	struct eal_host h = host(2, 0);
	assert_string_equal(build(&h), "-m 256 --lcores=0@0,1@1 --vdev=net_af_xdp0,iface=veth0 "
				       "--no-pci --no-huge --no-shconf");
	assert_int_equal(eal_args_memory_mb(&d), 256);
}

static void test_no_huge_alone_gets_size_and_no_shconf(void **state)
{
	setup_daemon("--no-huge", 1);
	struct eal_host h = host(2, 1024);
	assert_true(eal_args_no_huge(&d, &h));
	assert_string_equal(build(&h), "--no-huge --lcores=0@0,1@1 "
				       "--vdev=net_af_xdp0,iface=veth0 --no-pci -m 512 --no-shconf");
}

static void test_file_prefix_without_hugepages_no_huge_and_shared_config(void **state)
{
	setup_daemon("--file-prefix=a", 1);
	struct eal_host h = host(2, 0);
	assert_string_equal(build(&h), "--file-prefix=a --lcores=0@0,1@1 "
				       "--vdev=net_af_xdp0,iface=veth0 --no-pci --no-huge -m 512");
}

static void test_file_prefix_with_hugepages_keeps_files(void **state)
{
	setup_daemon("--file-prefix a", 1);
	struct eal_host h = host(2, 512);
	assert_string_equal(build(&h), "--file-prefix a --lcores=0@0,1@1 "
				       "--vdev=net_af_xdp0,iface=veth0 --no-pci");
}

static void test_hugepage_options_are_the_users(void **state)
{
	setup_daemon("--socket-mem=300,100", 1);
	struct eal_host h = host(2, 0);
	assert_false(eal_args_no_huge(&d, &h));
	assert_int_equal(eal_args_memory_mb(&d), 400);
	assert_string_equal(build(&h), "--socket-mem=300,100 --lcores=0@0,1@1 "
				       "--vdev=net_af_xdp0,iface=veth0 --no-pci");
}

static void test_workers_as_many_as_cpus_share_first_with_control(void **state)
{
	setup_daemon("--no-huge", 2);
	struct eal_host h = host(2, 0);
	assert_non_null(strstr(build(&h), "--lcores=0@0,1@0,2@1 "));
}

static void test_workers_on_allowed_cpus_only(void **state)
{
	setup_daemon("--no-huge", 2);
	struct eal_host h = {.nb_cpus = 3, .cpus = {2, 5, 7}};
	assert_non_null(strstr(build(&h), "--lcores=0@2,1@5,2@7 "));
}

static void test_workers_beyond_cpus_refused_with_what_works(void **state)
{
	setup_daemon("", 3);
	struct eal_host h = host(2, 0);
	assert_null(build(&h));
	assert_string_equal(err, "workers 3: this process may use 2 CPU(s), one for each worker: "
				 "use 'workers 2' or fewer");
}

static void test_cpu_list_with_cpu_0_moves_main_lcore(void **state)
{
	setup_daemon("", 2);
	d.worker_lcores_given = true;
	d.worker_lcores[0] = 0;
	d.worker_lcores[1] = 1;
	struct eal_host h = host(2, 0);
	assert_non_null(strstr(build(&h), "--lcores=2@0,0@0,1@1 --main-lcore=2 "));
}

static void test_cpu_list_leaves_a_cpu_for_control(void **state)
{
	setup_daemon("", 1);
	d.worker_lcores_given = true;
	d.worker_lcores[0] = 0;
	struct eal_host h = host(2, 0);
	assert_non_null(strstr(build(&h), "--lcores=1@1,0@0 --main-lcore=1 "));
}

static void test_cpu_list_outside_affinity_refused(void **state)
{
	setup_daemon("", 1);
	d.worker_lcores_given = true;
	d.worker_lcores[0] = 5;
	struct eal_host h = host(2, 0);
	assert_null(build(&h));
	assert_string_equal(err, "workers: CPU 5 is not one this process may use "
				 "(2 available, from 0 to 1)");
}

static void test_users_lcores_left_alone(void **state)
{
	setup_daemon("--lcores=0@0,1@0,2@1", 2);
	struct eal_host h = host(1, 0);
	assert_string_equal(build(&h), "--lcores=0@0,1@0,2@1 --vdev=net_af_xdp0,iface=veth0 "
				       "--no-pci --no-huge -m 512 --no-shconf");
}

static void test_too_long_refused(void **state)
{
	setup_daemon("", 1);
	struct eal_host h = host(2, 0);
	assert_int_equal(eal_args_build(&d, &h, argv, store, 40, err, sizeof(err)), -1);
	assert_string_equal(err, "EAL arguments too long");
}

#define CAP(c) (UINT64_C(1) << (c))
#define ALL_CAPS (~UINT64_C(0))

static void test_caps_af_xdp_needs_raw_admin_sys_admin(void **state)
{
	setup_daemon("", 1);
	unsigned port;
	assert_int_equal(port_caps_missing(&d, ALL_CAPS, UINT64_MAX, &port), 0);
	uint64_t without = ALL_CAPS & ~CAP(CAP_SYS_ADMIN) & ~CAP(CAP_NET_RAW) & ~CAP(CAP_BPF);
	assert_int_equal(port_caps_missing(&d, without, UINT64_MAX, &port),
			 CAP(CAP_SYS_ADMIN) | CAP(CAP_NET_RAW));
	assert_int_equal(port, 0);
}

static void test_caps_ipc_lock_only_when_memlock_too_small(void **state)
{
	setup_daemon("", 1);
	unsigned port;
	uint64_t without = ALL_CAPS & ~CAP(CAP_IPC_LOCK);
	assert_int_equal(port_caps_missing(&d, without, UINT64_MAX, &port), 0);
	assert_int_equal(port_caps_missing(&d, without, 8 << 20, &port), CAP(CAP_IPC_LOCK));
	d.nb_mbufs = 2048;
	assert_int_equal(port_caps_missing(&d, without, 8 << 20, &port), 0);
}

static void test_caps_af_packet_and_other_ports(void **state)
{
	setup_daemon("", 1);
	d.nb_ports = 3;
	strcpy(d.ports[0].devargs, "net_memif0,role=server");
	strcpy(d.ports[1].devargs, "0000:01:00.0");
	strcpy(d.ports[2].devargs, "net_af_packet0,iface=veth0");
	unsigned port;
	assert_int_equal(port_caps_missing(&d, 0, 0, &port), CAP(CAP_NET_RAW) | CAP(CAP_NET_ADMIN));
	assert_int_equal(port, 2);
}

static void test_caps_tap_needs_net_admin_ring_vhost_none(void **state)
{
	setup_daemon("", 1);
	d.nb_ports = 3;
	strcpy(d.ports[0].devargs, "net_ring0");
	strcpy(d.ports[1].devargs, "net_vhost0,iface=/run/v.sock");
	strcpy(d.ports[2].devargs, "net_tap0,iface=dtap0");
	unsigned port;
	assert_int_equal(port_caps_missing(&d, 0, 0, &port), CAP(CAP_NET_ADMIN));
	assert_int_equal(port, 2);
	d.nb_ports = 2;
	assert_int_equal(port_caps_missing(&d, 0, 0, &port), 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_no_memory_option_without_hugepages_adds_no_huge_size_no_shconf),
		cmocka_unit_test(test_enough_hugepages_in_memory),
		cmocka_unit_test(test_size_option_keeps_no_huge_and_no_shconf),
		cmocka_unit_test(test_no_huge_alone_gets_size_and_no_shconf),
		cmocka_unit_test(test_file_prefix_without_hugepages_no_huge_and_shared_config),
		cmocka_unit_test(test_file_prefix_with_hugepages_keeps_files),
		cmocka_unit_test(test_hugepage_options_are_the_users),
		cmocka_unit_test(test_workers_as_many_as_cpus_share_first_with_control),
		cmocka_unit_test(test_workers_on_allowed_cpus_only),
		cmocka_unit_test(test_workers_beyond_cpus_refused_with_what_works),
		cmocka_unit_test(test_cpu_list_with_cpu_0_moves_main_lcore),
		cmocka_unit_test(test_cpu_list_leaves_a_cpu_for_control),
		cmocka_unit_test(test_cpu_list_outside_affinity_refused),
		cmocka_unit_test(test_users_lcores_left_alone),
		cmocka_unit_test(test_too_long_refused),
		cmocka_unit_test(test_caps_af_xdp_needs_raw_admin_sys_admin),
		cmocka_unit_test(test_caps_ipc_lock_only_when_memlock_too_small),
		cmocka_unit_test(test_caps_af_packet_and_other_ports),
		cmocka_unit_test(test_caps_tap_needs_net_admin_ring_vhost_none),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
