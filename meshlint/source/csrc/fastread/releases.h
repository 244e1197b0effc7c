/* What releases of libyaml read differently, for module.c and document.c (inline: asked of every
 * event). */
#ifndef MESHLINT_FASTREAD_RELEASES_H
#define MESHLINT_FASTREAD_RELEASES_H

#include "fastread.h"

/* Does the flow mapping that starts at this mark (libyaml counts characters) open with `{`? One
 * that does not is a single pair in a flow sequence. */
static inline int opens_with_brace(PyObject *text, size_t index) {
    return (Py_ssize_t)index < PyUnicode_GET_LENGTH(text) && PyUnicode_READ_CHAR(text, (Py_ssize_t)index) == '{';
}

/* This reader links the system's libyaml, PyYAML its own copy, which may be of another release
 * (Debian's 0.2.5 against PyYAML 6.0.4's later one). Where the releases between them changed what
 * parses, both readers leave the text to PyYAML: a single-pair mapping in a flow sequence (`[a: 1]`,
 * `[?]]`), a tag (flow indicators in local tags), a directive (a document end before one), and
 * nesting past the limit (later releases stop at 1000 levels). */
#define NESTING_LIMIT 200

static inline int changed_between_releases(const yaml_event_t *event, Py_ssize_t depth, PyObject *text) {
    switch (event->type) { /* a directive is found in the text (`has_directive_line`), before any event */
    case YAML_MAPPING_START_EVENT:
        return event->data.mapping_start.tag != NULL || depth >= NESTING_LIMIT ||
               (event->data.mapping_start.style == YAML_FLOW_MAPPING_STYLE && !opens_with_brace(text, event->start_mark.index));
    case YAML_SEQUENCE_START_EVENT:
        return event->data.sequence_start.tag != NULL || depth >= NESTING_LIMIT;
    case YAML_SCALAR_EVENT:
        return event->data.scalar.tag != NULL;
    default:
        return 0;
    }
}

/* A line that starts with `%` (a directive, or what a release takes for one). */
static inline int has_directive_line(const char *text, Py_ssize_t size) {
    for (Py_ssize_t i = 0; i < size; i++)
        if (text[i] == '%' && (i == 0 || text[i - 1] == '\n' || text[i - 1] == '\r'))
            return 1;
    return 0;
}

#endif
