/*
 * `ctrap`: a C provider whose plans trap, for the tests that show a trap in
 * a C provider fails that one resource with a clear diagnostic and never
 * the host. `ctrap_ok` plans like any resource (and declares every kind of
 * schema item); each other type traps in plan in its own way.
 */
#include <stdlib.h>
#include <string.h>

#include "cairn.h"

static void schema(void) {
    const char *types[] = {"ctrap_abort", "ctrap_out_of_bounds", "ctrap_fatal", "ctrap_oom"};
    for (size_t i = 0; i < sizeof types / sizeof *types; i++) {
        cairn_block *b = cairn_resource(types[i], 0, "A resource whose plan traps (but ctrap_ok).");
        cairn_attribute(b, "id", cairn_type_string(), CAIRN_COMPUTED, "Set on apply.");
    }
    /* ctrap_ok also carries every kind of schema item the SDK declares, so
     * that a test sees each travel to the host and back. */
    cairn_block *ok = cairn_resource("ctrap_ok", 0, "Plans and applies like any resource.");
    cairn_attribute(ok, "id", cairn_type_string(), CAIRN_COMPUTED, "Set on apply.");
    cairn_attribute(ok, "password", cairn_type_string(), CAIRN_OPTIONAL | CAIRN_SENSITIVE | CAIRN_WRITE_ONLY,
                    "Sent on plan and apply, never stored.");
    cairn_attribute(ok, "password_length", cairn_type_number(), CAIRN_COMPUTED, "The write-only password's length.");
    cairn_type *point = cairn_type_object();
    cairn_type_field(point, "x", cairn_type_number());
    cairn_type_field(point, "y", cairn_type_number());
    cairn_type *pair = cairn_type_tuple();
    cairn_type_element(pair, cairn_type_string());
    cairn_type_element(pair, cairn_type_bool());
    cairn_attribute(ok, "point", point, CAIRN_OPTIONAL, "An object type.");
    cairn_attribute(ok, "pair", pair, CAIRN_OPTIONAL, "A tuple type.");
    cairn_attribute(ok, "tags", cairn_type_set(cairn_type_string()), CAIRN_OPTIONAL, "A set.");
    cairn_block *owner = cairn_nested_attribute(ok, "owners", CAIRN_NEST_LIST, CAIRN_OPTIONAL, "Nested attributes.");
    cairn_attribute(owner, "name", cairn_type_string(), CAIRN_REQUIRED, "The owner's name.");
    cairn_block *rule = cairn_nested_block(ok, "rule", CAIRN_NEST_LIST, 0, 2, "A nested block.");
    cairn_attribute(rule, "port", cairn_type_number(), CAIRN_REQUIRED, "A port.");
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
        /* Write-only: the configuration has it, the plan does not. */
        const cairn_value *password = cairn_get(a->config, "password");
        cairn_set(a->new_state, "password_length", cairn_int((int64_t)cairn_str_len(password)));
    }
}

static void validate(const char *type_name, const cairn_value *config) {
    (void)type_name;
    const cairn_value *rules = cairn_get(config, "rule");
    for (size_t i = 0; i < cairn_len(rules); i++) {
        if (cairn_as_int(cairn_get(cairn_at(rules, i), "port"), 1) == 0) {
            cairn_error(cairn_format("rule[%zu].port", i), "Port 0 is not a port");
        }
    }
}

static const cairn_provider ctrap = {.schema = schema, .validate = validate, .plan = plan, .apply = apply};

CAIRN_PROVIDER(ctrap, "ctrap", "0.1.0")
