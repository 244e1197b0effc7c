/* meshlint's C reader (meshlint/source/readers/native.py), for the documents most files hold.
 *
 * `read` walks libyaml's events and builds what the events reader (readers/events.py) builds from
 * PyYAML's: each document's data, and per container the marks of its entries (keyed by the
 * container's id), so that positions are made only when asked for. It takes the common case alone:
 * no anchor, alias, merge key, tag, directive, complex or repeated key, nothing deeper than the
 * limit, no syntax error, and nothing that releases of libyaml read differently (releases.h). For
 * any of those it returns None, and the Python readers read the whole text again, so every message
 * and mark of those cases stays theirs. Plain scalars that may be something other than a string are
 * resolved by the caller's YAML 1.1 function, so all readers resolve with one table; of those that
 * start with a letter, only the caller's words (booleans and null) are, so the others are strings
 * without a call. Plain decimal ints of up to 18 digits are the one type worked out here
 * (document.c's `plain_decimal`; tests/test_fastread.py holds them equal to the resolver's).
 *
 * `parses` is libyaml's parser alone: does the text parse (`readers.parses`)? It says no, so that
 * the text is composed, for what releases.h names too.
 */
#include "fastread.h"
#include "releases.h"

/* The text as UTF-8, as PyYAML hands it to libyaml. An ASCII text is its own UTF-8, lent as it is;
 * any other is encoded into `*held`, released by the caller, so that the text does not keep a second
 * copy of itself (which PyUnicode_AsUTF8AndSize would cache in it) for as long as it lives. */
static const char *utf8_of(PyObject *text, Py_ssize_t *size, PyObject **held) {
    *held = NULL;
    if (PyUnicode_IS_ASCII(text))
        return PyUnicode_AsUTF8AndSize(text, size);
    *held = PyUnicode_AsUTF8String(text);
    if (*held == NULL)
        return NULL;
    *size = PyBytes_GET_SIZE(*held);
    return PyBytes_AS_STRING(*held);
}

static PyObject *fast_read(PyObject *module, PyObject *args) {
    PyObject *text;
    Options options;
    if (!PyArg_ParseTuple(args, "UO!O!On", &text, &PyFrozenSet_Type, &options.firsts, &PyFrozenSet_Type, &options.words, &options.resolve, &options.max_depth))
        return NULL;
    options.text = text;
    Py_ssize_t size;
    PyObject *held;
    const char *utf8 = utf8_of(text, &size, &held);
    if (utf8 == NULL) { /* a lone surrogate: PyYAML's reader raises for it, and says so */
        PyErr_Clear();
        Py_RETURN_NONE;
    }
    Frame *stack = PyMem_Calloc((size_t)options.max_depth + 2, sizeof(Frame));
    PyObject *out = PyList_New(0);
    yaml_parser_t parser;
    if (stack == NULL || out == NULL || !yaml_parser_initialize(&parser)) {
        PyMem_Free(stack);
        Py_XDECREF(out);
        Py_XDECREF(held);
        return PyErr_NoMemory();
    }
    /* No encoding is set, as PyYAML sets none: libyaml takes a leading byte-order mark as one. */
    yaml_parser_set_input_string(&parser, (const unsigned char *)utf8, (size_t)size);
    int status = has_directive_line(utf8, size) ? NOT_MINE : 0;
    while (status == 0) {
        yaml_event_t event;
        if (!yaml_parser_parse(&parser, &event)) {
            status = NOT_MINE;
            break;
        }
        yaml_event_type_t type = event.type;
        yaml_event_delete(&event);
        if (type == YAML_STREAM_END_EVENT)
            break;
        if (type == YAML_DOCUMENT_START_EVENT)
            status = fastread_read_document(&parser, &options, stack, out);
    }
    yaml_parser_delete(&parser);
    PyMem_Free(stack);
    Py_XDECREF(held);
    if (status != 0) {
        Py_DECREF(out);
        if (status < 0)
            return NULL;
        Py_RETURN_NONE;
    }
    return out;
}

static PyObject *fast_parses(PyObject *module, PyObject *args) {
    PyObject *text;
    if (!PyArg_ParseTuple(args, "U", &text))
        return NULL;
    Py_ssize_t size;
    PyObject *held;
    const char *utf8 = utf8_of(text, &size, &held);
    if (utf8 == NULL) {
        PyErr_Clear();
        Py_RETURN_FALSE;
    }
    yaml_parser_t parser;
    if (!yaml_parser_initialize(&parser)) {
        Py_XDECREF(held);
        return PyErr_NoMemory();
    }
    yaml_parser_set_input_string(&parser, (const unsigned char *)utf8, (size_t)size);
    /* False sends the text to a reader that says why: so does all that releases of libyaml differ on. */
    int ok = !has_directive_line(utf8, size), done = !ok;
    Py_ssize_t depth = 0;
    Py_BEGIN_ALLOW_THREADS
    while (!done) {
        yaml_event_t event;
        if (!yaml_parser_parse(&parser, &event)) {
            ok = 0;
            break;
        }
        if (changed_between_releases(&event, depth, text)) { /* reads the str: immutable, and held */
            ok = 0;
            done = 1;
        }
        if (event.type == YAML_MAPPING_START_EVENT || event.type == YAML_SEQUENCE_START_EVENT)
            depth++;
        else if (event.type == YAML_MAPPING_END_EVENT || event.type == YAML_SEQUENCE_END_EVENT)
            depth--;
        done |= event.type == YAML_STREAM_END_EVENT;
        yaml_event_delete(&event);
    }
    Py_END_ALLOW_THREADS
    yaml_parser_delete(&parser);
    Py_XDECREF(held);
    return PyBool_FromLong(ok);
}

static PyMethodDef methods[] = {
    {"read", fast_read, METH_VARARGS,
     "read(text, first_characters, letter_words, resolve_plain, max_depth) -> [(root, root mark, end line, maps, seqs, starts)] or None"},
    {"parses", fast_parses, METH_VARARGS, "parses(text) -> does libyaml parse it?"},
    {NULL, NULL, 0, NULL},
};

static struct PyModuleDef module_def = {
    PyModuleDef_HEAD_INIT, "meshlint.source._fastread", "libyaml's events made into meshlint's documents, in C.", -1, methods,
};

PyMODINIT_FUNC PyInit__fastread(void) {
    if (PyType_Ready(&fastread_MarkType) < 0 || fastread_init_words() < 0)
        return NULL;
    PyObject *module = PyModule_Create(&module_def);
    if (module == NULL)
        return NULL;
    if (PyModule_AddStringConstant(module, "LIBYAML_VERSION", yaml_get_version_string()) < 0) {
        Py_DECREF(module);
        return NULL;
    }
    Py_INCREF(&fastread_MarkType);
    if (PyModule_AddObject(module, "Mark", (PyObject *)&fastread_MarkType) < 0) {
        Py_DECREF(&fastread_MarkType);
        Py_DECREF(module);
        return NULL;
    }
    return module;
}
