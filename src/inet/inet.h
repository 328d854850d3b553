/* The Internet protocol suite as one stack instance runs it: the list of protocols
 * registered in it (src/stack/stack_proto.h) and their default parameters. The one place
 * that knows every protocol; everything below it depends only on what is below. */
#ifndef DPS_INET_INET_H
#define DPS_INET_INET_H

#include "stack/stack.h"

/* Parameters of a stack running ARP, IPv4 with ICMP, UDP and TCP, with every default set. */
void inet_params_default(struct stack_params *p);

#endif
