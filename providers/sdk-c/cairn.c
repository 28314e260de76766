/*
 * cairn.c: the C SDK's implementation (see cairn.h for the API).
 *
 * Three parts:
 * - memory: two arenas. Everything made during a call comes from the call
 *   arena, released at once after the answer is built; what `schema` and
 *   `configure` make comes from the instance arena, kept.
 * - the value, type and schema models, and diagnostics.
 * - the exports: each converts the glue's wire records into the models
 *   (then frees the records, which the callee owns), calls the provider,
 *   and builds the answer in malloc'd memory, which the glue's post-return
 *   functions free after the host has read it.
 */
#include "cairn.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "glue/provider_world.h"

/* ================================================================ memory */

/* A block of arena memory; allocations are carved from `data`. */
typedef struct chunk {
    struct chunk *next;
    size_t used, cap;
    _Alignas(16) unsigned char data[];
} chunk;

typedef struct arena {
    chunk *head;
} arena;

static arena instance_arena, call_arena;
/* Where allocations go now. */
static arena *current = &call_arena;

/* Out of memory is a trap: there is nothing sensible left to do. */
static void *checked(void *p, size_t len) {
    if (p == NULL && len != 0) {
        fprintf(stderr, "cairn sdk: out of memory (wanted %zu bytes)\n", len);
        abort();
    }
    return p;
}

static void *arena_alloc(arena *a, size_t len) {
    len = (len + 15) & ~(size_t)15;
    if (a->head == NULL || a->head->cap - a->head->used < len) {
        size_t cap = len > 16384 ? len : 16384;
        chunk *c = checked(malloc(sizeof(chunk) + cap), cap);
        c->next = a->head;
        c->used = 0;
        c->cap = cap;
        a->head = c;
    }
    void *p = a->head->data + a->head->used;
    a->head->used += len;
    memset(p, 0, len);
    return p;
}

static void arena_release(arena *a) {
    while (a->head != NULL) {
        chunk *next = a->head->next;
        free(a->head);
        a->head = next;
    }
}

void *cairn_alloc(size_t len) {
    return arena_alloc(current, len);
}

static char *arena_strdup_n(const char *s, size_t len) {
    char *out = cairn_alloc(len + 1);
    memcpy(out, s, len);
    out[len] = '\0';
    return out;
}

static char *arena_strdup(const char *s) {
    return s == NULL ? NULL : arena_strdup_n(s, strlen(s));
}

static char *vformat(const char *fmt, va_list args) {
    va_list again;
    va_copy(again, args);
    int len = vsnprintf(NULL, 0, fmt, args);
    char *out = cairn_alloc(len < 0 ? 1 : (size_t)len + 1);
    if (len >= 0) {
        vsnprintf(out, (size_t)len + 1, fmt, again);
    }
    va_end(again);
    return out;
}

char *cairn_format(const char *fmt, ...) {
    va_list args;
    va_start(args, fmt);
    char *out = vformat(fmt, args);
    va_end(args);
    return out;
}

/* Grows the array at `*items` (of `len` elements of `size` bytes) by one
 * slot, in the current arena; returns the new slot. */
static void *grow(void **items, size_t *len, size_t *cap, size_t size) {
    if (*len == *cap) {
        size_t more = *cap ? 2 * *cap : 4;
        void *bigger = cairn_alloc(more * size);
        if (*len) {
            memcpy(bigger, *items, *len * size);
        }
        *items = bigger;
        *cap = more;
    }
    return (char *)*items + (*len)++ * size;
}

/* malloc'd copies, for answers the glue frees. */
static void *heap_alloc(size_t len) {
    return checked(malloc(len ? len : 1), len);
}

__attribute__((unused)) static void heap_string(provider_world_string_t *out, const char *s, size_t len) {
    out->ptr = heap_alloc(len);
    memcpy(out->ptr, s, len);
    out->len = len;
}

/* ================================================================ values */

/* Refinements of an unknown value, kept so that an unknown from the host
 * goes back as it came. */
typedef struct refinements {
    bool any, not_null, has_prefix, has_lower, has_upper, has_min, has_max;
    char *prefix;
    cairn_provider_types_number_bound_t lower, upper;
    uint64_t min_length, max_length;
} refinements;

struct cairn_value {
    cairn_kind kind;
    bool sensitive;
    bool is_int; /* CAIRN_NUMBER: `i` holds it, else `f` */
    bool b;
    int64_t i;
    double f;
    char *str; /* CAIRN_STRING: NUL-terminated copy */
    size_t str_len;
    /* Collections: elements, and for maps and objects keys sorted. */
    cairn_value **items;
    char **keys;
    size_t len, cap;
    refinements *refine;
};

static cairn_value *make(cairn_kind kind) {
    cairn_value *v = cairn_alloc(sizeof *v);
    v->kind = kind;
    return v;
}

/* Reading a NULL pointer as the null value. */
static const cairn_value the_null = {.kind = CAIRN_NULL};

static const cairn_value *or_null(const cairn_value *v) {
    return v ? v : &the_null;
}

cairn_value *cairn_null(void) { return make(CAIRN_NULL); }
cairn_value *cairn_unknown(void) { return make(CAIRN_UNKNOWN); }
cairn_value *cairn_object(void) { return make(CAIRN_OBJECT); }
cairn_value *cairn_map(void) { return make(CAIRN_MAP); }
cairn_value *cairn_list(void) { return make(CAIRN_LIST); }
cairn_value *cairn_set_of(void) { return make(CAIRN_SET); }
cairn_value *cairn_tuple(void) { return make(CAIRN_TUPLE); }

cairn_value *cairn_bool(bool b) {
    cairn_value *v = make(CAIRN_BOOL);
    v->b = b;
    return v;
}

cairn_value *cairn_int(int64_t n) {
    cairn_value *v = make(CAIRN_NUMBER);
    v->is_int = true;
    v->i = n;
    v->f = (double)n;
    return v;
}

cairn_value *cairn_float(double n) {
    /* Whole numbers in range travel as integers, so that they stay exact. */
    if (n == trunc(n) && n >= -9223372036854775808.0 && n < 9223372036854775808.0) {
        return cairn_int((int64_t)n);
    }
    cairn_value *v = make(CAIRN_NUMBER);
    v->f = n;
    return v;
}

cairn_value *cairn_string_n(const char *s, size_t len) {
    cairn_value *v = make(CAIRN_STRING);
    v->str = arena_strdup_n(s, len);
    v->str_len = len;
    return v;
}

cairn_value *cairn_string(const char *s) {
    return s == NULL ? cairn_null() : cairn_string_n(s, strlen(s));
}

cairn_value *cairn_stringf(const char *fmt, ...) {
    va_list args;
    va_start(args, fmt);
    char *s = vformat(fmt, args);
    va_end(args);
    return cairn_string(s);
}

static void mark_sensitive(cairn_value *v) {
    v->sensitive = true;
    for (size_t i = 0; i < v->len; i++) {
        mark_sensitive(v->items[i]);
    }
}

cairn_value *cairn_sensitive(cairn_value *v) {
    if (v == NULL) {
        v = cairn_null();
    }
    mark_sensitive(v);
    return v;
}

cairn_value *cairn_copy(const cairn_value *from) {
    from = or_null(from);
    cairn_value *v = make(from->kind);
    *v = *from;
    if (from->str) {
        v->str = arena_strdup_n(from->str, from->str_len);
    }
    if (from->refine) {
        v->refine = cairn_alloc(sizeof *v->refine);
        *v->refine = *from->refine;
        v->refine->prefix = arena_strdup(from->refine->prefix);
    }
    v->items = NULL;
    v->keys = NULL;
    v->len = v->cap = 0;
    for (size_t i = 0; i < from->len; i++) {
        if (from->keys) {
            cairn_set(v, from->keys[i], cairn_copy(from->items[i]));
        } else {
            cairn_push(v, cairn_copy(from->items[i]));
        }
    }
    return v;
}

/* Where `key` is in the sorted keys of `v`, or where it would go. */
static size_t key_position(const cairn_value *v, const char *key, bool *found) {
    size_t lo = 0, hi = v->len;
    while (lo < hi) {
        size_t mid = (lo + hi) / 2;
        int c = strcmp(v->keys[mid], key);
        if (c == 0) {
            *found = true;
            return mid;
        }
        if (c < 0) {
            lo = mid + 1;
        } else {
            hi = mid;
        }
    }
    *found = false;
    return lo;
}

static bool is_keyed(const cairn_value *v) {
    return v->kind == CAIRN_MAP || v->kind == CAIRN_OBJECT;
}

static bool is_sequence(const cairn_value *v) {
    return v->kind == CAIRN_LIST || v->kind == CAIRN_SET || v->kind == CAIRN_TUPLE;
}

void cairn_set(cairn_value *v, const char *name, cairn_value *item) {
    if (v == NULL || !is_keyed(v)) {
        cairn_fatal("cairn_set(\"%s\"): the value is a %s, not an object or a map", name,
                    v == NULL ? "null pointer" : "non-keyed value");
    }
    if (item == NULL) {
        item = cairn_null();
    }
    bool found;
    size_t at = key_position(v, name, &found);
    if (found) {
        v->items[at] = item;
        return;
    }
    if (v->len == v->cap) {
        size_t more = v->cap ? 2 * v->cap : 8;
        cairn_value **items = cairn_alloc(more * sizeof *items);
        char **keys = cairn_alloc(more * sizeof *keys);
        if (v->len) {
            memcpy(items, v->items, v->len * sizeof *items);
            memcpy(keys, v->keys, v->len * sizeof *keys);
        }
        v->items = items;
        v->keys = keys;
        v->cap = more;
    }
    memmove(v->items + at + 1, v->items + at, (v->len - at) * sizeof *v->items);
    memmove(v->keys + at + 1, v->keys + at, (v->len - at) * sizeof *v->keys);
    v->items[at] = item;
    v->keys[at] = arena_strdup(name);
    v->len++;
}

void cairn_push(cairn_value *v, cairn_value *item) {
    if (v == NULL || !is_sequence(v)) {
        cairn_fatal("cairn_push: the value is not a list, set or tuple");
    }
    *(cairn_value **)grow((void **)&v->items, &v->len, &v->cap, sizeof item) = item ? item : cairn_null();
}

cairn_kind cairn_kind_of(const cairn_value *v) { return or_null(v)->kind; }
bool cairn_is_null(const cairn_value *v) { return or_null(v)->kind == CAIRN_NULL; }
bool cairn_is_unknown(const cairn_value *v) { return or_null(v)->kind == CAIRN_UNKNOWN; }
bool cairn_is_sensitive(const cairn_value *v) { return or_null(v)->sensitive; }

bool cairn_is_known(const cairn_value *v) {
    v = or_null(v);
    if (v->kind == CAIRN_UNKNOWN) {
        return false;
    }
    for (size_t i = 0; i < v->len; i++) {
        if (!cairn_is_known(v->items[i])) {
            return false;
        }
    }
    return true;
}

const cairn_value *cairn_get(const cairn_value *v, const char *name) {
    v = or_null(v);
    if (!is_keyed(v)) {
        return &the_null;
    }
    bool found;
    size_t at = key_position(v, name, &found);
    return found ? v->items[at] : &the_null;
}

const char *cairn_str(const cairn_value *v) {
    v = or_null(v);
    return v->kind == CAIRN_STRING ? v->str : NULL;
}

size_t cairn_str_len(const cairn_value *v) {
    v = or_null(v);
    return v->kind == CAIRN_STRING ? v->str_len : 0;
}

const char *cairn_get_str(const cairn_value *v, const char *name) {
    return cairn_str(cairn_get(v, name));
}

bool cairn_as_bool(const cairn_value *v, bool fallback) {
    v = or_null(v);
    return v->kind == CAIRN_BOOL ? v->b : fallback;
}

int64_t cairn_as_int(const cairn_value *v, int64_t fallback) {
    v = or_null(v);
    return v->kind == CAIRN_NUMBER && v->is_int ? v->i : fallback;
}

double cairn_as_float(const cairn_value *v, double fallback) {
    v = or_null(v);
    return v->kind == CAIRN_NUMBER ? (v->is_int ? (double)v->i : v->f) : fallback;
}

size_t cairn_len(const cairn_value *v) {
    v = or_null(v);
    return is_keyed(v) || is_sequence(v) ? v->len : 0;
}

const cairn_value *cairn_at(const cairn_value *v, size_t i) {
    v = or_null(v);
    return (is_keyed(v) || is_sequence(v)) && i < v->len ? v->items[i] : &the_null;
}

const char *cairn_key_at(const cairn_value *v, size_t i) {
    v = or_null(v);
    return is_keyed(v) && i < v->len ? v->keys[i] : NULL;
}

bool cairn_equal(const cairn_value *a, const cairn_value *b) {
    a = or_null(a);
    b = or_null(b);
    if (a->kind != b->kind || a->len != b->len) {
        return false;
    }
    switch (a->kind) {
    case CAIRN_NULL:
        return true;
    case CAIRN_UNKNOWN:
        /* Unknown is never known to equal anything. */
        return false;
    case CAIRN_BOOL:
        return a->b == b->b;
    case CAIRN_NUMBER:
        return a->is_int && b->is_int ? a->i == b->i : cairn_as_float(a, 0) == cairn_as_float(b, 0);
    case CAIRN_STRING:
        return a->str_len == b->str_len && memcmp(a->str, b->str, a->str_len) == 0;
    case CAIRN_SET:
        for (size_t i = 0; i < a->len; i++) {
            bool found = false;
            for (size_t j = 0; j < b->len && !found; j++) {
                found = cairn_equal(a->items[i], b->items[j]);
            }
            if (!found) {
                return false;
            }
        }
        return true;
    default:
        for (size_t i = 0; i < a->len; i++) {
            if ((a->keys && strcmp(a->keys[i], b->keys[i]) != 0) || !cairn_equal(a->items[i], b->items[i])) {
                return false;
            }
        }
        return true;
    }
}

/* ================================================================ types and schemas */

typedef enum type_kind { T_BOOL, T_NUMBER, T_STRING, T_DYNAMIC, T_LIST, T_SET, T_MAP, T_OBJECT, T_TUPLE } type_kind;

struct cairn_type {
    type_kind kind;
    cairn_type *element; /* list, set, map */
    /* object fields (with names) or tuple elements */
    char **names;
    cairn_type **types;
    size_t len, cap, names_cap;
};

static cairn_type *type_of(type_kind kind, cairn_type *element) {
    cairn_type *t = cairn_alloc(sizeof *t);
    t->kind = kind;
    t->element = element;
    if ((kind == T_LIST || kind == T_SET || kind == T_MAP) && element == NULL) {
        cairn_fatal("a list, set or map type needs an element type");
    }
    return t;
}

cairn_type *cairn_type_bool(void) { return type_of(T_BOOL, NULL); }
cairn_type *cairn_type_number(void) { return type_of(T_NUMBER, NULL); }
cairn_type *cairn_type_string(void) { return type_of(T_STRING, NULL); }
cairn_type *cairn_type_dynamic(void) { return type_of(T_DYNAMIC, NULL); }
cairn_type *cairn_type_list(cairn_type *element) { return type_of(T_LIST, element); }
cairn_type *cairn_type_set(cairn_type *element) { return type_of(T_SET, element); }
cairn_type *cairn_type_map(cairn_type *element) { return type_of(T_MAP, element); }
cairn_type *cairn_type_object(void) { return type_of(T_OBJECT, NULL); }
cairn_type *cairn_type_tuple(void) { return type_of(T_TUPLE, NULL); }

void cairn_type_field(cairn_type *object, const char *name, cairn_type *type) {
    if (object->kind != T_OBJECT) {
        cairn_fatal("cairn_type_field(\"%s\"): not an object type", name);
    }
    size_t len = object->len, cap = object->cap;
    *(char **)grow((void **)&object->names, &len, &object->names_cap, sizeof(char *)) = arena_strdup(name);
    *(cairn_type **)grow((void **)&object->types, &object->len, &cap, sizeof type) = type;
    object->cap = cap;
}

void cairn_type_element(cairn_type *tuple, cairn_type *type) {
    if (tuple->kind != T_TUPLE) {
        cairn_fatal("cairn_type_element: not a tuple type");
    }
    *(cairn_type **)grow((void **)&tuple->types, &tuple->len, &tuple->cap, sizeof type) = type;
}

typedef struct attribute {
    char *name;
    cairn_type *type;        /* NULL for a nested attribute */
    cairn_block *nested;     /* its objects' block */
    cairn_nesting nesting;
    unsigned flags;
    char *description;
} attribute;

typedef struct nested_block {
    char *name;
    cairn_nesting nesting;
    cairn_block *block;
    uint32_t min_items, max_items;
} nested_block;

struct cairn_block {
    char *description;
    attribute *attributes;
    size_t n_attributes, attributes_cap;
    nested_block *blocks;
    size_t n_blocks, blocks_cap;
};

/* A resource type or data source and its schema. */
typedef struct named_schema {
    char *name;
    uint64_t version;
    cairn_block *block;
} named_schema;

static struct {
    bool declared;
    cairn_block *provider;
    named_schema *resources, *data_sources;
    size_t n_resources, resources_cap, n_data_sources, data_sources_cap;
} schema;

static cairn_block *new_block(const char *description) {
    cairn_block *b = cairn_alloc(sizeof *b);
    b->description = arena_strdup(description ? description : "");
    return b;
}

cairn_block *cairn_resource(const char *type_name, uint64_t version, const char *description) {
    named_schema *s = grow((void **)&schema.resources, &schema.n_resources, &schema.resources_cap, sizeof *s);
    *s = (named_schema){arena_strdup(type_name), version, new_block(description)};
    return s->block;
}

cairn_block *cairn_data_source(const char *type_name, const char *description) {
    named_schema *s =
        grow((void **)&schema.data_sources, &schema.n_data_sources, &schema.data_sources_cap, sizeof *s);
    *s = (named_schema){arena_strdup(type_name), 0, new_block(description)};
    return s->block;
}

cairn_block *cairn_provider_block(const char *description) {
    schema.provider = new_block(description);
    return schema.provider;
}

void cairn_attribute(cairn_block *block, const char *name, cairn_type *type, unsigned flags,
                     const char *description) {
    attribute *a = grow((void **)&block->attributes, &block->n_attributes, &block->attributes_cap, sizeof *a);
    *a = (attribute){.name = arena_strdup(name), .type = type, .flags = flags,
                     .description = arena_strdup(description ? description : "")};
}

cairn_block *cairn_nested_attribute(cairn_block *block, const char *name, cairn_nesting nesting, unsigned flags,
                                    const char *description) {
    attribute *a = grow((void **)&block->attributes, &block->n_attributes, &block->attributes_cap, sizeof *a);
    *a = (attribute){.name = arena_strdup(name), .nested = new_block(""), .nesting = nesting, .flags = flags,
                     .description = arena_strdup(description ? description : "")};
    return a->nested;
}

cairn_block *cairn_nested_block(cairn_block *block, const char *name, cairn_nesting nesting, uint32_t min_items,
                                uint32_t max_items, const char *description) {
    nested_block *b = grow((void **)&block->blocks, &block->n_blocks, &block->blocks_cap, sizeof *b);
    *b = (nested_block){arena_strdup(name), nesting, new_block(description), min_items, max_items};
    return b->block;
}

/* Runs the provider's `schema` once per instance, into the instance arena. */
static void declare_schema(void) {
    if (schema.declared) {
        return;
    }
    arena *was = current;
    current = &instance_arena;
    schema.declared = true;
    if (cairn_the_provider->schema == NULL) {
        cairn_fatal("the provider's cairn_provider table has no schema callback");
    }
    cairn_the_provider->schema();
    if (schema.provider == NULL) {
        schema.provider = new_block("");
    }
    current = was;
}

static const named_schema *find_schema(const named_schema *list, size_t n, const char *name) {
    for (size_t i = 0; i < n; i++) {
        if (strcmp(list[i].name, name) == 0) {
            return &list[i];
        }
    }
    return NULL;
}

/* ================================================================ diagnostics */

typedef enum step_kind { STEP_ATTRIBUTE, STEP_KEY, STEP_INDEX } step_kind;

typedef struct step {
    step_kind kind;
    char *name; /* attribute or key */
    uint64_t index;
} step;

typedef struct diagnostic {
    bool error;
    char *summary, *detail;
    step *path;
    size_t path_len;
} diagnostic;

static struct {
    diagnostic *items;
    size_t len, cap;
    bool failed;
} diags;

/* Parses `rule[0].port` or `tags["team"]` into steps; false when it is not
 * a path. */
static bool parse_path(const char *text, step **out, size_t *out_len) {
    step *steps = NULL;
    size_t len = 0, cap = 0;
    const char *s = text;
    while (*s) {
        step *st = grow((void **)&steps, &len, &cap, sizeof *st);
        if (*s == '[' && s[1] == '"') {
            /* A key, with \" and \\ escaped. */
            s += 2;
            char *key = cairn_alloc(strlen(s) + 1), *k = key;
            while (*s && *s != '"') {
                if (*s == '\\' && s[1]) {
                    s++;
                }
                *k++ = *s++;
            }
            if (s[0] != '"' || s[1] != ']') {
                return false;
            }
            s += 2;
            *st = (step){.kind = STEP_KEY, .name = key};
        } else if (*s == '[') {
            char *end;
            unsigned long long index = strtoull(s + 1, &end, 10);
            if (end == s + 1 || *end != ']') {
                return false;
            }
            s = end + 1;
            *st = (step){.kind = STEP_INDEX, .index = index};
        } else {
            if (*s == '.') {
                if (len == 1) {
                    return false; /* a path does not start with a dot */
                }
                s++;
            }
            size_t n = strcspn(s, ".[");
            if (n == 0) {
                return false;
            }
            *st = (step){.kind = STEP_ATTRIBUTE, .name = arena_strdup_n(s, n)};
            s += n;
        }
    }
    *out = steps;
    *out_len = len;
    return true;
}

static void report(bool error, const char *path, const char *fmt, va_list args) {
    diagnostic *d = grow((void **)&diags.items, &diags.len, &diags.cap, sizeof *d);
    *d = (diagnostic){.error = error, .summary = vformat(fmt, args), .detail = ""};
    if (path != NULL && *path && !parse_path(path, &d->path, &d->path_len)) {
        /* Still say where, rather than lose the diagnostic. */
        d->summary = cairn_format("%s (at %s)", d->summary, path);
        d->path = NULL;
        d->path_len = 0;
    }
    diags.failed |= error;
}

void cairn_error(const char *path, const char *fmt, ...) {
    va_list args;
    va_start(args, fmt);
    report(true, path, fmt, args);
    va_end(args);
}

void cairn_warning(const char *path, const char *fmt, ...) {
    va_list args;
    va_start(args, fmt);
    report(false, path, fmt, args);
    va_end(args);
}

void cairn_detail(const char *fmt, ...) {
    if (diags.len == 0) {
        cairn_fatal("cairn_detail called before any cairn_error or cairn_warning");
    }
    va_list args;
    va_start(args, fmt);
    diags.items[diags.len - 1].detail = vformat(fmt, args);
    va_end(args);
}

bool cairn_failed(void) { return diags.failed; }

_Noreturn void cairn_fatal(const char *fmt, ...) {
    va_list args;
    va_start(args, fmt);
    vfprintf(stderr, fmt, args);
    va_end(args);
    fputc('\n', stderr);
    fflush(stderr);
    abort();
}

/* ================================================================ logging and files */

void cairn_log(cairn_level level, const char *fmt, ...) {
    va_list args;
    va_start(args, fmt);
    char *line = vformat(fmt, args);
    va_end(args);
#ifdef __wasm__
    provider_world_string_t message = {(uint8_t *)line, strlen(line)};
    cairn_provider_log_log((cairn_provider_log_level_t)level, &message);
#else
    static const char *const names[] = {"trace", "debug", "info", "warn", "error"};
    fprintf(stderr, "%s: %s\n", names[level <= CAIRN_LOG_ERROR ? level : CAIRN_LOG_ERROR], line);
#endif
}

const char *cairn_set_permissions(const char *path, uint32_t mode, bool apply_umask) {
#ifdef __wasm__
    provider_world_string_t p = {(uint8_t *)path, strlen(path)}, err;
    if (cairn_provider_files_set_permissions(&p, mode, apply_umask, &err)) {
        return NULL;
    }
    char *message = arena_strdup_n((const char *)err.ptr, err.len);
    provider_world_string_free(&err);
    return message;
#else
    (void)path, (void)mode, (void)apply_umask;
    return "cairn_set_permissions works only inside a component";
#endif
}

/* ================================================================ the lifecycle, over the models */

struct cairn_plan_state {
    const named_schema *schema;
    /* Top-level computed attributes the configuration leaves null and the
     * provider did not set: the ones a replacement makes unknown. */
    char **free;
    size_t n_free, free_cap;
    /* Requires-replace paths, as text. */
    const char **replace;
    size_t n_replace, replace_cap;
};

/* The value at `path` (steps) inside `v`: a null value where there is none. */
static const cairn_value *value_at(const cairn_value *v, const step *path, size_t len) {
    for (size_t i = 0; i < len; i++) {
        v = path[i].kind == STEP_INDEX ? cairn_at(v, path[i].index) : cairn_get(v, path[i].name);
    }
    return v;
}

/* A path in text, for messages: `rule[0].port`. */
static const char *path_text(const step *path, size_t len) {
    char *text = "";
    for (size_t i = 0; i < len; i++) {
        if (path[i].kind == STEP_INDEX) {
            text = cairn_format("%s[%llu]", text, (unsigned long long)path[i].index);
        } else if (path[i].kind == STEP_KEY) {
            text = cairn_format("%s[\"%s\"]", text, path[i].name);
        } else {
            text = cairn_format("%s%s%s", text, i ? "." : "", path[i].name);
        }
    }
    return text;
}

/* The path of the first unknown inside `v`, or NULL when it is wholly known. */
static const char *find_unknown(const cairn_value *v, const char *at) {
    v = or_null(v);
    if (v->kind == CAIRN_UNKNOWN) {
        return at;
    }
    for (size_t i = 0; i < v->len; i++) {
        const char *inner;
        if (v->kind == CAIRN_OBJECT) {
            inner = cairn_format("%s%s%s", at, *at ? "." : "", v->keys[i]);
        } else if (v->kind == CAIRN_MAP) {
            inner = cairn_format("%s[\"%s\"]", at, v->keys[i]);
        } else {
            inner = cairn_format("%s[%zu]", at, i);
        }
        const char *found = find_unknown(v->items[i], inner);
        if (found) {
            return found;
        }
    }
    return NULL;
}

static void forget_free(cairn_plan *p, const char *name) {
    struct cairn_plan_state *st = p->internal;
    for (size_t i = 0; i < st->n_free; i++) {
        if (strcmp(st->free[i], name) == 0) {
            st->free[i] = st->free[--st->n_free];
            return;
        }
    }
}

static void mark_free_unknown(cairn_plan *p) {
    struct cairn_plan_state *st = p->internal;
    for (size_t i = 0; i < st->n_free; i++) {
        cairn_set(p->planned, st->free[i], cairn_unknown());
    }
}

bool cairn_plan_is_create(const cairn_plan *p) { return cairn_is_null(p->prior); }

void cairn_plan_set(cairn_plan *p, const char *name, cairn_value *v) {
    cairn_set(p->planned, name, v);
    forget_free(p, name);
}

void cairn_plan_default(cairn_plan *p, const char *name, cairn_value *v) {
    if (cairn_is_null(cairn_get(p->config, name))) {
        cairn_plan_set(p, name, v);
    }
}

void cairn_plan_requires_replace(cairn_plan *p, const char *path) {
    step *steps;
    size_t len;
    if (path == NULL || !parse_path(path, &steps, &len) || len == 0) {
        cairn_fatal("cairn_plan_requires_replace: %s is not an attribute path", path ? path : "NULL");
    }
    struct cairn_plan_state *st = p->internal;
    *(const char **)grow((void **)&st->replace, &st->n_replace, &st->replace_cap, sizeof path) = arena_strdup(path);
}

bool cairn_plan_changed(const cairn_plan *p, const char *name) {
    return cairn_plan_is_create(p) || !cairn_equal(cairn_get(p->prior, name), cairn_get(p->planned, name));
}

/* Declares the replacing paths, and when one of them changes makes the
 * free computed attributes unknown. */
static void settle_replacement(cairn_plan *p) {
    struct cairn_plan_state *st = p->internal;
    const cairn_block *b = st->schema->block;
    for (size_t i = 0; i < b->n_attributes; i++) {
        if (b->attributes[i].flags & CAIRN_FORCES_REPLACEMENT) {
            cairn_plan_requires_replace(p, b->attributes[i].name);
        }
    }
    if (cairn_plan_is_create(p)) {
        return;
    }
    for (size_t i = 0; i < st->n_replace; i++) {
        step *steps;
        size_t len;
        parse_path(st->replace[i], &steps, &len);
        if (!cairn_equal(value_at(p->prior, steps, len), value_at(p->planned, steps, len))) {
            mark_free_unknown(p);
            return;
        }
    }
}

/* The plan of `p` (its request fields set): the default plan, the
 * provider's callback, then the replacement rules. */
static void run_plan(cairn_plan *p) {
    const named_schema *s = find_schema(schema.resources, schema.n_resources, p->type_name);
    if (s == NULL) {
        cairn_error(NULL, "Unknown resource type `%s`", p->type_name);
        return;
    }
    struct cairn_plan_state *st = cairn_alloc(sizeof *st);
    st->schema = s;
    p->internal = st;
    p->planned = cairn_copy(p->proposed);
    if (p->planned->kind != CAIRN_OBJECT) {
        p->planned = cairn_object();
    }
    p->planned_private = p->prior_private;
    for (size_t i = 0; i < s->block->n_attributes; i++) {
        const attribute *a = &s->block->attributes[i];
        /* Write-only values reach the provider, never the plan. */
        if (a->flags & CAIRN_WRITE_ONLY) {
            cairn_set(p->planned, a->name, cairn_null());
        }
        if ((a->flags & CAIRN_COMPUTED) && cairn_is_null(cairn_get(p->config, a->name))) {
            *(char **)grow((void **)&st->free, &st->n_free, &st->free_cap, sizeof(char *)) = a->name;
        }
    }
    if (cairn_plan_is_create(p)) {
        mark_free_unknown(p);
    }
    if (cairn_the_provider->plan) {
        cairn_the_provider->plan(p);
    }
    if (!cairn_failed()) {
        settle_replacement(p);
    }
}

bool cairn_apply_is_create(const cairn_apply *a) { return cairn_is_null(a->prior); }
bool cairn_apply_is_delete(const cairn_apply *a) { return cairn_is_null(a->planned); }

cairn_value *cairn_apply_planned_or(const cairn_apply *a, const char *name, cairn_value *computed) {
    const cairn_value *planned = cairn_get(a->planned, name);
    return cairn_is_null(planned) || !cairn_is_known(planned) ? computed : cairn_copy(planned);
}

/* The apply of `a` (its request fields set). On error the answer is the
 * prior state: the object is as it was. */
static void run_apply(cairn_apply *a) {
    a->new_state = cairn_apply_is_delete(a) ? NULL : cairn_copy(a->planned);
    a->private_data = a->planned_private;
    if (find_schema(schema.resources, schema.n_resources, a->type_name) == NULL) {
        cairn_error(NULL, "Unknown resource type `%s`", a->type_name);
    } else if (cairn_the_provider->apply == NULL) {
        cairn_error(NULL, "Resource type `%s` cannot be applied", a->type_name);
        cairn_detail("The provider has no apply callback.");
    } else {
        cairn_the_provider->apply(a);
        const char *unknown = cairn_is_null(a->new_state) ? NULL : find_unknown(a->new_state, "");
        if (!cairn_failed() && unknown != NULL) {
            cairn_error(unknown, "Provider bug: the new state has an unknown value");
            cairn_detail("Apply must set every attribute to a known value.");
        }
    }
    if (cairn_failed()) {
        a->new_state = cairn_copy(a->prior);
    }
}

/* The refresh of `r`: NULL new state when the object is gone. */
static void run_read(cairn_read *r) {
    r->new_state = cairn_copy(r->current);
    if (cairn_the_provider->read) {
        cairn_the_provider->read(r);
    }
    if (cairn_failed()) {
        r->new_state = cairn_copy(r->current);
    }
}

static cairn_value *run_import(const char *type_name, const char *id) {
    if (find_schema(schema.resources, schema.n_resources, type_name) == NULL) {
        cairn_error(NULL, "Unknown resource type `%s`", type_name);
        return NULL;
    }
    if (cairn_the_provider->import_resource == NULL) {
        cairn_error(NULL, "Resource type `%s` does not support import", type_name);
        return NULL;
    }
    cairn_value *state = cairn_the_provider->import_resource(type_name, id);
    return cairn_failed() ? NULL : state;
}

__attribute__((unused)) static cairn_value *run_data_source(const char *type_name, const cairn_value *config) {
    if (find_schema(schema.data_sources, schema.n_data_sources, type_name) == NULL ||
        cairn_the_provider->read_data_source == NULL) {
        cairn_error(NULL, "Unknown data source `%s`", type_name);
        return NULL;
    }
    cairn_value *state = cairn_the_provider->read_data_source(type_name, config);
    const char *unknown = cairn_failed() ? NULL : find_unknown(state, "");
    if (unknown != NULL) {
        cairn_error(unknown, "Provider bug: the data source's state has an unknown value");
    }
    return cairn_failed() ? NULL : state;
}

__attribute__((unused)) static cairn_value *run_upgrade(const char *type_name, uint64_t version, const char *raw_json) {
    const named_schema *s = find_schema(schema.resources, schema.n_resources, type_name);
    if (s == NULL) {
        cairn_error(NULL, "Unknown resource type `%s`", type_name);
        return NULL;
    }
    if (cairn_the_provider->upgrade_state == NULL) {
        cairn_error(NULL, "Cannot upgrade `%s` state from version %llu", type_name, (unsigned long long)version);
        cairn_detail("The provider's schema is at version %llu, and it has no upgrade from version %llu.",
                     (unsigned long long)s->version, (unsigned long long)version);
        return NULL;
    }
    cairn_value *state = cairn_the_provider->upgrade_state(type_name, version, raw_json);
    return cairn_failed() ? NULL : state;
}

/* ================================================================ testing natively */

/* Starts a call: no diagnostics yet. */
static void begin_call(void) {
    diags.items = NULL;
    diags.len = diags.cap = 0;
    diags.failed = false;
}

cairn_plan *cairn_test_plan(const char *type_name, const cairn_value *prior, const cairn_value *config) {
    declare_schema();
    begin_call();
    cairn_plan *p = cairn_alloc(sizeof *p);
    p->type_name = arena_strdup(type_name);
    p->prior = cairn_copy(prior);
    p->config = cairn_copy(config);
    cairn_value *proposed = cairn_copy(config);
    const named_schema *s = find_schema(schema.resources, schema.n_resources, type_name);
    for (size_t i = 0; s && i < s->block->n_attributes; i++) {
        const attribute *a = &s->block->attributes[i];
        if ((a->flags & CAIRN_COMPUTED) && cairn_is_null(cairn_get(config, a->name)) && proposed->kind == CAIRN_OBJECT) {
            cairn_set(proposed, a->name, cairn_copy(cairn_get(prior, a->name)));
        }
    }
    p->proposed = proposed;
    run_plan(p);
    return p;
}

cairn_apply *cairn_test_apply(const char *type_name, const cairn_value *prior, const cairn_value *planned,
                              const cairn_value *config) {
    declare_schema();
    begin_call();
    cairn_apply *a = cairn_alloc(sizeof *a);
    a->type_name = arena_strdup(type_name);
    a->prior = cairn_copy(prior);
    a->planned = cairn_copy(planned);
    a->config = cairn_copy(config);
    a->idempotency_key = "test-idempotency-key";
    run_apply(a);
    return a;
}

cairn_read *cairn_test_read(const char *type_name, const cairn_value *current) {
    declare_schema();
    begin_call();
    cairn_read *r = cairn_alloc(sizeof *r);
    r->type_name = arena_strdup(type_name);
    r->current = cairn_copy(current);
    run_read(r);
    return r;
}

cairn_value *cairn_test_import(const char *type_name, const char *id) {
    declare_schema();
    begin_call();
    return run_import(type_name, id);
}

void cairn_test_validate(const char *type_name, const cairn_value *config) {
    declare_schema();
    begin_call();
    if (cairn_the_provider->validate) {
        cairn_the_provider->validate(type_name, config);
    }
}

size_t cairn_test_diagnostic_count(void) { return diags.len; }

const char *cairn_test_diagnostic(size_t i) {
    if (i >= diags.len) {
        return NULL;
    }
    const diagnostic *d = &diags.items[i];
    const char *at = d->path_len ? cairn_format(" (at %s)", path_text(d->path, d->path_len)) : "";
    return cairn_format("%s: %s%s%s%s", d->error ? "error" : "warning", d->summary, at, *d->detail ? ": " : "",
                        d->detail);
}

void cairn_test_reset(void) {
    begin_call();
    arena_release(&call_arena);
}

/* ================================================================ the exports (wire ↔ models) */

#ifdef __wasm__

typedef cairn_provider_types_value_t wire_value;
typedef exports_cairn_provider_provider_list_diagnostic_t wire_diagnostics;

/* Host values nest at most 256 levels; anything deeper is not from a host. */
#define MAX_DEPTH 1024

/* The glue asks for wit-bindgen's component-type object, which would embed
 * the WIT world; `cairn providers componentize` embeds it from wit/
 * instead, so the object is neither linked nor committed. */
void __component_type_object_force_link_provider_world(void) {}

static char *wire_str(const provider_world_string_t *s) {
    return arena_strdup_n((const char *)s->ptr, s->len);
}

static cairn_bytes wire_bytes(const provider_world_list_u8_t *b) {
    uint8_t *copy = cairn_alloc(b->len);
    if (b->len) {
        memcpy(copy, b->ptr, b->len);
    }
    return (cairn_bytes){copy, b->len};
}

static provider_world_list_u8_t heap_bytes(cairn_bytes b) {
    provider_world_list_u8_t out = {NULL, 0};
    if (b.len) {
        out.ptr = heap_alloc(b.len);
        memcpy(out.ptr, b.data, b.len);
        out.len = b.len;
    }
    return out;
}

static cairn_value *decode_node(const wire_value *w, uint32_t at, int depth) {
    if (at >= w->nodes.len || depth > MAX_DEPTH) {
        cairn_fatal("cairn sdk: a malformed value from the host (node %u of %zu)", at, w->nodes.len);
    }
    const cairn_provider_types_node_t *n = &w->nodes.ptr[at];
    cairn_value *v;
    switch (n->kind.tag) {
    case CAIRN_PROVIDER_TYPES_VALUE_NODE_NULL:
        v = cairn_null();
        break;
    case CAIRN_PROVIDER_TYPES_VALUE_NODE_UNKNOWN: {
        const cairn_provider_types_refinements_t *r = &n->kind.val.unknown;
        v = cairn_unknown();
        refinements *kept = cairn_alloc(sizeof *kept);
        *kept = (refinements){
            .not_null = r->not_null,
            .has_prefix = r->prefix.is_some,
            .prefix = r->prefix.is_some ? wire_str(&r->prefix.val) : NULL,
            .has_lower = r->lower.is_some,
            .lower = r->lower.val,
            .has_upper = r->upper.is_some,
            .upper = r->upper.val,
            .has_min = r->min_length.is_some,
            .min_length = r->min_length.val,
            .has_max = r->max_length.is_some,
            .max_length = r->max_length.val,
        };
        kept->any = kept->not_null || kept->has_prefix || kept->has_lower || kept->has_upper || kept->has_min ||
                    kept->has_max;
        v->refine = kept->any ? kept : NULL;
        break;
    }
    case CAIRN_PROVIDER_TYPES_VALUE_NODE_BOOLEAN:
        v = cairn_bool(n->kind.val.boolean);
        break;
    case CAIRN_PROVIDER_TYPES_VALUE_NODE_INTEGER:
        v = cairn_int(n->kind.val.integer);
        break;
    case CAIRN_PROVIDER_TYPES_VALUE_NODE_FLOAT:
        /* Kept a float: it goes back as it came. */
        v = make(CAIRN_NUMBER);
        v->f = n->kind.val.float_;
        break;
    case CAIRN_PROVIDER_TYPES_VALUE_NODE_TEXT:
        v = cairn_string_n((const char *)n->kind.val.text.ptr, n->kind.val.text.len);
        break;
    case CAIRN_PROVIDER_TYPES_VALUE_NODE_LIST:
    case CAIRN_PROVIDER_TYPES_VALUE_NODE_SET:
    case CAIRN_PROVIDER_TYPES_VALUE_NODE_TUPLE: {
        const provider_world_list_u32_t *items = n->kind.tag == CAIRN_PROVIDER_TYPES_VALUE_NODE_LIST ? &n->kind.val.list
                                                 : n->kind.tag == CAIRN_PROVIDER_TYPES_VALUE_NODE_SET ? &n->kind.val.set
                                                                                                      : &n->kind.val.tuple;
        v = make(n->kind.tag == CAIRN_PROVIDER_TYPES_VALUE_NODE_LIST  ? CAIRN_LIST
                 : n->kind.tag == CAIRN_PROVIDER_TYPES_VALUE_NODE_SET ? CAIRN_SET
                                                                      : CAIRN_TUPLE);
        for (size_t i = 0; i < items->len; i++) {
            cairn_push(v, decode_node(w, items->ptr[i], depth + 1));
        }
        break;
    }
    case CAIRN_PROVIDER_TYPES_VALUE_NODE_MAP:
    case CAIRN_PROVIDER_TYPES_VALUE_NODE_OBJECT: {
        bool is_map = n->kind.tag == CAIRN_PROVIDER_TYPES_VALUE_NODE_MAP;
        const provider_world_list_tuple2_string_u32_t *entries = is_map ? &n->kind.val.map : &n->kind.val.object;
        v = make(is_map ? CAIRN_MAP : CAIRN_OBJECT);
        for (size_t i = 0; i < entries->len; i++) {
            cairn_set(v, wire_str(&entries->ptr[i].f0), decode_node(w, entries->ptr[i].f1, depth + 1));
        }
        break;
    }
    default:
        cairn_fatal("cairn sdk: a value node of unknown kind %u from the host", n->kind.tag);
    }
    v->sensitive = n->sensitive;
    return v;
}

/* The value `w` as a model, after which `w` is freed (the callee owns its
 * arguments). An empty node list is null. */
static cairn_value *take_value(wire_value *w) {
    cairn_value *v = w->nodes.len == 0 ? cairn_null() : decode_node(w, 0, 0);
    cairn_provider_types_value_free(w);
    return v;
}

/* Nodes being encoded, in malloc'd memory. */
typedef struct node_buf {
    cairn_provider_types_node_t *ptr;
    size_t len, cap;
} node_buf;

static uint32_t encode_node(node_buf *b, const cairn_value *v, int depth) {
    v = or_null(v);
    if (depth > MAX_DEPTH) {
        cairn_fatal("cairn sdk: a value nested more than %d levels deep (a cycle?)", MAX_DEPTH);
    }
    if (b->len == b->cap) {
        b->cap = b->cap ? 2 * b->cap : 16;
        b->ptr = checked(realloc(b->ptr, b->cap * sizeof *b->ptr), b->cap * sizeof *b->ptr);
    }
    uint32_t at = (uint32_t)b->len++;
    cairn_provider_types_node_t node = {.sensitive = v->sensitive};
    switch (v->kind) {
    case CAIRN_NULL:
        node.kind.tag = CAIRN_PROVIDER_TYPES_VALUE_NODE_NULL;
        break;
    case CAIRN_UNKNOWN: {
        node.kind.tag = CAIRN_PROVIDER_TYPES_VALUE_NODE_UNKNOWN;
        cairn_provider_types_refinements_t *r = &node.kind.val.unknown;
        memset(r, 0, sizeof *r);
        const refinements *k = v->refine;
        if (k != NULL) {
            r->not_null = k->not_null;
            if (k->has_prefix) {
                r->prefix.is_some = true;
                heap_string(&r->prefix.val, k->prefix, strlen(k->prefix));
            }
            r->lower = (cairn_provider_types_option_number_bound_t){k->has_lower, k->lower};
            r->upper = (cairn_provider_types_option_number_bound_t){k->has_upper, k->upper};
            r->min_length = (provider_world_option_u64_t){k->has_min, k->min_length};
            r->max_length = (provider_world_option_u64_t){k->has_max, k->max_length};
        }
        break;
    }
    case CAIRN_BOOL:
        node.kind.tag = CAIRN_PROVIDER_TYPES_VALUE_NODE_BOOLEAN;
        node.kind.val.boolean = v->b;
        break;
    case CAIRN_NUMBER:
        if (v->is_int) {
            node.kind.tag = CAIRN_PROVIDER_TYPES_VALUE_NODE_INTEGER;
            node.kind.val.integer = v->i;
        } else {
            node.kind.tag = CAIRN_PROVIDER_TYPES_VALUE_NODE_FLOAT;
            node.kind.val.float_ = v->f;
        }
        break;
    case CAIRN_STRING:
        node.kind.tag = CAIRN_PROVIDER_TYPES_VALUE_NODE_TEXT;
        heap_string(&node.kind.val.text, v->str, v->str_len);
        break;
    case CAIRN_LIST:
    case CAIRN_SET:
    case CAIRN_TUPLE: {
        uint32_t *items = v->len ? heap_alloc(v->len * sizeof *items) : NULL;
        for (size_t i = 0; i < v->len; i++) {
            items[i] = encode_node(b, v->items[i], depth + 1);
        }
        provider_world_list_u32_t list = {items, v->len};
        if (v->kind == CAIRN_LIST) {
            node.kind.tag = CAIRN_PROVIDER_TYPES_VALUE_NODE_LIST;
            node.kind.val.list = list;
        } else if (v->kind == CAIRN_SET) {
            node.kind.tag = CAIRN_PROVIDER_TYPES_VALUE_NODE_SET;
            node.kind.val.set = list;
        } else {
            node.kind.tag = CAIRN_PROVIDER_TYPES_VALUE_NODE_TUPLE;
            node.kind.val.tuple = list;
        }
        break;
    }
    case CAIRN_MAP:
    case CAIRN_OBJECT: {
        provider_world_tuple2_string_u32_t *entries = v->len ? heap_alloc(v->len * sizeof *entries) : NULL;
        for (size_t i = 0; i < v->len; i++) {
            heap_string(&entries[i].f0, v->keys[i], strlen(v->keys[i]));
            entries[i].f1 = encode_node(b, v->items[i], depth + 1);
        }
        provider_world_list_tuple2_string_u32_t list = {entries, v->len};
        if (v->kind == CAIRN_MAP) {
            node.kind.tag = CAIRN_PROVIDER_TYPES_VALUE_NODE_MAP;
            node.kind.val.map = list;
        } else {
            node.kind.tag = CAIRN_PROVIDER_TYPES_VALUE_NODE_OBJECT;
            node.kind.val.object = list;
        }
        break;
    }
    }
    /* Written last: encoding the children may have moved the buffer. */
    b->ptr[at] = node;
    return at;
}

static wire_value to_wire(const cairn_value *v) {
    node_buf b = {0};
    encode_node(&b, v, 0);
    return (wire_value){{b.ptr, b.len}};
}

static cairn_provider_types_attribute_path_t path_to_wire(const step *path, size_t len) {
    cairn_provider_types_attribute_path_t out = {NULL, len};
    if (len) {
        out.ptr = heap_alloc(len * sizeof *out.ptr);
    }
    for (size_t i = 0; i < len; i++) {
        cairn_provider_types_path_step_t *s = &out.ptr[i];
        if (path[i].kind == STEP_INDEX) {
            s->tag = CAIRN_PROVIDER_TYPES_PATH_STEP_INDEX;
            s->val.index = path[i].index;
        } else {
            s->tag = path[i].kind == STEP_KEY ? CAIRN_PROVIDER_TYPES_PATH_STEP_KEY : CAIRN_PROVIDER_TYPES_PATH_STEP_ATTRIBUTE;
            heap_string(path[i].kind == STEP_KEY ? &s->val.key : &s->val.attribute, path[i].name, strlen(path[i].name));
        }
    }
    return out;
}

static wire_diagnostics diagnostics_to_wire(void) {
    wire_diagnostics out = {NULL, diags.len};
    if (diags.len) {
        out.ptr = heap_alloc(diags.len * sizeof *out.ptr);
    }
    for (size_t i = 0; i < diags.len; i++) {
        const diagnostic *d = &diags.items[i];
        cairn_provider_types_diagnostic_t *w = &out.ptr[i];
        w->severity = d->error ? CAIRN_PROVIDER_TYPES_SEVERITY_ERROR : CAIRN_PROVIDER_TYPES_SEVERITY_WARNING;
        heap_string(&w->summary, d->summary, strlen(d->summary));
        heap_string(&w->detail, d->detail, strlen(d->detail));
        w->path = path_to_wire(d->path, d->path_len);
    }
    return out;
}

/* Types, flattened: a node's children come after it. */
typedef struct type_buf {
    cairn_provider_types_type_node_t *ptr;
    size_t len, cap;
} type_buf;

static uint32_t encode_type(type_buf *b, const cairn_type *t) {
    if (b->len == b->cap) {
        b->cap = b->cap ? 2 * b->cap : 8;
        b->ptr = checked(realloc(b->ptr, b->cap * sizeof *b->ptr), b->cap * sizeof *b->ptr);
    }
    uint32_t at = (uint32_t)b->len++;
    cairn_provider_types_type_node_t node;
    memset(&node, 0, sizeof node);
    switch (t->kind) {
    case T_BOOL:
        node.tag = CAIRN_PROVIDER_TYPES_TYPE_NODE_BOOLEAN;
        break;
    case T_NUMBER:
        node.tag = CAIRN_PROVIDER_TYPES_TYPE_NODE_NUMBER;
        break;
    case T_STRING:
        node.tag = CAIRN_PROVIDER_TYPES_TYPE_NODE_TEXT;
        break;
    case T_DYNAMIC:
        node.tag = CAIRN_PROVIDER_TYPES_TYPE_NODE_DYNAMIC;
        break;
    case T_LIST:
        node.tag = CAIRN_PROVIDER_TYPES_TYPE_NODE_LIST;
        node.val.list = encode_type(b, t->element);
        break;
    case T_SET:
        node.tag = CAIRN_PROVIDER_TYPES_TYPE_NODE_SET;
        node.val.set = encode_type(b, t->element);
        break;
    case T_MAP:
        node.tag = CAIRN_PROVIDER_TYPES_TYPE_NODE_MAP;
        node.val.map = encode_type(b, t->element);
        break;
    case T_OBJECT: {
        node.tag = CAIRN_PROVIDER_TYPES_TYPE_NODE_OBJECT;
        provider_world_tuple2_string_u32_t *fields = t->len ? heap_alloc(t->len * sizeof *fields) : NULL;
        for (size_t i = 0; i < t->len; i++) {
            heap_string(&fields[i].f0, t->names[i], strlen(t->names[i]));
            fields[i].f1 = encode_type(b, t->types[i]);
        }
        node.val.object = (provider_world_list_tuple2_string_u32_t){fields, t->len};
        break;
    }
    case T_TUPLE: {
        node.tag = CAIRN_PROVIDER_TYPES_TYPE_NODE_TUPLE;
        uint32_t *items = t->len ? heap_alloc(t->len * sizeof *items) : NULL;
        for (size_t i = 0; i < t->len; i++) {
            items[i] = encode_type(b, t->types[i]);
        }
        node.val.tuple = (provider_world_list_u32_t){items, t->len};
        break;
    }
    }
    b->ptr[at] = node;
    return at;
}

static cairn_provider_types_nesting_t nesting_to_wire(cairn_nesting n) {
    switch (n) {
    case CAIRN_NEST_LIST:
        return CAIRN_PROVIDER_TYPES_NESTING_LIST;
    case CAIRN_NEST_SET:
        return CAIRN_PROVIDER_TYPES_NESTING_SET;
    case CAIRN_NEST_MAP:
        return CAIRN_PROVIDER_TYPES_NESTING_MAP;
    default:
        return CAIRN_PROVIDER_TYPES_NESTING_SINGLE;
    }
}

/* Blocks, flattened: `blocks[0]` is the top; nested ones point further on. */
typedef struct block_buf {
    cairn_provider_types_block_t *ptr;
    size_t len, cap;
} block_buf;

static uint32_t encode_block(block_buf *b, const cairn_block *block) {
    if (b->len == b->cap) {
        b->cap = b->cap ? 2 * b->cap : 4;
        b->ptr = checked(realloc(b->ptr, b->cap * sizeof *b->ptr), b->cap * sizeof *b->ptr);
    }
    uint32_t at = (uint32_t)b->len++;
    cairn_provider_types_block_t out;
    memset(&out, 0, sizeof out);
    size_t n = block->n_attributes;
    out.attributes = (cairn_provider_types_list_attribute_t){n ? heap_alloc(n * sizeof *out.attributes.ptr) : NULL, n};
    for (size_t i = 0; i < n; i++) {
        const attribute *a = &block->attributes[i];
        cairn_provider_types_attribute_t *w = &out.attributes.ptr[i];
        memset(w, 0, sizeof *w);
        heap_string(&w->name, a->name, strlen(a->name));
        heap_string(&w->description, a->description, strlen(a->description));
        if (a->nested != NULL) {
            w->nested.is_some = true;
            w->nested.val.nesting = nesting_to_wire(a->nesting);
            w->nested.val.block = encode_block(b, a->nested);
        } else {
            type_buf types = {0};
            encode_type(&types, a->type);
            w->type.nodes = (cairn_provider_types_list_type_node_t){types.ptr, types.len};
        }
        w->required = a->flags & CAIRN_REQUIRED;
        w->optional = a->flags & CAIRN_OPTIONAL;
        w->computed = a->flags & CAIRN_COMPUTED;
        w->sensitive = a->flags & CAIRN_SENSITIVE;
        w->write_only = a->flags & CAIRN_WRITE_ONLY;
    }
    size_t m = block->n_blocks;
    out.blocks = (cairn_provider_types_list_nested_block_t){m ? heap_alloc(m * sizeof *out.blocks.ptr) : NULL, m};
    for (size_t i = 0; i < m; i++) {
        const nested_block *nb = &block->blocks[i];
        cairn_provider_types_nested_block_t *w = &out.blocks.ptr[i];
        heap_string(&w->name, nb->name, strlen(nb->name));
        w->nesting = nesting_to_wire(nb->nesting);
        w->block = encode_block(b, nb->block);
        w->min_items = nb->min_items;
        w->max_items = nb->max_items;
    }
    heap_string(&out.description, block->description, strlen(block->description));
    b->ptr[at] = out;
    return at;
}

static cairn_provider_types_schema_t schema_to_wire(uint64_t version, const cairn_block *block) {
    block_buf b = {0};
    encode_block(&b, block);
    return (cairn_provider_types_schema_t){version, {b.ptr, b.len}};
}

static cairn_provider_types_list_tuple2_string_schema_t schemas_to_wire(const named_schema *list, size_t n) {
    cairn_provider_types_list_tuple2_string_schema_t out = {n ? heap_alloc(n * sizeof *out.ptr) : NULL, n};
    for (size_t i = 0; i < n; i++) {
        heap_string(&out.ptr[i].f0, list[i].name, strlen(list[i].name));
        out.ptr[i].f1 = schema_to_wire(list[i].version, list[i].block);
    }
    return out;
}

/* A call has been answered: release what it made. */
static void end_call(void) {
    begin_call();
    arena_release(&call_arena);
    current = &call_arena;
}

void exports_cairn_provider_provider_schema(exports_cairn_provider_provider_provider_schema_t *ret) {
    declare_schema();
    ret->provider = schema_to_wire(0, schema.provider);
    ret->resources = schemas_to_wire(schema.resources, schema.n_resources);
    ret->data_sources = schemas_to_wire(schema.data_sources, schema.n_data_sources);
}

void exports_cairn_provider_provider_configure(wire_value *config, wire_diagnostics *ret) {
    declare_schema();
    begin_call();
    /* What configure makes lives as long as the instance. */
    current = &instance_arena;
    cairn_value *c = take_value(config);
    if (cairn_the_provider->configure) {
        cairn_the_provider->configure(c);
    }
    *ret = diagnostics_to_wire();
    current = &call_arena;
    end_call();
}

void exports_cairn_provider_provider_validate_resource(provider_world_string_t *type_name, wire_value *config,
                                                       wire_diagnostics *ret) {
    declare_schema();
    begin_call();
    char *type = wire_str(type_name);
    provider_world_string_free(type_name);
    cairn_value *c = take_value(config);
    if (cairn_the_provider->validate) {
        cairn_the_provider->validate(type, c);
    }
    *ret = diagnostics_to_wire();
    end_call();
}

void exports_cairn_provider_provider_plan_resource(exports_cairn_provider_provider_plan_request_t *request,
                                                   exports_cairn_provider_provider_plan_response_t *ret) {
    declare_schema();
    begin_call();
    cairn_plan p = {
        .type_name = wire_str(&request->type_name),
        .prior = take_value(&request->prior_state),
        .proposed = take_value(&request->proposed_new_state),
        .config = take_value(&request->config),
        .prior_private = wire_bytes(&request->prior_private),
    };
    provider_world_string_free(&request->type_name);
    provider_world_list_u8_free(&request->prior_private);
    run_plan(&p);
    memset(ret, 0, sizeof *ret);
    if (cairn_failed()) {
        ret->planned_state = to_wire(NULL);
    } else {
        ret->planned_state = to_wire(p.planned);
        struct cairn_plan_state *st = p.internal;
        ret->requires_replace.len = st->n_replace;
        ret->requires_replace.ptr = st->n_replace ? heap_alloc(st->n_replace * sizeof *ret->requires_replace.ptr) : NULL;
        for (size_t i = 0; i < st->n_replace; i++) {
            step *steps;
            size_t len;
            parse_path(st->replace[i], &steps, &len);
            ret->requires_replace.ptr[i] = path_to_wire(steps, len);
        }
        ret->planned_private = heap_bytes(p.planned_private);
    }
    ret->diagnostics = diagnostics_to_wire();
    end_call();
}

void exports_cairn_provider_provider_apply_resource(exports_cairn_provider_provider_apply_request_t *request,
                                                    exports_cairn_provider_provider_apply_response_t *ret) {
    declare_schema();
    begin_call();
    cairn_apply a = {
        .type_name = wire_str(&request->type_name),
        .prior = take_value(&request->prior_state),
        .planned = take_value(&request->planned_state),
        .config = take_value(&request->config),
        .planned_private = wire_bytes(&request->planned_private),
        .idempotency_key = wire_str(&request->idempotency_key),
    };
    provider_world_string_free(&request->type_name);
    provider_world_list_u8_free(&request->planned_private);
    provider_world_string_free(&request->idempotency_key);
    run_apply(&a);
    ret->new_state = to_wire(a.new_state);
    ret->private_ = heap_bytes(a.private_data);
    ret->diagnostics = diagnostics_to_wire();
    end_call();
}

void exports_cairn_provider_provider_read_resource(exports_cairn_provider_provider_read_request_t *request,
                                                   exports_cairn_provider_provider_read_response_t *ret) {
    declare_schema();
    begin_call();
    cairn_read r = {
        .type_name = wire_str(&request->type_name),
        .current = take_value(&request->current_state),
        .private_data = wire_bytes(&request->private_),
    };
    provider_world_string_free(&request->type_name);
    provider_world_list_u8_free(&request->private_);
    run_read(&r);
    memset(ret, 0, sizeof *ret);
    ret->new_state.is_some = !cairn_is_null(r.new_state);
    if (ret->new_state.is_some) {
        ret->new_state.val = to_wire(r.new_state);
    }
    ret->private_ = heap_bytes(r.private_data);
    ret->diagnostics = diagnostics_to_wire();
    end_call();
}

void exports_cairn_provider_provider_import_resource(provider_world_string_t *type_name, provider_world_string_t *id,
                                                     exports_cairn_provider_provider_import_response_t *ret) {
    declare_schema();
    begin_call();
    char *type = wire_str(type_name), *object_id = wire_str(id);
    provider_world_string_free(type_name);
    provider_world_string_free(id);
    cairn_value *state = run_import(type, object_id);
    memset(ret, 0, sizeof *ret);
    if (state != NULL) {
        ret->imported.len = 1;
        ret->imported.ptr = heap_alloc(sizeof *ret->imported.ptr);
        heap_string(&ret->imported.ptr[0].type_name, type, strlen(type));
        ret->imported.ptr[0].state = to_wire(state);
        ret->imported.ptr[0].private_ = (provider_world_list_u8_t){NULL, 0};
    }
    ret->diagnostics = diagnostics_to_wire();
    end_call();
}

void exports_cairn_provider_provider_read_data_source(provider_world_string_t *type_name, wire_value *config,
                                                      exports_cairn_provider_provider_data_response_t *ret) {
    declare_schema();
    begin_call();
    char *type = wire_str(type_name);
    provider_world_string_free(type_name);
    cairn_value *state = run_data_source(type, take_value(config));
    ret->state = to_wire(state);
    ret->diagnostics = diagnostics_to_wire();
    end_call();
}

void exports_cairn_provider_provider_upgrade_state(provider_world_string_t *type_name, uint64_t version,
                                                   provider_world_string_t *raw_state,
                                                   exports_cairn_provider_provider_upgrade_response_t *ret) {
    declare_schema();
    begin_call();
    char *type = wire_str(type_name), *json = wire_str(raw_state);
    provider_world_string_free(type_name);
    provider_world_string_free(raw_state);
    cairn_value *state = run_upgrade(type, version, json);
    ret->upgraded_state = to_wire(state);
    ret->diagnostics = diagnostics_to_wire();
    end_call();
}

#endif /* __wasm__ */
