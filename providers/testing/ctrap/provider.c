/*
 * `ctrap`: a C provider whose plans trap, for the tests that show a trap in
 * a C provider fails that one resource with a clear diagnostic and never
 * the host. `ctrap_ok` plans like any resource; each other type traps in
 * plan in its own way.
 */
#include <stdlib.h>
#include <string.h>

#include "cairn.h"

static void schema(void) {
    const char *types[] = {"ctrap_ok", "ctrap_abort", "ctrap_out_of_bounds", "ctrap_fatal", "ctrap_oom"};
    for (size_t i = 0; i < sizeof types / sizeof *types; i++) {
        cairn_block *b = cairn_resource(types[i], 0, "A resource whose plan traps (but ctrap_ok).");
        cairn_attribute(b, "id", cairn_type_string(), CAIRN_COMPUTED, "Set on apply.");
    }
}

static void plan(cairn_plan *p) {
    const char *type = p->type_name;
    if (strcmp(type, "ctrap_abort") == 0) {
        abort();
    } else if (strcmp(type, "ctrap_out_of_bounds") == 0) {
        /* Far past the end of linear memory. */
        volatile int *far = (volatile int *)(uintptr_t)0xfffffff0u;
        *far = 1;
    } else if (strcmp(type, "ctrap_fatal") == 0) {
        cairn_fatal("ctrap: deliberate fatal error in plan of %s", type);
    } else if (strcmp(type, "ctrap_oom") == 0) {
        /* Memory the SDK's arena hands out until malloc fails: a trap. */
        for (;;) {
            memset(cairn_alloc(1 << 20), 1, 1 << 20);
        }
    }
}

static void apply(cairn_apply *a) {
    if (!cairn_apply_is_delete(a)) {
        cairn_set(a->new_state, "id", cairn_string(a->idempotency_key));
    }
}

static const cairn_provider ctrap = {.schema = schema, .plan = plan, .apply = apply};

CAIRN_PROVIDER(ctrap, "ctrap", "0.1.0")
