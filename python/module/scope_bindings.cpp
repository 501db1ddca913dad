// Scopes from Python: `with nnprof.scope("step"):` and the decorator built on it.
//
// Written against the CPython API rather than pybind11: a `with` block costs a call to
// scope(name), __enter__ and __exit__, and pybind11's argument dispatch would be most of that.
// Each name is interned once into an immortal nnprof::SourceLocation (a dict lookup on the
// name's cached hash afterwards), and the scope opens through ProfileGuard's fast form, as
// NNPROF_SCOPE does in C++.
#include <deque>
#include <new>
#include <string>

#include <nnprof/nnprof.hpp>

#include "bindings.hpp"

namespace py = pybind11;

namespace nnprof::python {
namespace {

/// Interned call sites. Never freed: a profile's call-tree nodes point at them for as long as
/// the process lives, whichever profiler recorded them.
struct SiteRegistry {
  std::deque<std::string> names;
  std::deque<SourceLocation> sites;
  PyObject* by_name = nullptr;  ///< dict: str -> int (the site's address)
};

SiteRegistry& registry() {
  static auto* r = new SiteRegistry{};
  return *r;
}

/// The interned site of `name` (a str); nullptr with a Python error set.
const SourceLocation* site_of(PyObject* name) {
  SiteRegistry& r = registry();
  if (PyObject* address = PyDict_GetItemWithError(r.by_name, name)) [[likely]]
    return static_cast<const SourceLocation*>(PyLong_AsVoidPtr(address));
  if (PyErr_Occurred()) return nullptr;
  if (!PyUnicode_Check(name)) {
    PyErr_Format(PyExc_TypeError, "nnprof: a scope name must be a str, not %.100s", Py_TYPE(name)->tp_name);
    return nullptr;
  }
  Py_ssize_t size = 0;
  const char* utf8 = PyUnicode_AsUTF8AndSize(name, &size);
  if (utf8 == nullptr) return nullptr;
  if (size == 0) {
    PyErr_SetString(PyExc_ValueError, "nnprof: a scope name must not be empty");
    return nullptr;
  }
  const std::string& stored = r.names.emplace_back(utf8, static_cast<std::size_t>(size));
  const SourceLocation* site = &r.sites.emplace_back(SourceLocation{stored.c_str(), "", "", 0});
  PyObject* address = PyLong_FromVoidPtr(const_cast<SourceLocation*>(site));
  if (address == nullptr) return nullptr;
  const int failed = PyDict_SetItem(r.by_name, name, address);
  Py_DECREF(address);
  return failed == 0 ? site : nullptr;
}

struct ScopeObject {
  PyObject_HEAD
  Profiler* profiler;
  PyObject* owner;  ///< the Python Profiler that owns `profiler` (kept alive), or nullptr: the global one
  const SourceLocation* site;
  unsigned long thread;  ///< the thread that entered it
  bool open;
  alignas(ProfileGuard) unsigned char guard[sizeof(ProfileGuard)];
};

ProfileGuard* guard_of(ScopeObject* self) { return std::launder(reinterpret_cast<ProfileGuard*>(self->guard)); }

void scope_dealloc(PyObject* object) {
  auto* self = reinterpret_cast<ScopeObject*>(object);
  if (self->open) guard_of(self)->~ProfileGuard();
  Py_XDECREF(self->owner);
  PyTypeObject* type = Py_TYPE(object);
  PyObject_Free(object);
  Py_DECREF(type);  // instances of a heap type hold a reference to it
}

PyObject* scope_enter(PyObject* object, PyObject*) {
  auto* self = reinterpret_cast<ScopeObject*>(object);
  if (self->open) {
    PyErr_Format(PyExc_RuntimeError,
                 "nnprof: scope '%s' is already open: a scope object times one block at a time "
                 "(write `with nnprof.scope(name):` for each block)",
                 self->site->name);
    return nullptr;
  }
  new (self->guard) ProfileGuard(*self->profiler, *self->site);
  self->open = true;
  self->thread = PyThread_get_thread_ident();
  Py_INCREF(object);
  return object;
}

PyObject* scope_exit(PyObject* object, PyObject* const*, Py_ssize_t) {
  auto* self = reinterpret_cast<ScopeObject*>(object);
  if (self->open) {
    if (self->thread != PyThread_get_thread_ident()) {
      PyErr_Format(PyExc_RuntimeError, "nnprof: scope '%s' was entered on another thread and cannot close on this one",
                   self->site->name);
      return nullptr;
    }
    guard_of(self)->~ProfileGuard();
    self->open = false;
  }
  Py_RETURN_FALSE;  // exceptions raised in the block go on
}

PyObject* scope_add_flops(PyObject* object, PyObject* args, PyObject* kwargs) {
  auto* self = reinterpret_cast<ScopeObject*>(object);
  static const char* keywords[] = {"flops", "bytes", nullptr};
  double flops = 0;
  unsigned long long bytes = 0;
  if (!PyArg_ParseTupleAndKeywords(args, kwargs, "d|K:add_flops", const_cast<char**>(keywords), &flops, &bytes))
    return nullptr;
  if (!self->open) {
    PyErr_SetString(PyExc_RuntimeError, "nnprof: add_flops on a scope that is not open");
    return nullptr;
  }
  guard_of(self)->add_flops(flops, bytes);
  Py_RETURN_NONE;
}

PyObject* scope_arg(PyObject* object, PyObject* const* args, Py_ssize_t nargs) {
  auto* self = reinterpret_cast<ScopeObject*>(object);
  if (nargs != 2 || !PyUnicode_Check(args[0])) {
    PyErr_SetString(PyExc_TypeError, "nnprof: arg(key: str, value: str | int | float)");
    return nullptr;
  }
  if (!self->open) {
    PyErr_SetString(PyExc_RuntimeError, "nnprof: arg on a scope that is not open");
    return nullptr;
  }
  const char* key = PyUnicode_AsUTF8(args[0]);
  if (key == nullptr) return nullptr;
  PyObject* value = args[1];
  if (PyBool_Check(value) || PyLong_Check(value)) {
    const long long v = PyLong_AsLongLong(value);
    if (v == -1 && PyErr_Occurred()) return nullptr;
    guard_of(self)->arg(key, static_cast<std::int64_t>(v));
  } else if (PyFloat_Check(value)) {
    guard_of(self)->arg(key, PyFloat_AsDouble(value));
  } else if (PyUnicode_Check(value)) {
    const char* text = PyUnicode_AsUTF8(value);
    if (text == nullptr) return nullptr;
    guard_of(self)->arg(key, std::string_view(text));
  } else {
    PyErr_Format(PyExc_TypeError, "nnprof: a scope argument is a str, int or float, not %.100s",
                 Py_TYPE(value)->tp_name);
    return nullptr;
  }
  Py_RETURN_NONE;
}

PyObject* scope_name(PyObject* object, void*) {
  return PyUnicode_FromString(reinterpret_cast<ScopeObject*>(object)->site->name);
}
PyObject* scope_is_open(PyObject* object, void*) { return PyBool_FromLong(reinterpret_cast<ScopeObject*>(object)->open); }

PyObject* scope_repr(PyObject* object) {
  auto* self = reinterpret_cast<ScopeObject*>(object);
  return PyUnicode_FromFormat("<nnprof.Scope '%s'%s>", self->site->name, self->open ? " open" : "");
}

PyMethodDef scope_methods[] = {
    {"__enter__", scope_enter, METH_NOARGS, "Opens the scope."},
    {"__exit__", reinterpret_cast<PyCFunction>(reinterpret_cast<void (*)()>(scope_exit)), METH_FASTCALL,
     "Closes the scope; an exception raised in the block goes on."},
    {"add_flops", reinterpret_cast<PyCFunction>(reinterpret_cast<void (*)()>(scope_add_flops)),
     METH_VARARGS | METH_KEYWORDS, "add_flops(flops, bytes=0): declares work done in this open scope."},
    {"arg", reinterpret_cast<PyCFunction>(reinterpret_cast<void (*)()>(scope_arg)), METH_FASTCALL,
     "arg(key, value): attaches key=value (str, int or float) to this open scope's span."},
    {nullptr, nullptr, 0, nullptr}};

PyGetSetDef scope_getset[] = {{"name", scope_name, nullptr, "The scope's name.", nullptr},
                              {"open", scope_is_open, nullptr, "Whether the scope is open now.", nullptr},
                              {nullptr, nullptr, nullptr, nullptr, nullptr}};

PyType_Slot scope_slots[] = {
    {Py_tp_dealloc, reinterpret_cast<void*>(scope_dealloc)},
    {Py_tp_repr, reinterpret_cast<void*>(scope_repr)},
    {Py_tp_methods, scope_methods},
    {Py_tp_getset, scope_getset},
    {Py_tp_doc, const_cast<char*>(
                    "A scope of a profiler: `with nnprof.scope(name):` times the block, also when it raises. Made by "
                    "nnprof.scope(name) or Profiler.scope(name); one object times one block at a time.")},
    {0, nullptr}};

PyType_Spec scope_spec = {"nnprof.Scope", sizeof(ScopeObject), 0, Py_TPFLAGS_DEFAULT, scope_slots};

/// The Scope type (a heap type, made by bind_scopes; never freed).
PyTypeObject* scope_type = nullptr;

/// nnprof.scope(name): a scope of the global profiler.
PyObject* global_scope(PyObject*, PyObject* name) {
  const SourceLocation* site = site_of(name);
  if (site == nullptr) return nullptr;
  ScopeObject* self = PyObject_New(ScopeObject, scope_type);
  if (self == nullptr) return nullptr;
  self->profiler = &global_profiler();
  self->owner = nullptr;
  self->site = site;
  self->thread = 0;
  self->open = false;
  return reinterpret_cast<PyObject*>(self);
}

PyMethodDef global_scope_def = {
    "scope", global_scope, METH_O,
    "scope(name) -> Scope\n\nA scope of the global profiler, for `with nnprof.scope(\"step\"):`. The block is "
    "timed also when it raises; scopes opened inside it nest under it."};

/// Profiler.scope(name): as global_scope, for the Profiler `object` (a method descriptor, so
/// that the call skips pybind11's dispatch).
PyObject* profiler_scope(PyObject* object, PyObject* name) {
  Profiler* profiler = nullptr;
  try {
    profiler = &py::cast<Profiler&>(py::handle(object));
  } catch (py::error_already_set& e) {
    e.restore();
    return nullptr;
  } catch (const std::exception& e) {
    PyErr_SetString(PyExc_TypeError, e.what());
    return nullptr;
  }
  const SourceLocation* site = site_of(name);
  if (site == nullptr) return nullptr;
  ScopeObject* self = PyObject_New(ScopeObject, scope_type);
  if (self == nullptr) return nullptr;
  self->profiler = profiler;
  Py_INCREF(object);
  self->owner = object;
  self->site = site;
  self->thread = 0;
  self->open = false;
  return reinterpret_cast<PyObject*>(self);
}

PyMethodDef profiler_scope_def = {"scope", profiler_scope, METH_O,
                                  "scope(name) -> Scope\n\nA scope of this profiler, for `with profiler.scope(name):`."};

}  // namespace

void add_profiler_scope_method(py::handle profiler_type) {
  PyObject* method = PyDescr_NewMethod(reinterpret_cast<PyTypeObject*>(profiler_type.ptr()), &profiler_scope_def);
  if (method == nullptr) throw py::error_already_set();
  const int failed = PyObject_SetAttrString(profiler_type.ptr(), "scope", method);
  Py_DECREF(method);
  if (failed != 0) throw py::error_already_set();
}

void bind_scopes(py::module_& m) {
  scope_type = reinterpret_cast<PyTypeObject*>(PyType_FromSpec(&scope_spec));
  if (scope_type == nullptr) throw py::error_already_set();
  registry().by_name = PyDict_New();
  if (registry().by_name == nullptr) throw py::error_already_set();
  m.add_object("Scope", reinterpret_cast<PyObject*>(scope_type));
  PyObject* scope = PyCFunction_NewEx(&global_scope_def, nullptr, m.attr("__name__").ptr());
  if (scope == nullptr) throw py::error_already_set();
  m.add_object("scope", scope);
}

}  // namespace nnprof::python
