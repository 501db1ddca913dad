"""PyTorch in nnprof: its operators as scopes, and each nn.Module call as a scope named by its
path in the model, forward and backward, so that operators nest under the layer that ran them.

    import nnprof, nnprof.torch
    handle = nnprof.torch.instrument(model)        # scopes "Model", "enc.layers.0.self_attn", ...
    with nnprof.torch.capture_operators():         # aten::addmm, AddmmBackward0, ... as scopes
        loss = model(x).sum(); loss.backward()
    handle.remove()
    nnprof.save("train.nnprof")

Importing this module imports torch; `import nnprof` alone does not.
"""
import os
import threading

import torch

from nnprof import _native

__all__ = ["capture_operators", "OperatorCapture", "instrument", "Instrumentation", "operators_active"]


def _loaded_libtorch():
    """The libtorch_cpu this process loaded (through torch), or None."""
    try:
        with open("/proc/self/maps") as maps:
            for line in maps:
                path = line.rstrip("\n").split(" ", 5)[-1].strip()
                if os.path.basename(path).startswith("libtorch_cpu.so"):
                    return path
    except OSError:
        pass
    return None


_observer = None  # nnprof._torch once loaded


def _observer_module():
    """nnprof._torch (libnnprof_torch), after checking it can share this process's LibTorch."""
    global _observer
    if _observer is not None:
        return _observer
    built_for = _native.torch_library
    if not built_for:
        raise _native.Error(
            "nnprof.torch: this nnprof was built without LibTorch (install libtorch-dev and rebuild it), "
            "so PyTorch operators cannot be recorded")
    loaded = _loaded_libtorch()
    if loaded is not None and os.path.realpath(loaded) != os.path.realpath(built_for):
        raise _native.Error(
            f"nnprof.torch: torch {torch.__version__} runs on {loaded}, but nnprof's operator observer was built "
            f"against {built_for}; loading it would bring a second LibTorch into the process. Rebuild nnprof "
            "against this torch's LibTorch")
    try:
        from nnprof import _torch
    except ImportError as e:
        raise _native.Error(
            f"nnprof.torch: could not load nnprof's operator observer libnnprof_torch ({e}); it is built with "
            f"libnnprof and installed beside it ({_native.library_directory() or 'its library directory'})") from e
    _observer = _torch
    return _torch


def operators_active():
    """Whether PyTorch operators are being recorded now (by capture_operators or `nnprof record`)."""
    return _observer_module().active()


class OperatorCapture:
    """Records every operator torch runs (aten::linear, aten::addmm, AddmmBackward0, a
    record_function block, ...) as a scope of the profiler, nested in the scopes open on the
    thread that runs it, with its input shapes, dtypes and FLOPs as span arguments.

    A context manager, or start()/stop(). Under `nnprof record`, whose agent already records
    operators into the global profiler, capturing into the global profiler does nothing more.
    """

    def __init__(self, profiler=None, record_shapes=True):
        self._profiler = profiler
        self._record_shapes = bool(record_shapes)
        self._observer = None

    def start(self):
        if self._observer is not None:
            raise RuntimeError("nnprof.torch: this operator capture is already started")
        module = _observer_module()
        if module.active():
            if self._profiler is None or self._profiler is _native.global_profiler():
                return self  # the agent of `nnprof record` (or another capture) records into it already
            raise RuntimeError(
                "nnprof.torch: PyTorch operators are already recorded into another profiler (one observer at a "
                "time): stop that capture first")
        self._observer = module.OpObserver(self._profiler, self._record_shapes)
        _Instrumented.capture_profiler = self._profiler if self._profiler is not None else _native.global_profiler()
        return self

    def stop(self):
        if self._observer is not None:
            self._observer = None  # its destructor stops recording
            _Instrumented.capture_profiler = None

    @property
    def active(self):
        return self._observer is not None

    def __enter__(self):
        return self.start()

    def __exit__(self, *exc):
        self.stop()
        return False


def capture_operators(profiler=None, record_shapes=True):
    """An OperatorCapture into `profiler` (the global one by default); use as a context manager
    (``with nnprof.torch.capture_operators():``) or call start() and stop()."""
    return OperatorCapture(profiler, record_shapes)


# ---- model-aware scopes -------------------------------------------------------------------
#
# Forward: each module's forward is wrapped (an instance attribute over the class's method), so
# that its scope closes also when forward raises, which a forward hook would not see.
#
# Backward: torch 1.13 has no backward pre-hook on modules. Two identity autograd Functions
# bound each module's backward instead: one applied to the module's outputs, whose backward runs
# when their gradients arrive (the module's backward begins), and one applied to its inputs,
# whose backward runs once the gradients of the inputs are computed (it ends). The CPU autograd
# engine runs ready nodes highest sequence number first, so the nodes created inside a module's
# forward, numbered between the two, run between them: the scopes nest as the forward calls did.
# A module none of whose inputs requires a gradient (the first layer) has no closing Function:
# its backward scope closes when the backward pass ends (a callback queued on the engine).
#
# Both Functions run inside the scopes the operator observer opens for every autograd node
# ("autograd::engine::evaluate_function: ..." and the node's own name). When those are
# recorded into the same profiler, the layer's scope is opened or closed outside them: they are
# stopped, the layer's scope opens (closes), and they are started again for the observer to close.

_state = threading.local()


def _open_backward_scopes():
    stack = getattr(_state, "open_backward", None)
    if stack is None:
        stack = _state.open_backward = []
    return stack


class _BackwardScope:
    """The backward scope of one module call: opened by NnprofBackwardBegins, closed by
    NnprofBackwardEnds."""

    __slots__ = ("scope", "profiler", "state")

    def __init__(self, scope, profiler):
        self.scope = scope
        self.profiler = profiler
        self.state = 0  # 0: not begun, 1: open, 2: closed


def _around_observer_scopes(cell, node_name, action, from_state):
    """Runs `action` (when `cell` is in `from_state`) outside the scopes the operator observer
    opened for this autograd node."""
    if cell.state != from_state:
        return
    profiler = cell.profiler
    observed = _observed_profiler() is profiler
    if observed:
        profiler.stop(node_name)
        profiler.stop("autograd::engine::evaluate_function: " + node_name)
    action(cell)
    if observed:
        profiler.start("autograd::engine::evaluate_function: " + node_name)
        profiler.start(node_name)


def _observed_profiler():
    """The profiler the operator observer records into, when it is one instrument() can see."""
    capture = _Instrumented.capture_profiler
    if capture is not None:
        return capture
    # Not started here: the agent of `nnprof record` (the same libnnprof_torch, loaded once)
    # records into the global profiler.
    global _no_observer
    if _no_observer:
        return None
    try:
        if _observer_module().active():
            return _native.global_profiler()
    except _native.Error:
        _no_observer = True  # no observer can run in this process: none records
    return None


_no_observer = False


def _begin(cell):
    cell.scope.__enter__()
    cell.state = 1
    _open_backward_scopes().append(cell)
    if not getattr(_state, "close_queued", False):
        _state.close_queued = True
        torch.autograd.Variable._execution_engine.queue_callback(_close_left_open)


def _end(cell):
    cell.scope.__exit__(None, None, None)
    cell.state = 2
    stack = _open_backward_scopes()
    if stack and stack[-1] is cell:
        stack.pop()
    elif cell in stack:
        stack.remove(cell)


def _close_left_open():
    # End of a backward pass: close, innermost first, the scopes of modules none of whose inputs
    # required a gradient (the first layers), and of those whose inputs got none
    # (torch.autograd.grad on part of the graph).
    _state.close_queued = False
    stack = _open_backward_scopes()
    while stack:
        cell = stack.pop()
        if cell.state == 1:
            cell.scope.__exit__(None, None, None)
            cell.state = 2


class NnprofBackwardBegins(torch.autograd.Function):
    @staticmethod
    def forward(ctx, cell, *outputs):
        ctx.cell = cell
        ctx.mark_non_differentiable(*[t for t in outputs if not t.requires_grad])
        return outputs

    @staticmethod
    def backward(ctx, *grads):
        _around_observer_scopes(ctx.cell, ctx.name(), _begin, 0)
        return (None, *grads)


class NnprofBackwardEnds(torch.autograd.Function):
    @staticmethod
    def forward(ctx, cell, *inputs):
        ctx.cell = cell
        ctx.mark_non_differentiable(*[t for t in inputs if not t.requires_grad])
        return inputs

    @staticmethod
    def backward(ctx, *grads):
        _around_observer_scopes(ctx.cell, ctx.name(), _end, 1)
        return (None, *grads)


def _tensors(value):
    """The tensors of a forward's argument or result (itself, or the items of a tuple or list), by position."""
    if isinstance(value, torch.Tensor):
        return [(None, value)]
    if isinstance(value, (tuple, list)):
        return [(i, v) for i, v in enumerate(value) if isinstance(v, torch.Tensor)]
    return []


def _replace(value, replaced):
    if isinstance(value, torch.Tensor):
        return replaced[0]
    items = list(value)
    for (i, _), t in zip(_tensors(value), replaced):
        items[i] = t
    return type(value)(items) if not hasattr(value, "_fields") else type(value)(*items)


class _Instrumented:
    capture_profiler = None  # set while an instrument()ed model's operators are captured into a known profiler


class Instrumentation:
    """What instrument() did to a model; remove() undoes it. Also a context manager."""

    def __init__(self, wrapped):
        self._wrapped = wrapped  # [(module, previous instance forward or None)]

    @property
    def paths(self):
        return [m.__dict__["forward"].__nnprof_path__ for m, _ in self._wrapped if "forward" in m.__dict__]

    def remove(self):
        for module, previous in self._wrapped:
            if previous is None:
                module.__dict__.pop("forward", None)
            else:
                module.__dict__["forward"] = previous
        self._wrapped = []

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.remove()
        return False


def instrument(model, *, profiler=None, name=None, backward=True):
    """Makes every call of each module of `model` a scope named by its path in the model
    ("encoder.layers.0.self_attn"; the model itself is named `name`, by default its class
    name), in the forward pass and, as "<path>.backward", in the backward pass. Operators
    recorded by capture_operators() then nest under the layer that ran them.

    Returns an Instrumentation; its remove() (or leaving it as a context manager) takes the
    scopes away again.
    """
    if not isinstance(model, torch.nn.Module):
        raise TypeError(f"nnprof.torch.instrument takes a torch.nn.Module, not {type(model).__name__}")
    make_scope = _native.scope if profiler is None else profiler.scope
    target = _native.global_profiler() if profiler is None else profiler
    root = name if name is not None else type(model).__name__
    wrapped = []
    for path, module in model.named_modules():
        label = path if path else root
        if isinstance(module.__dict__.get("forward"), _Timed):
            raise RuntimeError(f"nnprof.torch.instrument: module '{label}' is instrumented already")
        previous = module.__dict__.get("forward")
        module.__dict__["forward"] = _Timed(module.forward, label, make_scope, target, backward)
        wrapped.append((module, previous))
    return Instrumentation(wrapped)


class _Timed:
    """A module's forward, timed as a scope; its backward bounded by the two Functions above."""

    __slots__ = ("forward", "label", "backward_label", "make_scope", "profiler", "backward", "__nnprof_path__")

    def __init__(self, forward, label, make_scope, profiler, backward):
        self.forward = forward
        self.label = label
        self.backward_label = label + ".backward"
        self.make_scope = make_scope
        self.profiler = profiler
        self.backward = backward
        self.__nnprof_path__ = label
        make_scope(label)  # interns both names now
        make_scope(self.backward_label)

    def __call__(self, *args, **kwargs):
        if not (self.backward and torch.is_grad_enabled()):
            with self.make_scope(self.label):
                return self.forward(*args, **kwargs)
        cell = _BackwardScope(self.make_scope(self.backward_label), self.profiler)
        args, kwargs = _bound_inputs(cell, args, kwargs)
        with self.make_scope(self.label):
            result = self.forward(*args, **kwargs)
        outputs = _tensors(result)
        # CPU tensors only: the autograd engine runs a CUDA backward on a thread of its own and
        # its end-of-pass callbacks on the caller's, where that thread's scopes cannot close.
        if not any(t.requires_grad and t.device.type == "cpu" for _, t in outputs):
            return result
        replaced = NnprofBackwardBegins.apply(cell, *[t for _, t in outputs])
        return _replace(result, replaced)


def _bound_inputs(cell, args, kwargs):
    """The module's arguments, those that require a gradient passed through NnprofBackwardEnds.
    Without any, the backward scope closes when the backward pass ends (_close_left_open):
    such a module is the first the forward pass ran, so the last the backward pass reaches."""
    positions = [i for i, a in enumerate(args) if isinstance(a, torch.Tensor) and a.requires_grad]
    keys = [k for k, a in kwargs.items() if isinstance(a, torch.Tensor) and a.requires_grad]
    if any(a.device.type != "cpu" for a in [*(args[i] for i in positions), *(kwargs[k] for k in keys)]):
        return args, kwargs  # see _Timed.__call__: the backward of CUDA tensors is not bounded
    if not positions and not keys:
        return args, kwargs
    bounded = NnprofBackwardEnds.apply(cell, *[args[i] for i in positions], *[kwargs[k] for k in keys])
    args = list(args)
    for i, t in zip(positions, bounded):
        args[i] = t
    if keys:
        kwargs = dict(kwargs)
        for k, t in zip(keys, bounded[len(positions):]):
            kwargs[k] = t
    return tuple(args), kwargs
