#include "port_devargs.h"

#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

bool port_devargs_driver_is(const char *devargs, const char *driver)
{
	size_t n = strlen(driver);
	if (strncmp(devargs, driver, n) != 0)
		return false;
	const char *p = devargs + n;
	while (isdigit((unsigned char)*p))
		p++;
	return *p == '\0' || *p == ',';
}

bool port_devargs_value(const char *devargs, const char *key, char *val, size_t len)
{
	size_t n = strlen(key);
	for (const char *p = strchr(devargs, ','); p != NULL; p = strchr(p + 1, ',')) {
		if (strncmp(p + 1, key, n) != 0 || p[1 + n] != '=')
			continue;
		const char *v = p + 2 + n;
		size_t vlen = strcspn(v, ",");
		if (vlen >= len)
			return false;
		memcpy(val, v, vlen);
		val[vlen] = '\0';
		return true;
	}
	return false;
}

bool port_devargs_uint(const char *devargs, const char *key, unsigned *v)
{
	char s[16], *end;
	if (!port_devargs_value(devargs, key, s, sizeof(s)) || !isdigit((unsigned char)s[0]))
		return false;
	errno = 0;
	unsigned long x = strtoul(s, &end, 10);
	if (*end != '\0' || errno != 0 || x > 0xffffffffu)
		return false;
	*v = (unsigned)x;
	return true;
}

int port_devargs_append(char *devargs, size_t len, const char *key, const char *value)
{
	size_t used = strlen(devargs);
	int n = snprintf(devargs + used, len - used, ",%s=%s", key, value);
	if (n < 0 || (size_t)n >= len - used) {
		devargs[used] = '\0';
		return -1;
	}
	return 0;
}
