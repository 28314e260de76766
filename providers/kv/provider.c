/*
 * The `kv` provider, written in C with providers/sdk-c: a key-value store
 * kept in files. `kv_entry` is one file in a read-write grant holding a
 * value, its labels, a secret and a revision:
 *
 *     # cairn kv entry
 *     id=6f1c…
 *     revision=2
 *     label.team=web
 *     secret=…
 *     value=hello\nworld
 *
 * It shows the whole lifecycle: an in-place update (value, labels, secret:
 * the revision goes up), a replacement (path: a new file with a new id),
 * refresh (an entry edited out of band is planned back, a deleted one made
 * again), import by path, and deletion (an entry already gone is success).
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cairn.h"

#define HEADER "# cairn kv entry"

static void schema(void) {
    cairn_block *entry = cairn_resource(
        "kv_entry", 0, "One entry of a key-value store kept in files: a file in a read-write grant.");
    cairn_attribute(entry, "path", cairn_type_string(), CAIRN_REQUIRED | CAIRN_FORCES_REPLACEMENT,
                    "The entry's file, inside a read-write grant (`store/greeting`). A change makes a new entry.");
    cairn_attribute(entry, "value", cairn_type_string(), CAIRN_REQUIRED, "The value.");
    cairn_attribute(entry, "labels", cairn_type_map(cairn_type_string()), CAIRN_OPTIONAL,
                    "Labels kept with the value.");
    cairn_attribute(entry, "secret", cairn_type_string(), CAIRN_OPTIONAL | CAIRN_SENSITIVE,
                    "A secret kept with the value; never displayed.");
    cairn_attribute(entry, "id", cairn_type_string(), CAIRN_COMPUTED,
                    "Random, given when the entry is made; a replacement gets a new one.");
    cairn_attribute(entry, "revision", cairn_type_number(), CAIRN_COMPUTED,
                    "1 when the entry is made, one more with each update.");
    cairn_attribute(entry, "size", cairn_type_number(), CAIRN_COMPUTED, "The value's length in bytes.");
}

/* A path the provider can write: relative, inside its grant. */
static void validate(const char *type_name, const cairn_value *config) {
    (void)type_name;
    const char *path = cairn_get_str(config, "path");
    if (path != NULL) {
        if (path[0] == '\0' || path[0] == '/') {
            cairn_error("path", "The path %s is not relative", path[0] ? path : "\"\"");
            cairn_detail("An entry's path is relative to the configuration's directory, inside a read-write grant.");
        } else if (strstr(path, "..") != NULL) {
            cairn_error("path", "The path %s leaves its directory", path);
        }
    }
    const cairn_value *labels = cairn_get(config, "labels");
    for (size_t i = 0; i < cairn_len(labels); i++) {
        const char *key = cairn_key_at(labels, i);
        if (key[0] == '\0' || strpbrk(key, "=\n") != NULL) {
            cairn_error(cairn_format("labels[\"%s\"]", key), "A label's name cannot be empty or hold '=' or a line break");
        }
    }
}

static void plan(cairn_plan *p) {
    const cairn_value *value = cairn_get(p->planned, "value");
    cairn_plan_set(p, "size", cairn_is_known(value) ? cairn_int((int64_t)cairn_str_len(value)) : cairn_unknown());
    /* An update writes a new revision. (A replacement's revision, like its
     * id, the SDK makes unknown: the new entry starts again at 1.) */
    bool updated = cairn_plan_changed(p, "value") || cairn_plan_changed(p, "labels") ||
                   cairn_plan_changed(p, "secret");
    if (!cairn_plan_is_create(p) && updated) {
        cairn_plan_set(p, "revision", cairn_unknown());
    }
}

/* `s` with backslashes and line breaks escaped, for one line. */
static const char *escape(const char *s) {
    char *out = cairn_alloc(2 * strlen(s) + 1), *o = out;
    for (; *s; s++) {
        if (*s == '\\' || *s == '\n') {
            *o++ = '\\';
            *o++ = *s == '\n' ? 'n' : '\\';
        } else {
            *o++ = *s;
        }
    }
    *o = '\0';
    return out;
}

static cairn_value *unescape(const char *s) {
    char *out = cairn_alloc(strlen(s) + 1), *o = out;
    for (; *s; s++) {
        if (*s == '\\' && s[1] != '\0') {
            s++;
            *o++ = *s == 'n' ? '\n' : *s;
        } else {
            *o++ = *s;
        }
    }
    *o = '\0';
    return cairn_string(out);
}

/* A new entry's id: 16 random bytes in hex. */
static cairn_value *new_id(void) {
    unsigned char bytes[16];
    if (getentropy(bytes, sizeof bytes) != 0) {
        cairn_fatal("kv: no randomness: %s", strerror(errno));
    }
    char hex[33];
    for (size_t i = 0; i < sizeof bytes; i++) {
        snprintf(hex + 2 * i, 3, "%02x", bytes[i]);
    }
    return cairn_string(hex);
}

/* Writes `state` into its file; false with an error reported. */
static bool write_entry(const cairn_value *state) {
    const char *path = cairn_get_str(state, "path");
    const char *partial = cairn_format("%s.partial", path);
    FILE *f = fopen(partial, "w");
    if (f == NULL) {
        cairn_error("path", "Cannot write %s: %s", path, strerror(errno));
        cairn_detail("Grant its directory to the provider: sandbox { read_write = [\"./<directory>\"] }.");
        return false;
    }
    fprintf(f, "%s\nid=%s\nrevision=%lld\n", HEADER, cairn_get_str(state, "id"),
            (long long)cairn_as_int(cairn_get(state, "revision"), 0));
    const cairn_value *labels = cairn_get(state, "labels");
    for (size_t i = 0; i < cairn_len(labels); i++) {
        fprintf(f, "label.%s=%s\n", cairn_key_at(labels, i), escape(cairn_str(cairn_at(labels, i))));
    }
    const char *secret = cairn_get_str(state, "secret");
    if (secret != NULL) {
        fprintf(f, "secret=%s\n", escape(secret));
    }
    fprintf(f, "value=%s\n", escape(cairn_get_str(state, "value")));
    /* Written whole, then moved into place: a reader never sees half. */
    if (fclose(f) != 0 || rename(partial, path) != 0) {
        cairn_error("path", "Cannot write %s: %s", path, strerror(errno));
        remove(partial);
        return false;
    }
    return true;
}

static void apply(cairn_apply *a) {
    if (cairn_apply_is_delete(a)) {
        const char *path = cairn_get_str(a->prior, "path");
        /* Already gone is done. */
        if (remove(path) != 0 && errno != ENOENT) {
            cairn_error("path", "Cannot delete %s: %s", path, strerror(errno));
        }
        return;
    }
    cairn_value *state = a->new_state;
    cairn_set(state, "id", cairn_apply_planned_or(a, "id", new_id()));
    int64_t revision = cairn_apply_is_create(a) ? 1 : cairn_as_int(cairn_get(a->prior, "revision"), 0) + 1;
    cairn_set(state, "revision", cairn_apply_planned_or(a, "revision", cairn_int(revision)));
    cairn_set(state, "size", cairn_int((int64_t)cairn_str_len(cairn_get(state, "value"))));
    /* On an error the SDK answers the prior state: nothing changed. */
    write_entry(state);
}

/* The entry in the file at `path` (with `labels_if_none` for labels when
 * the file has none); NULL when there is no file, or with an error when
 * it is not an entry. */
static cairn_value *read_entry(const char *path, const cairn_value *labels_if_none) {
    FILE *f = fopen(path, "r");
    if (f == NULL) {
        if (errno != ENOENT) {
            cairn_error("path", "Cannot read %s: %s", path, strerror(errno));
        }
        return NULL;
    }
    cairn_value *state = cairn_object(), *labels = cairn_map();
    cairn_set(state, "path", cairn_string(path));
    char *line = NULL;
    size_t cap = 0;
    ssize_t n;
    bool header = false;
    while ((n = getline(&line, &cap, f)) > 0) {
        if (line[n - 1] == '\n') {
            line[n - 1] = '\0';
        }
        char *eq = strchr(line, '=');
        if (!header) {
            header = strcmp(line, HEADER) == 0;
            if (!header) {
                break;
            }
        } else if (eq != NULL) {
            *eq = '\0';
            const char *key = line, *rest = eq + 1;
            if (strncmp(key, "label.", 6) == 0) {
                cairn_set(labels, key + 6, unescape(rest));
            } else if (strcmp(key, "revision") == 0) {
                cairn_set(state, key, cairn_int(strtoll(rest, NULL, 10)));
            } else if (strcmp(key, "secret") == 0) {
                cairn_set(state, key, cairn_sensitive(unescape(rest)));
            } else {
                cairn_set(state, key, unescape(rest));
            }
        }
    }
    free(line);
    fclose(f);
    if (!header || cairn_is_null(cairn_get(state, "value"))) {
        cairn_error("path", "%s is not a kv entry", path);
        cairn_detail("Its first line is not \"%s\", or it has no value= line.", HEADER);
        return NULL;
    }
    cairn_set(state, "labels", cairn_len(labels) > 0 ? labels : cairn_copy(labels_if_none));
    cairn_set(state, "size", cairn_int((int64_t)cairn_str_len(cairn_get(state, "value"))));
    return state;
}

static void refresh(cairn_read *r) {
    const cairn_value *labels = cairn_get(r->current, "labels");
    /* An empty map stays empty; no labels at all stay null. */
    r->new_state = read_entry(cairn_get_str(r->current, "path"), cairn_is_null(labels) ? NULL : cairn_map());
}

static cairn_value *import_resource(const char *type_name, const char *id) {
    (void)type_name;
    cairn_value *state = read_entry(id, NULL);
    if (state == NULL && !cairn_failed()) {
        cairn_error(NULL, "There is no kv entry at %s", id);
        cairn_detail("The import id of a kv_entry is its path, inside a read-write grant.");
    }
    return state;
}

static const cairn_provider kv = {
    .schema = schema,
    .validate = validate,
    .plan = plan,
    .apply = apply,
    .read = refresh,
    .import_resource = import_resource,
};

CAIRN_PROVIDER(kv, "kv", "0.1.0")
