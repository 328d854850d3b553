#include "counters.h"

const struct stack_counter_info stack_event_info[STACK_EV_COUNT] = {
#define STACK_INFO(id, name, text) [STACK_EV_##id] = {name, text},
	STACK_EVENT_LIST(STACK_INFO)
#undef STACK_INFO
};

const struct stack_counter_info stack_drop_info[STACK_DROP_COUNT] = {
#define STACK_INFO(id, name, text) [STACK_DROP_##id] = {name, text},
	STACK_DROP_LIST(STACK_INFO)
#undef STACK_INFO
};
