/* Checks src/collect/cpu/python_layout_311.h against CPython 3.11's own headers (compiled only
 * where /usr/include/python3.11/internal exists): a mismatch fails the build. */
#define Py_BUILD_CORE 1
#include <Python.h>
#include <internal/pycore_code.h>
#include <internal/pycore_frame.h>
#include <internal/pycore_runtime.h>
#include <stddef.h>

#include "collect/cpu/python_layout_311.h"

#if PY_MAJOR_VERSION != 3 || PY_MINOR_VERSION != 11
#error "the layout is CPython 3.11's"
#endif

#define SAME(a, b) _Static_assert((a) == (b), #a " != " #b)
SAME(offsetof(_PyRuntimeState, gilstate), NNPROF_PY311_RUNTIME_GILSTATE);
SAME(offsetof(struct _gilstate_runtime_state, tstate_current), NNPROF_PY311_GILSTATE_TSTATE_CURRENT);
SAME(offsetof(struct _gilstate_runtime_state, autoTSSkey), NNPROF_PY311_GILSTATE_AUTO_TSS_KEY);
SAME(offsetof(Py_tss_t, _is_initialized), NNPROF_PY311_TSS_IS_INITIALIZED);
SAME(offsetof(Py_tss_t, _key), NNPROF_PY311_TSS_KEY);
SAME(sizeof(((Py_tss_t*)0)->_key), 4);
SAME(offsetof(PyThreadState, cframe), NNPROF_PY311_TSTATE_CFRAME);
SAME(offsetof(PyThreadState, thread_id), NNPROF_PY311_TSTATE_THREAD_ID);
SAME(offsetof(PyThreadState, datastack_chunk), NNPROF_PY311_TSTATE_DATASTACK_CHUNK);
SAME(offsetof(PyThreadState, datastack_top), NNPROF_PY311_TSTATE_DATASTACK_TOP);
SAME(offsetof(_PyStackChunk, data), NNPROF_PY311_CHUNK_DATA);
SAME(offsetof(_PyCFrame, current_frame), NNPROF_PY311_CFRAME_CURRENT_FRAME);
SAME(offsetof(_PyInterpreterFrame, f_code), NNPROF_PY311_FRAME_CODE);
SAME(offsetof(_PyInterpreterFrame, previous), NNPROF_PY311_FRAME_PREVIOUS);
SAME(offsetof(_PyInterpreterFrame, prev_instr), NNPROF_PY311_FRAME_PREV_INSTR);
SAME(offsetof(_PyInterpreterFrame, is_entry), NNPROF_PY311_FRAME_IS_ENTRY);
SAME(offsetof(_PyInterpreterFrame, owner), NNPROF_PY311_FRAME_OWNER);
SAME(offsetof(_PyInterpreterFrame, localsplus), NNPROF_PY311_FRAME_SIZE);
SAME(FRAME_OWNED_BY_GENERATOR, NNPROF_PY311_FRAME_OWNED_BY_GENERATOR);
SAME(offsetof(PyObject, ob_type), NNPROF_PY311_OBJECT_TYPE);
SAME(offsetof(PyCodeObject, co_firstlineno), NNPROF_PY311_CODE_FIRSTLINENO);
SAME(offsetof(PyCodeObject, co_filename), NNPROF_PY311_CODE_FILENAME);
SAME(offsetof(PyCodeObject, co_qualname), NNPROF_PY311_CODE_QUALNAME);
SAME(offsetof(PyCodeObject, co_linetable), NNPROF_PY311_CODE_LINETABLE);
SAME(offsetof(PyCodeObject, _co_firsttraceable), NNPROF_PY311_CODE_FIRSTTRACEABLE);
SAME(offsetof(PyCodeObject, co_code_adaptive), NNPROF_PY311_CODE_CODE_ADAPTIVE);
SAME(sizeof(_Py_CODEUNIT), 2);
SAME(offsetof(PyVarObject, ob_size), NNPROF_PY311_BYTES_SIZE);
SAME(offsetof(PyBytesObject, ob_sval), NNPROF_PY311_BYTES_SVAL);
SAME(offsetof(PyASCIIObject, length), NNPROF_PY311_UNICODE_LENGTH);
SAME(offsetof(PyASCIIObject, state), NNPROF_PY311_UNICODE_STATE);
SAME(sizeof(PyASCIIObject), NNPROF_PY311_ASCII_DATA);
SAME(sizeof(PyCompactUnicodeObject), NNPROF_PY311_COMPACT_DATA);

int nnprof_python_layout_checked(void) { return 1; }
