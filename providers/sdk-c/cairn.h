/*
 * cairn.h: write cairn providers in C.
 *
 * A provider fills in a `cairn_provider` table of callbacks and names it
 * once with CAIRN_PROVIDER(table, "name", "version"). The SDK (cairn.c)
 * owns everything that touches the `cairn:provider` WIT ABI: the
 * wit-bindgen glue (glue/), the flattened wire encodings of values and
 * schemas, and who frees what.
 *
 *     static void schema(void) {
 *         cairn_block *b = cairn_resource("hello_greeting", 0, "A greeting.");
 *         cairn_attribute(b, "name", cairn_type_string(), CAIRN_REQUIRED | CAIRN_FORCES_REPLACEMENT, "Who.");
 *         cairn_attribute(b, "text", cairn_type_string(), CAIRN_COMPUTED, "The greeting.");
 *     }
 *     static void apply(cairn_apply *a) {
 *         if (cairn_apply_is_delete(a)) return;
 *         cairn_set(a->new_state, "text", cairn_stringf("Hello, %s!", cairn_get_str(a->planned, "name")));
 *     }
 *     static const cairn_provider hello = { .schema = schema, .apply = apply };
 *     CAIRN_PROVIDER(hello, "hello", "0.1.0")
 *
 * Memory: never free anything the SDK gives you or makes for you. Every
 * value, string and buffer made with this API during a call lives until
 * that call has been answered, then the SDK releases it all at once. What
 * is made in `schema` and `configure` lives as long as the instance (so a
 * provider may keep its configuration in a global). The answers the SDK
 * hands to the host are copies in heap memory, which the generated glue
 * frees after the call: a provider never meets that rule.
 *
 * Errors: report them with cairn_error()/cairn_warning() (with an attribute
 * path such as "rule[0].port" or "tags[\"team\"]") and return. A call that
 * reported an error answers only its diagnostics. A trap (abort(), an
 * out-of-bounds access, cairn_fatal()) fails that one resource; the host
 * quotes what the provider wrote to stderr and throws the instance away.
 */
#ifndef CAIRN_H
#define CAIRN_H

#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* ---------------------------------------------------------------- values */

/* A dynamic value. A NULL pointer reads as a null value everywhere. */
typedef struct cairn_value cairn_value;

/* What a value is. */
typedef enum cairn_kind {
    CAIRN_NULL,
    CAIRN_UNKNOWN, /* known only after apply; planned values only */
    CAIRN_BOOL,
    CAIRN_NUMBER, /* an integer (exact in 64 bits) or a float */
    CAIRN_STRING,
    CAIRN_LIST,
    CAIRN_SET,
    CAIRN_MAP,    /* string keys to elements of one type */
    CAIRN_OBJECT, /* named attributes */
    CAIRN_TUPLE,
} cairn_kind;

/* Making values (all live until the call is answered). */
cairn_value *cairn_null(void);
cairn_value *cairn_unknown(void);
cairn_value *cairn_bool(bool b);
cairn_value *cairn_int(int64_t n);
cairn_value *cairn_float(double n);
/* A copy of the NUL-terminated `s` (NULL gives a null value). */
cairn_value *cairn_string(const char *s);
/* A copy of `len` bytes at `s`, which may hold NULs. */
cairn_value *cairn_string_n(const char *s, size_t len);
/* A string made like printf's. */
cairn_value *cairn_stringf(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
cairn_value *cairn_object(void);
cairn_value *cairn_map(void);
cairn_value *cairn_list(void);
cairn_value *cairn_set_of(void);
cairn_value *cairn_tuple(void);
/* Marks `v` (and all inside it) secret; returns `v`. */
cairn_value *cairn_sensitive(cairn_value *v);
/* A deep copy of `v`. */
cairn_value *cairn_copy(const cairn_value *v);

/* Sets attribute (object) or key (map) `name` to `v` (NULL: a null value),
 * replacing what was there. */
void cairn_set(cairn_value *object_or_map, const char *name, cairn_value *v);
/* Appends `v` to a list, set or tuple. */
void cairn_push(cairn_value *list_set_or_tuple, cairn_value *v);

/* Reading values. */
cairn_kind cairn_kind_of(const cairn_value *v);
bool cairn_is_null(const cairn_value *v);
/* Is `v` itself unknown? */
bool cairn_is_unknown(const cairn_value *v);
/* Is `v` wholly known (no unknown anywhere inside)? */
bool cairn_is_known(const cairn_value *v);
bool cairn_is_sensitive(const cairn_value *v);
/* Attribute or key `name` of an object or map: a null value when absent. */
const cairn_value *cairn_get(const cairn_value *object_or_map, const char *name);
/* The text of a known string, NUL-terminated; NULL for anything else. */
const char *cairn_str(const cairn_value *v);
/* Its length in bytes (0 unless a known string). */
size_t cairn_str_len(const cairn_value *v);
/* cairn_str(cairn_get(v, name)). */
const char *cairn_get_str(const cairn_value *v, const char *name);
/* A known bool, integer or number, or `fallback`. An integral float reads
 * as an integer too. */
bool cairn_as_bool(const cairn_value *v, bool fallback);
int64_t cairn_as_int(const cairn_value *v, int64_t fallback);
double cairn_as_float(const cairn_value *v, double fallback);
/* The number of elements (list, set, tuple) or entries (map, object). */
size_t cairn_len(const cairn_value *v);
/* Element `i`, or the value of entry `i`, in order (maps and objects are
 * kept sorted by key). A null value past the end. */
const cairn_value *cairn_at(const cairn_value *v, size_t i);
/* The key of entry `i` of a map or object; NULL past the end. */
const char *cairn_key_at(const cairn_value *v, size_t i);
/* Same kind and same contents (sets in any order); marks are ignored. */
bool cairn_equal(const cairn_value *a, const cairn_value *b);

/* ---------------------------------------------------------------- schemas */

/* A value type. */
typedef struct cairn_type cairn_type;
cairn_type *cairn_type_bool(void);
cairn_type *cairn_type_number(void);
cairn_type *cairn_type_string(void);
/* Any type: the value decides. */
cairn_type *cairn_type_dynamic(void);
cairn_type *cairn_type_list(cairn_type *element);
cairn_type *cairn_type_set(cairn_type *element);
cairn_type *cairn_type_map(cairn_type *element);
/* An object type; add its attributes with cairn_type_field. */
cairn_type *cairn_type_object(void);
void cairn_type_field(cairn_type *object, const char *name, cairn_type *type);
/* A tuple type; add its element types in order with cairn_type_element. */
cairn_type *cairn_type_tuple(void);
void cairn_type_element(cairn_type *tuple, cairn_type *type);

/* An attribute's flags, or-ed together. */
enum {
    CAIRN_REQUIRED = 1 << 0, /* the configuration must set it */
    CAIRN_OPTIONAL = 1 << 1, /* the configuration may set it */
    CAIRN_COMPUTED = 1 << 2, /* the provider sets it when the configuration does not */
    CAIRN_SENSITIVE = 1 << 3, /* never displayed */
    CAIRN_WRITE_ONLY = 1 << 4, /* sent on plan and apply, never stored */
    /* A change replaces the object (requires-replace). The default plan
     * applies it: the path is declared, and when the value changes every
     * computed attribute the configuration leaves null becomes unknown. */
    CAIRN_FORCES_REPLACEMENT = 1 << 5,
};

/* How nested blocks or nested attribute objects are gathered. */
typedef enum cairn_nesting {
    CAIRN_NEST_SINGLE,
    CAIRN_NEST_LIST,
    CAIRN_NEST_SET,
    CAIRN_NEST_MAP,
} cairn_nesting;

/* The contents of a block: attributes and nested blocks. */
typedef struct cairn_block cairn_block;

/* Declare (in the `schema` callback) a resource type, a data source, or
 * the provider's own block; returns its top-level block. */
cairn_block *cairn_resource(const char *type_name, uint64_t version, const char *description);
cairn_block *cairn_data_source(const char *type_name, const char *description);
cairn_block *cairn_provider_block(const char *description);
/* An attribute of `block` with `type` and CAIRN_* flags. */
void cairn_attribute(cairn_block *block, const char *name, cairn_type *type, unsigned flags,
                     const char *description);
/* A nested attribute type (`rules = [{ … }]`): returns the block to declare
 * its objects' attributes in (attributes only). */
cairn_block *cairn_nested_attribute(cairn_block *block, const char *name, cairn_nesting nesting,
                                    unsigned flags, const char *description);
/* A nested block type (`rule { … }`): returns its block. `max_items` 0 is
 * no limit. */
cairn_block *cairn_nested_block(cairn_block *block, const char *name, cairn_nesting nesting,
                                uint32_t min_items, uint32_t max_items, const char *description);

/* ------------------------------------------------------------ diagnostics */

/* Report an error or a warning about the attribute at `path` (NULL or ""
 * for the whole object): `name`, `rule[0].port`, `tags["team"]`. The
 * summary is made like printf's; add a longer text with cairn_detail. */
void cairn_error(const char *path, const char *summary_fmt, ...) __attribute__((format(printf, 2, 3)));
void cairn_warning(const char *path, const char *summary_fmt, ...) __attribute__((format(printf, 2, 3)));
/* Sets the detail of the diagnostic reported last. */
void cairn_detail(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
/* Has this call reported an error? */
bool cairn_failed(void);
/* Writes the message to stderr and traps: the host fails the resource and
 * quotes the message. For states a provider cannot go on from. */
_Noreturn void cairn_fatal(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

/* ---------------------------------------------------------------- logging */

typedef enum cairn_level {
    CAIRN_LOG_TRACE,
    CAIRN_LOG_DEBUG,
    CAIRN_LOG_INFO,
    CAIRN_LOG_WARN,
    CAIRN_LOG_ERROR,
} cairn_level;

/* One line into the host's log (shown with CAIRN_LOG=<provider>=info…). */
void cairn_log(cairn_level level, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* ------------------------------------------------------------ the helpers */

/* Bytes that live until the call is answered. */
typedef struct cairn_bytes {
    const uint8_t *data;
    size_t len;
} cairn_bytes;

/* `len` bytes of memory that live until the call is answered. */
void *cairn_alloc(size_t len);
/* A string made like printf's that lives until the call is answered. */
char *cairn_format(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

/* Sets the permission bits of a file in a read-write grant (WASI has no
 * chmod); with `apply_umask` cairn's umask clears bits first. NULL on
 * success, else the host's message. */
const char *cairn_set_permissions(const char *path, uint32_t mode, bool apply_umask);

/* ------------------------------------------------------------ the lifecycle */

/* What `plan` gets and answers. The SDK fills `planned` with the default
 * plan before calling: the proposed new state, write-only attributes null,
 * and on create every computed attribute the configuration leaves null
 * unknown. After the callback returns, CAIRN_FORCES_REPLACEMENT attributes
 * and cairn_plan_requires_replace paths are declared, and when one of them
 * changes, the computed attributes the configuration leaves null (and the
 * callback did not set) become unknown: the new object's values are not
 * the old one's. */
typedef struct cairn_plan {
    const char *type_name;
    const cairn_value *prior;    /* null on create */
    const cairn_value *proposed; /* configured values, prior computed ones */
    const cairn_value *config;   /* the configuration alone; may hold unknowns */
    cairn_bytes prior_private;
    /* The answer. Edit it with the helpers below or cairn_set. */
    cairn_value *planned;
    cairn_bytes planned_private; /* starts as prior_private */
    struct cairn_plan_state *internal;
} cairn_plan;

bool cairn_plan_is_create(const cairn_plan *p);
/* Sets computed attribute `name` (a value the provider can predict, or
 * cairn_unknown()); a replacement leaves it as set. */
void cairn_plan_set(cairn_plan *p, const char *name, cairn_value *v);
/* Uses `v` for optional+computed `name` when the configuration leaves it
 * null (Terraform's Default). */
void cairn_plan_default(cairn_plan *p, const char *name, cairn_value *v);
/* A change of the attribute at `path` replaces the object (for paths the
 * schema's flags cannot name, such as "rule[0].port"). */
void cairn_plan_requires_replace(cairn_plan *p, const char *path);
/* Does the planned value of top-level `name` differ from the prior one
 * (always true on create)? */
bool cairn_plan_changed(const cairn_plan *p, const char *name);

/* What `apply` gets and answers. */
typedef struct cairn_apply {
    const char *type_name;
    const cairn_value *prior;   /* null on create */
    const cairn_value *planned; /* null for a delete */
    const cairn_value *config;  /* fully known; null for a delete */
    cairn_bytes planned_private;
    /* Stable across retries of the same planned change. */
    const char *idempotency_key;
    /* The answer: starts as a copy of `planned` (null for a delete). Fill
     * in its unknowns; leave it null after a delete. A call that reports an
     * error answers the prior state: the object is as it was. */
    cairn_value *new_state;
    cairn_bytes private_data; /* starts as planned_private */
} cairn_apply;

bool cairn_apply_is_create(const cairn_apply *a);
bool cairn_apply_is_delete(const cairn_apply *a);
/* The planned value of `name` when the plan knew it, else `computed`: keeps
 * a promise the plan made. */
cairn_value *cairn_apply_planned_or(const cairn_apply *a, const char *name, cairn_value *computed);

/* What `read` (refresh) gets and answers. */
typedef struct cairn_read {
    const char *type_name;
    const cairn_value *current; /* the state as the host has it */
    cairn_bytes private_data;
    /* The answer: starts as a copy of `current`. Set it to NULL when the
     * object is gone (an answer, not an error). */
    cairn_value *new_state;
} cairn_read;

/* The callbacks of a provider. Only `schema` is required; the others have
 * defaults: configure/validate accept anything, plan answers the default
 * plan, apply fails, read keeps the state, import and data sources fail. */
typedef struct cairn_provider {
    /* Declare the resource types and data sources (cairn_resource…). Must
     * not depend on configuration. */
    void (*schema)(void);
    /* Read the `provider` block (a null value when there is none). */
    void (*configure)(const cairn_value *config);
    /* Check a configuration beyond the schema; say nothing about unknowns. */
    void (*validate)(const char *type_name, const cairn_value *config);
    void (*plan)(cairn_plan *p);
    void (*apply)(cairn_apply *a);
    void (*read)(cairn_read *r);
    /* The state of the existing object `id`, for adoption; NULL with an
     * error when there is none. */
    cairn_value *(*import_resource)(const char *type_name, const char *id);
    /* `config` with every computed attribute filled in. */
    cairn_value *(*read_data_source)(const char *type_name, const cairn_value *config);
    /* The state stored with schema `version` (JSON text of its attributes)
     * in the current layout. Without it, an older version is an error. */
    cairn_value *(*upgrade_state)(const char *type_name, uint64_t version, const char *raw_json);
} cairn_provider;

/* The provider of this component: set by CAIRN_PROVIDER. */
extern const cairn_provider *const cairn_the_provider;

/* ------------------------------------------------------------ testing natively */

/* A provider's logic can be unit-tested natively, without a component:
 * `cc -Isdk test.c provider.c sdk/cairn.c` (the SDK leaves out the glue
 * when not compiled for wasm). Each function runs one call as the host
 * would; what it returns lives until cairn_test_reset. */

/* The plan of `config` over `prior` (NULL for a create), with the proposed
 * new state made as the host makes it: the configured values, and the
 * prior value of each computed attribute the configuration leaves null. */
cairn_plan *cairn_test_plan(const char *type_name, const cairn_value *prior, const cairn_value *config);
/* The apply of `planned` (NULL: a delete) over `prior`. */
cairn_apply *cairn_test_apply(const char *type_name, const cairn_value *prior, const cairn_value *planned,
                              const cairn_value *config);
/* The refresh of `current`: the answer's new_state is NULL when gone. */
cairn_read *cairn_test_read(const char *type_name, const cairn_value *current);
/* The import of `id`: the state, or NULL. */
cairn_value *cairn_test_import(const char *type_name, const char *id);
/* The provider's validation of `config`. */
void cairn_test_validate(const char *type_name, const cairn_value *config);
/* The diagnostics of the last call: how many, and each as
 * "error: SUMMARY (at PATH): DETAIL". */
size_t cairn_test_diagnostic_count(void);
const char *cairn_test_diagnostic(size_t i);
/* Releases everything made since the last reset. */
void cairn_test_reset(void);

/* Exports `table` (a `cairn_provider`) as the component's provider, with the
 * name and version (string literals) cairn reads from the file's
 * `cairn-provider-identity` custom section before running any code. */
#define CAIRN_PROVIDER(table, name, version)                                                   \
    const cairn_provider *const cairn_the_provider = &(table);                                 \
    CAIRN_IDENTITY_SECTION_(name, version)

#ifdef __wasm__
/* A custom section is data the host reads from the file, never code. */
#define CAIRN_IDENTITY_SECTION_(name, version)                                                 \
    __asm__(".section \".custom_section.cairn-provider-identity\",\"\",@\n"                    \
            ".ascii \"name=" name "\\nversion=" version "\\n\"\n"                              \
            ".text\n");
#else
/* Natively (a provider's unit tests) there is no component to mark. */
#define CAIRN_IDENTITY_SECTION_(name, version)
#endif

#ifdef __cplusplus
}
#endif

#endif /* CAIRN_H */
